#!/usr/bin/env bash
# session 15, call E (the tree of 1ffae28): the edit round, 20 new chains beside bare compiles in
# turns, with every process's events (benchmarks/timeline)
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
python3 -m compileall -q /tmp/site > /dev/null 2>&1
export PYTHONUNBUFFERED=1
t0=$(date +%s)
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; uptime; } > $OUT/callE_env.txt 2>&1
TIMELINE_FILE=$OUT/callE_timeline.tsv PYTHONPATH=$PWD/benchmarks/timeline:/tmp/site:$PWD timeout 300 python3 benchmarks/tui_latency.py --device cuda --edits 20 --pause-s 0 --only edit --out $OUT/callE_edit.json > $OUT/callE_edit.txt 2>/dev/null
echo "edit rc=$? $(( $(date +%s)-t0 ))s"; cat $OUT/callE_edit.txt
PYTHONPATH=/tmp/site:$PWD python3 benchmarks/timeline/show.py $OUT/callE_timeline.tsv --compiled > $OUT/callE_compiled_phases.txt 2>&1
cat $OUT/callE_compiled_phases.txt
