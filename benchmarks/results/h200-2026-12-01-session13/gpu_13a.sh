#!/usr/bin/env bash
# session 13, call 1 (the tree of bb91141): every GPU-marked test, then the whole latency benchmark
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
python3 -m compileall -q /tmp/site > /dev/null 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD
t0=$(date +%s)
{ date -u; git log --oneline -1 2>/dev/null; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; python3 -c "import sys, torch, triton; print('python', sys.version.split()[0], 'torch', torch.__version__, 'triton', triton.__version__)"; nproc; } > $OUT/call1_env.txt 2>&1
timeout 230 python3 -m pytest -q -p no:cacheprovider -m gpu tests > $OUT/call1_pytest.txt 2>&1
echo "tests rc=$? $(( $(date +%s)-t0 ))s"; tail -n 3 $OUT/call1_pytest.txt
timeout 330 python3 benchmarks/tui_latency.py --device cuda --edits 10 --out $OUT/call1_latency.json > $OUT/call1_latency.txt 2>$OUT/call1_latency.log
echo "latency rc=$? $(( $(date +%s)-t0 ))s"; cat $OUT/call1_latency.txt
