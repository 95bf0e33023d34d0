#!/usr/bin/env bash
# call 1 of session 11: early compiled rows. Every GPU-marked test, the profiler's phases, the edit
# round with its timeline.
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
python3 -m compileall -q /tmp/site > /dev/null 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD
t0=$(date +%s)
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"; nproc; } > $OUT/call1_env.txt 2>&1
timeout 220 python3 -m pytest -q -p no:cacheprovider -m gpu tests > $OUT/call1_pytest.txt 2>&1
echo "tests rc=$? $(( $(date +%s)-t0 ))s"; tail -n 3 $OUT/call1_pytest.txt
timeout 60 python3 lab/profile_phases.py 2>&1 | grep -v USDT > $OUT/call1_profile_phases.txt
echo "phases $(( $(date +%s)-t0 ))s"; cat $OUT/call1_profile_phases.txt | tail -8
TIMELINE_FILE=$OUT/call1_timeline.tsv PYTHONPATH=$PWD/benchmarks/timeline:$PYTHONPATH timeout $(( 580 - ($(date +%s)-t0) )) \
  python3 benchmarks/tui_latency.py --device cuda --edits 10 --pause-s 0 --only edit --out $OUT/call1_edit.json > $OUT/call1_edit.txt 2>&1
echo "edit rc=$? $(( $(date +%s)-t0 ))s"; cat $OUT/call1_edit.txt
