#!/usr/bin/env bash
# call 4 of session 11 (compiles sent with the eager run everywhere, stopped inside the compiler's
# wait): every GPU-marked test, the whole latency benchmark, then the edit round with its timeline
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
python3 -m compileall -q /tmp/site > /dev/null 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD
t0=$(date +%s)
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"; nproc; } > $OUT/call4_env.txt 2>&1
timeout 200 python3 -m pytest -q -p no:cacheprovider -m gpu tests > $OUT/call4_pytest.txt 2>&1
echo "tests rc=$? $(( $(date +%s)-t0 ))s"; tail -n 2 $OUT/call4_pytest.txt
timeout 300 python3 benchmarks/tui_latency.py --device cuda --edits 10 --out $OUT/call4_latency.json > $OUT/call4_latency.txt 2>$OUT/call4_latency.log
echo "latency rc=$? $(( $(date +%s)-t0 ))s"; cat $OUT/call4_latency.txt
TIMELINE_FILE=$OUT/call4_timeline.tsv PYTHONPATH=$PWD/benchmarks/timeline:$PYTHONPATH timeout $(( 585 - ($(date +%s)-t0) )) \
  python3 benchmarks/tui_latency.py --device cuda --edits 10 --pause-s 0 --only edit --out $OUT/call4_edit.json > $OUT/call4_edit.txt 2>&1
echo "edit rc=$? $(( $(date +%s)-t0 ))s"; cat $OUT/call4_edit.txt
