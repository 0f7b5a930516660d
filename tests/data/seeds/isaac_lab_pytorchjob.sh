/isaac-sim/python.sh -m torch.distributed.run \
  --nproc_per_node=${JOB_GPUS} \
  --nnodes=${JOB_NUM_NODES} \
  --node_rank=$$RANK \
  --rdzv_id=isaaclab-job \
  --rdzv_backend=c10d \
  --rdzv_endpoint=$$MASTER_ADDR:$$MASTER_PORT \
  run_train.py \
  --distributed \
  --task=${TASK} \
  --max_iterations=${MAX_ITERATIONS} \
  --headless \
  $$RESUME_FLAG
