#!/usr/bin/env bash
# call 6 of session 11: does any of the tool's wrappers make its compile slower than a bare one (H200)
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"; nproc; } > $OUT/call6_env.txt 2>&1
for round in 1 2; do timeout 200 python3 benchmarks/results/vm-2026-12-01-compile-overhead/compile_bisect.py 2>&1 | grep -v Warning; done > $OUT/call6_compile_bisect.txt
cat $OUT/call6_compile_bisect.txt
