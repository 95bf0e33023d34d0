#!/usr/bin/env bash
# session 9, call 6 (the tree that skips a GPU's warm-up within 2 s of the last timed rep): every
# GPU-marked test, then the edit round (with the edit after a 20 s pause) and three sweeps
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
python3 -m compileall -q /tmp/site > /dev/null 2>&1  # as pip install leaves an installed package
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD
t0=$(date +%s)
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"; nproc; } > $OUT/call6_env.txt 2>&1
timeout 240 python3 -m pytest -q -p no:cacheprovider -m gpu tests > $OUT/call6_pytest.txt 2>&1
echo "tests rc=$? $(( $(date +%s)-t0 ))s"; tail -n 3 $OUT/call6_pytest.txt
timeout $(( 540 - ($(date +%s)-t0) )) python3 benchmarks/tui_latency.py --device cuda --edits 10 --only edit,sweep --out $OUT/call6_latency.json > $OUT/call6_latency.txt 2>$OUT/call6_latency.log
echo "latency rc=$? $(( $(date +%s)-t0 ))s"; cat $OUT/call6_latency.txt
