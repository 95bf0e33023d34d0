#!/usr/bin/env bash
# session 15, call A: two workers' start at once against one alone; the whole latency benchmark with
# bare compiles in turns with the app's
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
python3 -m compileall -q /tmp/site > /dev/null 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD
t0=$(date +%s)
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; python3 -c "import sys, torch, triton; print('python', sys.version.split()[0], 'torch', torch.__version__, 'triton', triton.__version__)"; nproc; uptime; } > $OUT/callA_env.txt 2>&1
timeout 150 python3 lab/gpu/pair_start.py 8 > $OUT/callA_pair_start.txt 2>&1
echo "pair rc=$? $(( $(date +%s)-t0 ))s"; tail -3 $OUT/callA_pair_start.txt
timeout 400 python3 benchmarks/tui_latency.py --device cuda --edits 10 --out $OUT/callA_latency.json > $OUT/callA_latency.txt 2>$OUT/callA_latency.log
echo "latency rc=$? $(( $(date +%s)-t0 ))s"; cat $OUT/callA_latency.txt
