#!/bin/bash
# The Batch seed's launcher shape with real torch: two `trainvisor run` processes on loopback, no
# node rank and no platform, `--rdzv-backend c10d --rdzv-endpoint 127.0.0.1:PORT`, two workers
# each (examples/ddp_example.py, gloo on CPU): prints each node's rank line and rank 0's result.
#   bench/join_order_ranks.sh TRAINVISOR_BINARY [OUT_DIR]
set -u
bin=${1:?usage: bench/join_order_ranks.sh TRAINVISOR_BINARY [OUT_DIR]}
out=${2:-$(mktemp -d)}
echo "torch $(python3 -c 'import torch; print(torch.__version__)')"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
for n in a b; do
  (
    timeout 120 "$bin" run --nnodes 2 --nproc-per-node 2 --rdzv-backend c10d \
      --rdzv-endpoint "127.0.0.1:$port" --rdzv-id seed-batch --preflight none --gpu-health off \
      examples/ddp_example.py --seconds 2 >"$out/node_$n.log" 2>&1
    echo "exit $?" >>"$out/node_$n.log"
  ) &
done
wait
for n in a b; do
  echo "-- node $n"
  grep -E "node rank|result=|^exit" "$out/node_$n.log" | cut -c1-200
done
