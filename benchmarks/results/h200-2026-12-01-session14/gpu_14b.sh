#!/usr/bin/env bash
# session 14, call B (the tree of 729940d): the whole latency benchmark
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
python3 -m compileall -q /tmp/site > /dev/null 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD
t0=$(date +%s)
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; python3 -c "import sys, torch, triton; print('python', sys.version.split()[0], 'torch', torch.__version__, 'triton', triton.__version__)"; nproc; } > $OUT/callB_env.txt 2>&1
timeout 420 python3 benchmarks/tui_latency.py --device cuda --edits 10 --out $OUT/callB_latency.json > $OUT/callB_latency.txt 2>$OUT/callB_latency.log
echo "latency rc=$? $(( $(date +%s)-t0 ))s"; cat $OUT/callB_latency.txt
