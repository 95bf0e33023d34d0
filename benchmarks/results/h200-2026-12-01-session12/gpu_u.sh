#!/usr/bin/env bash
# session 12, call 5: the edit round with its timeline, the compile worker's steps marked
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
python3 -m compileall -q /tmp/site > /dev/null 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; python3 -c "import sys, torch, triton; print('python', sys.version.split()[0], 'torch', torch.__version__, 'triton', triton.__version__)"; nproc; } > $OUT/call5_env.txt 2>&1
TIMELINE_FILE=$OUT/call5_timeline.tsv PYTHONPATH=$PWD/benchmarks/timeline:$PYTHONPATH timeout 150 \
  python3 benchmarks/tui_latency.py --device cuda --edits 10 --pause-s 3 --only edit --out $OUT/call5_edit.json > $OUT/call5_edit.txt 2>&1
echo "edit rc=$?"; cat $OUT/call5_edit.txt
python3 benchmarks/timeline/show.py $OUT/call5_timeline.tsv --compiled > $OUT/call5_compiled_phases.txt 2>&1; cat $OUT/call5_compiled_phases.txt
python3 lab/post_compile_steps.py $OUT/call5_timeline.tsv > $OUT/call5_post_compile_steps.txt 2>&1; cat $OUT/call5_post_compile_steps.txt
