#!/usr/bin/env bash
# session 24, call C: the edit round again on 784a250 with every process's events (benchmarks/timeline): where a new chain's compiled rows lose time against the bare compile of its sibling
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
python3 -m compileall -q /tmp/site > /dev/null 2>&1
export PYTHONUNBUFFERED=1
t0=$(date +%s)
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; uptime; lscpu | grep -E "Model name|MHz"; sha1sum probes/__init__.py probes/compiling.py probes/worker.py probes/timing.py probes/measure.py tui/app.py; } > $OUT/s24C_env.txt 2>&1
TIMELINE_FILE=$OUT/s24C_timeline.tsv PYTHONPATH=$PWD/benchmarks/timeline:/tmp/site:$PWD timeout 240 python3 benchmarks/tui_latency.py --device cuda --edits 16 --pause-s 0 --only edit --out $OUT/s24C_edit.json > $OUT/s24C_edit.txt 2>/dev/null
echo "edit rc=$? $(( $(date +%s)-t0 ))s"; cat $OUT/s24C_edit.txt
PYTHONPATH=/tmp/site:$PWD python3 benchmarks/timeline/show.py $OUT/s24C_timeline.tsv --compiled > $OUT/s24C_phases.txt 2>&1
cat $OUT/s24C_phases.txt
