#!/usr/bin/env bash
# session 12, call 6: call 5 again, with the profiler's own times of each session
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
python3 -m compileall -q /tmp/site > /dev/null 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; python3 -c "import sys, torch, triton; print('python', sys.version.split()[0], 'torch', torch.__version__, 'triton', triton.__version__)"; nproc; } > $OUT/call6_env.txt 2>&1
TIMELINE_FILE=$OUT/call6_timeline.tsv PYTHONPATH=$PWD/benchmarks/timeline:$PYTHONPATH timeout 150 \
  python3 benchmarks/tui_latency.py --device cuda --edits 10 --pause-s 3 --only edit --out $OUT/call6_edit.json > $OUT/call6_edit.txt 2>&1
echo "edit rc=$?"; cat $OUT/call6_edit.txt
python3 benchmarks/timeline/show.py $OUT/call6_timeline.tsv --compiled > $OUT/call6_compiled_phases.txt 2>&1; cat $OUT/call6_compiled_phases.txt
python3 lab/post_compile_steps.py $OUT/call6_timeline.tsv > $OUT/call6_post_compile_steps.txt 2>&1; cat $OUT/call6_post_compile_steps.txt
grep -P "\tprofiler\t" $OUT/call6_timeline.tsv | tail -40
