#!/usr/bin/env bash
# session 22, call C: does the compile worker skip the warm-up after a pause, the eager worker having timed the same edit?
# An edit round with every process's events: 6 new chains, 6 hits, one new chain after 5 s idle.
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
python3 -m compileall -q /tmp/site > /dev/null 2>&1
export PYTHONUNBUFFERED=1
t0=$(date +%s)
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; uptime; sha1sum probes/timing.py probes/device_lock.py; } > $OUT/s22C_env.txt 2>&1
TIMELINE_FILE=$OUT/s22C_timeline.tsv PYTHONPATH=$PWD/benchmarks/timeline:/tmp/site:$PWD timeout 200 python3 benchmarks/tui_latency.py --device cuda --edits 6 --pause-s 5 --only edit --out $OUT/s22C_edit.json > $OUT/s22C_edit.txt 2>/dev/null
echo "edit rc=$? $(( $(date +%s)-t0 ))s"; cat $OUT/s22C_edit.txt
PYTHONPATH=/tmp/site:$PWD python3 benchmarks/timeline/show.py $OUT/s22C_timeline.tsv --compiled > $OUT/s22C_phases.txt 2>&1
cat $OUT/s22C_phases.txt
PYTHONPATH=/tmp/site:$PWD timeout 150 python3 lab/s22/compiled_parts.py cuda 1e6 > $OUT/s22C_compiled_parts.txt 2>&1
echo "parts rc=$? $(( $(date +%s)-t0 ))s"; grep -v "Warn\|USDT" $OUT/s22C_compiled_parts.txt | tail -40
