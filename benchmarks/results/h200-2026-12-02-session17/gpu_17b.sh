#!/usr/bin/env bash
# session 17, call B: where the tool's compile is longer than a bare one (lab/compile_parts_ab.py),
# then three launches with every process's start-up events (first eager rows)
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
python3 -m compileall -q /tmp/site > /dev/null 2>&1
export PYTHONUNBUFFERED=1
t0=$(date +%s)
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; uptime; } > $OUT/s17B_env.txt 2>&1
PYTHONPATH=/tmp/site:$PWD timeout 150 python3 lab/compile_parts_ab.py 20 2>&1 | grep -v USDT > $OUT/s17B_parts.txt
echo "parts rc=$? $(( $(date +%s)-t0 ))s"; tail -7 $OUT/s17B_parts.txt
TIMELINE_FILE=$OUT/s17B_timeline.tsv PYTHONPATH=$PWD/benchmarks/timeline:/tmp/site:$PWD timeout 150 python3 benchmarks/tui_latency.py --device cuda --only frame --launches 4 --out $OUT/s17B_frame.json > $OUT/s17B_frame.txt 2>/dev/null
echo "frame rc=$? $(( $(date +%s)-t0 ))s"; cat $OUT/s17B_frame.txt
PYTHONPATH=/tmp/site:$PWD python3 benchmarks/timeline/show_start.py $OUT/s17B_timeline.tsv > $OUT/s17B_start.txt 2>&1
cat $OUT/s17B_start.txt | head -70
