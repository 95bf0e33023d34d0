#!/usr/bin/env bash
# session 17, call E (the tree of call D): five launches with every process's start-up events
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
python3 -m compileall -q /tmp/site > /dev/null 2>&1
export PYTHONUNBUFFERED=1
t0=$(date +%s)
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; uptime; } > $OUT/s17E_env.txt 2>&1
TIMELINE_FILE=$OUT/s17E_timeline.tsv PYTHONPATH=$PWD/benchmarks/timeline:/tmp/site:$PWD timeout 170 python3 benchmarks/tui_latency.py --device cuda --only frame --launches 5 --out $OUT/s17E_frame.json > $OUT/s17E_frame.txt 2>/dev/null
echo "frame rc=$? $(( $(date +%s)-t0 ))s"; cat $OUT/s17E_frame.txt
PYTHONPATH=/tmp/site:$PWD python3 benchmarks/timeline/show_start.py $OUT/s17E_timeline.tsv > $OUT/s17E_start.txt 2>&1
grep -E "== launch|torch imported|ready sent|handle>|seen" $OUT/s17E_start.txt
