#!/usr/bin/env bash
# call 5 of session 11: how soon a compile typed over stops on the H200 (Triton's compiles)
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"; nproc; } > $OUT/call5_env.txt 2>&1
timeout 400 python3 benchmarks/cancel_latency.py --device cuda 2>&1 | grep -v Warning > $OUT/call5_cancel_latency.txt
cat $OUT/call5_cancel_latency.txt
