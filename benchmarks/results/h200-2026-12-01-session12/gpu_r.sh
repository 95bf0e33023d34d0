#!/usr/bin/env bash
# session 12, call 1: every GPU-marked test on the final code of session 11; bare compiles in a warm
# process back to back, with 1 s idle between them, and with gc.freeze; the edit round with the
# compile worker's phases on its timeline
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
python3 -m compileall -q /tmp/site > /dev/null 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD
t0=$(date +%s)
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"; nproc; } > $OUT/call1_env.txt 2>&1
timeout 200 python3 -m pytest -q -p no:cacheprovider -m gpu tests > $OUT/call1_pytest.txt 2>&1
echo "tests rc=$? $(( $(date +%s)-t0 ))s"; tail -n 2 $OUT/call1_pytest.txt
for run in "none 1 0" "none 2 1.0" "freeze 3 0" "none 4 0" "none 5 1.0" "freeze 6 0"; do
  timeout 60 python3 lab/compile_gc.py $run 2>/dev/null
done > $OUT/call1_compile_idle.txt
echo "idle $(( $(date +%s)-t0 ))s"; grep -E "freeze=|median" $OUT/call1_compile_idle.txt
TIMELINE_FILE=$OUT/call1_timeline.tsv PYTHONPATH=$PWD/benchmarks/timeline:$PYTHONPATH timeout $(( 560 - ($(date +%s)-t0) )) \
  python3 benchmarks/tui_latency.py --device cuda --edits 10 --pause-s 0 --only edit --out $OUT/call1_edit.json > $OUT/call1_edit.txt 2>&1
echo "edit rc=$? $(( $(date +%s)-t0 ))s"; cat $OUT/call1_edit.txt
python3 benchmarks/timeline/show.py $OUT/call1_timeline.tsv --compiled > $OUT/call1_compiled_phases.txt 2>&1; cat $OUT/call1_compiled_phases.txt
