#!/usr/bin/env bash
# session 18, call B (49e800d: an edit goes to the app at once): the edit round with every process's events,
# then what an eager request's allocations and the profiler's reps cost (lab/gpu/request_parts.py)
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
python3 -m compileall -q /tmp/site > /dev/null 2>&1
export PYTHONUNBUFFERED=1
t0=$(date +%s)
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; PYTHONPATH=/tmp/site python3 -c "import sys, torch, triton; print('python', sys.version.split()[0], 'torch', torch.__version__, 'triton', triton.__version__)"; nproc; uptime; git log --oneline -1; } > $OUT/s18B_env.txt 2>&1
TIMELINE_FILE=$OUT/s18B_timeline.tsv PYTHONPATH=$PWD/benchmarks/timeline:/tmp/site:$PWD timeout 150 python3 benchmarks/tui_latency.py --device cuda --edits 20 --pause-s 0 --only edit --out $OUT/s18B_edit.json > $OUT/s18B_edit.txt 2>/dev/null
echo "edit rc=$? $(( $(date +%s)-t0 ))s"; grep "chain by chain\|new_eager\|new_compiled \|hit_eager" $OUT/s18B_edit.txt
{ PYTHONPATH=/tmp/site:$PWD python3 benchmarks/timeline/show.py $OUT/s18B_timeline.tsv; PYTHONPATH=/tmp/site:$PWD python3 benchmarks/timeline/show.py $OUT/s18B_timeline.tsv --compiled; } > $OUT/s18B_phases.txt 2>&1
grep median $OUT/s18B_phases.txt
PYTHONPATH=/tmp/site:$PWD timeout 200 python3 lab/gpu/request_parts.py > $OUT/s18B_parts.txt 2>&1
echo "parts rc=$? $(( $(date +%s)-t0 ))s"; grep -v Warn $OUT/s18B_parts.txt | tail -12
