#!/usr/bin/env bash
# session 24, call D: the edit round with every process's events, each new chain's bare sibling compiled twice in turns, once while the benchmark polls the screen as it does during the app's compile
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
python3 -m compileall -q /tmp/site > /dev/null 2>&1
export PYTHONUNBUFFERED=1
t0=$(date +%s)
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; uptime; lscpu | grep -E "Model name|MHz"; sha1sum benchmarks/tui_latency.py probes/__init__.py probes/compiling.py probes/worker.py probes/timing.py probes/measure.py tui/app.py; } > $OUT/s24D_env.txt 2>&1
TIMELINE_FILE=$OUT/s24D_timeline.tsv PYTHONPATH=$PWD/benchmarks/timeline:/tmp/site:$PWD timeout 240 python3 benchmarks/tui_latency.py --device cuda --edits 20 --pause-s 0 --only edit --out $OUT/s24D_edit.json > $OUT/s24D_edit.txt 2>/dev/null
echo "edit rc=$? $(( $(date +%s)-t0 ))s"; cat $OUT/s24D_edit.txt
PYTHONPATH=/tmp/site:$PWD python3 benchmarks/timeline/show.py $OUT/s24D_timeline.tsv --compiled > $OUT/s24D_phases.txt 2>&1
cat $OUT/s24D_phases.txt
