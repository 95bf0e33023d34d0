#!/usr/bin/env bash
# session 12, call 2 (the tree of the GC commit): the whole latency benchmark, then the edit round
# with its timeline
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
python3 -m compileall -q /tmp/site > /dev/null 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD
t0=$(date +%s)
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; python3 -c "import sys, torch, triton; print('python', sys.version.split()[0], 'torch', torch.__version__, 'triton', triton.__version__)"; nproc; } > $OUT/call2_env.txt 2>&1
timeout 330 python3 benchmarks/tui_latency.py --device cuda --edits 10 --out $OUT/call2_latency.json > $OUT/call2_latency.txt 2>$OUT/call2_latency.log
echo "latency rc=$? $(( $(date +%s)-t0 ))s"; cat $OUT/call2_latency.txt
TIMELINE_FILE=$OUT/call2_timeline.tsv PYTHONPATH=$PWD/benchmarks/timeline:$PYTHONPATH timeout $(( 560 - ($(date +%s)-t0) )) \
  python3 benchmarks/tui_latency.py --device cuda --edits 10 --pause-s 0 --only edit --out $OUT/call2_edit.json > $OUT/call2_edit.txt 2>&1
echo "edit rc=$? $(( $(date +%s)-t0 ))s"; cat $OUT/call2_edit.txt
python3 benchmarks/timeline/show.py $OUT/call2_timeline.tsv --compiled > $OUT/call2_compiled_phases.txt 2>&1; cat $OUT/call2_compiled_phases.txt
