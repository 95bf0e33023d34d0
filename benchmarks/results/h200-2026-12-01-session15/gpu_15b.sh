#!/usr/bin/env bash
# session 15, call B: two workers' start at once against one alone (the bytecode cache filled
# first); the edit round with 20 new chains, each beside a bare compile in turns
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
python3 -m compileall -q /tmp/site > /dev/null 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD
t0=$(date +%s)
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; python3 -c "import sys, torch, triton; print('python', sys.version.split()[0], 'torch', torch.__version__, 'triton', triton.__version__)"; nproc; uptime; } > $OUT/callB_env.txt 2>&1
timeout 200 python3 lab/gpu/pair_start.py 8 > $OUT/callB_pair_start.txt 2>&1
echo "pair rc=$? $(( $(date +%s)-t0 ))s"; cat $OUT/callB_pair_start.txt
timeout 330 python3 benchmarks/tui_latency.py --device cuda --edits 20 --only edit --out $OUT/callB_edit.json > $OUT/callB_edit.txt 2>$OUT/callB_edit.log
echo "edit rc=$? $(( $(date +%s)-t0 ))s"; cat $OUT/callB_edit.txt
