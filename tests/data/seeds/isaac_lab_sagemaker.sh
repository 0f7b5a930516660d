/isaac-sim/python.sh -m torch.distributed.run \
  --nproc_per_node=$NPROC \
  --nnodes=$NNODES \
  --node_rank=$NODE_RANK \
  --rdzv_id=sm-isaaclab \
  --rdzv_backend=c10d \
  --rdzv_endpoint=$MASTER_HOST:$MASTER_PORT \
  run_train.py \
  --distributed \
  --task=${TASK:-Isaac-Velocity-Rough-H1-v0} \
  --max_iterations=${MAX_ITERATIONS:-1000} \
  --headless \
  $RESUME_FLAG
