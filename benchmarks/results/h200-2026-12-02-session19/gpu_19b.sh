#!/usr/bin/env bash
# session 19, call B (c24a48d, the last stop's final code): the whole latency benchmark, then
# the edit round with every process's events
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
python3 -m compileall -q /tmp/site > /dev/null 2>&1
export PYTHONUNBUFFERED=1
t0=$(date +%s)
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; PYTHONPATH=/tmp/site python3 -c "import sys, torch, triton; print('python', sys.version.split()[0], 'torch', torch.__version__, 'triton', triton.__version__)"; nproc; uptime; git log --oneline -1; } > $OUT/s19B_env.txt 2>&1
PYTHONPATH=/tmp/site:$PWD timeout 220 python3 benchmarks/tui_latency.py --device cuda --edits 20 --out $OUT/s19B_latency.json > $OUT/s19B_latency.txt 2>/dev/null
echo "latency rc=$? $(( $(date +%s)-t0 ))s"; cat $OUT/s19B_latency.txt
TIMELINE_FILE=$OUT/s19B_timeline.tsv PYTHONPATH=$PWD/benchmarks/timeline:/tmp/site:$PWD timeout 100 python3 benchmarks/tui_latency.py --device cuda --edits 20 --pause-s 0 --only edit --out $OUT/s19B_edit.json > $OUT/s19B_edit.txt 2>/dev/null
echo "edit rc=$? $(( $(date +%s)-t0 ))s"; grep "chain by chain\|new_eager\|new_compiled " $OUT/s19B_edit.txt
{ PYTHONPATH=/tmp/site:$PWD python3 benchmarks/timeline/show.py $OUT/s19B_timeline.tsv; PYTHONPATH=/tmp/site:$PWD python3 benchmarks/timeline/show.py $OUT/s19B_timeline.tsv --compiled; } > $OUT/s19B_phases.txt 2>&1
grep median $OUT/s19B_phases.txt
