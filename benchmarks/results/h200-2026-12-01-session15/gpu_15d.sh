#!/usr/bin/env bash
# session 15, call D (the tree of 1ffae28): the whole latency benchmark, 20 new chains each beside
# a bare compile in turns
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
python3 -m compileall -q /tmp/site > /dev/null 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD
t0=$(date +%s)
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; python3 -c "import sys, torch, triton; print('python', sys.version.split()[0], 'torch', torch.__version__, 'triton', triton.__version__)"; nproc; uptime; } > $OUT/callD_env.txt 2>&1
timeout 500 python3 benchmarks/tui_latency.py --device cuda --edits 20 --out $OUT/callD_latency.json > $OUT/callD_latency.txt 2>$OUT/callD_latency.log
echo "latency rc=$? $(( $(date +%s)-t0 ))s"; cat $OUT/callD_latency.txt
