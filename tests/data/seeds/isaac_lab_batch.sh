torchrun \
  --nnodes=$AWS_BATCH_JOB_NUM_NODES \
  --nproc_per_node=$NUM_GPUS \
  --rdzv_backend=c10d \
  --rdzv_endpoint=$MASTER_ADDR:5555 \
  train.py ...
