#!/usr/bin/env bash
# session 17, call C (the tree of 1f58c7f + lab): the worker's start with the driver's context
# made beside import torch (lab/early_ctx_ab.py), then four launches with every process's events
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
python3 -m compileall -q /tmp/site > /dev/null 2>&1
export PYTHONUNBUFFERED=1
t0=$(date +%s)
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; uptime; } > $OUT/s17C_env.txt 2>&1
TIMELINE_FILE=$OUT/s17C_timeline.tsv PYTHONPATH=$PWD/benchmarks/timeline:/tmp/site:$PWD timeout 170 python3 benchmarks/tui_latency.py --device cuda --only frame --launches 5 --out $OUT/s17C_frame.json > $OUT/s17C_frame.txt 2>/dev/null
echo "frame rc=$? $(( $(date +%s)-t0 ))s"; cat $OUT/s17C_frame.txt
PYTHONPATH=/tmp/site:$PWD python3 benchmarks/timeline/show_start.py $OUT/s17C_timeline.tsv > $OUT/s17C_start.txt 2>&1
grep -E "== launch|torch imported|ready sent|handle>|seen" $OUT/s17C_start.txt
PYTHONPATH=/tmp/site:$PWD timeout 120 python3 lab/early_ctx_ab.py 5 > $OUT/s17C_early_ctx.txt 2>&1
echo "early ctx rc=$? $(( $(date +%s)-t0 ))s"; tail -5 $OUT/s17C_early_ctx.txt
