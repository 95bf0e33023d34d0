#!/usr/bin/env bash
# session 12, call 7 (the tree of the GC commit, the timeline marking more): the whole latency benchmark only
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
python3 -m compileall -q /tmp/site > /dev/null 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD
t0=$(date +%s)
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; python3 -c "import sys, torch, triton; print('python', sys.version.split()[0], 'torch', torch.__version__, 'triton', triton.__version__)"; nproc; } > $OUT/call7_env.txt 2>&1
timeout 300 python3 benchmarks/tui_latency.py --device cuda --edits 10 --out $OUT/call7_latency.json > $OUT/call7_latency.txt 2>$OUT/call7_latency.log
echo "latency rc=$? $(( $(date +%s)-t0 ))s"; cat $OUT/call7_latency.txt
