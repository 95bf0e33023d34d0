#!/usr/bin/env bash
# session 15, call C (the tree of 1ffae28): every GPU-marked test; the app's start, this tree
# against 87168d1's (lab/old), in turns
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
python3 -m compileall -q /tmp/site > /dev/null 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD
t0=$(date +%s)
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; python3 -c "import sys, torch, triton; print('python', sys.version.split()[0], 'torch', torch.__version__, 'triton', triton.__version__)"; nproc; uptime; } > $OUT/callC_env.txt 2>&1
timeout 280 python3 -m pytest -q -p no:cacheprovider -m gpu tests > $OUT/callC_pytest.txt 2>&1
echo "tests rc=$? $(( $(date +%s)-t0 ))s"; tail -n 3 $OUT/callC_pytest.txt
SITE=/tmp/site ROUNDS=2 DEVICE=cuda OUTFILE=$OUT/callC_start_ab.txt timeout 260 bash lab/gpu/start_ab.sh > /dev/null 2>&1
echo "start_ab rc=$? $(( $(date +%s)-t0 ))s"; grep -E "==|median" $OUT/callC_start_ab.txt
