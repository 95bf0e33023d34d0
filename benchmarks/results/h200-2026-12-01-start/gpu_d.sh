#!/usr/bin/env bash
# call 5: every GPU-marked test on this tree; the device context in a thread or not (A/B in turns);
# the real worker's start and first two eager requests (worker_first.py), as the app's worker starts
set -u
unset PYTHONDONTWRITEBYTECODE
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
python3 -m compileall -q /tmp/site > /dev/null 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD
R=benchmarks/results/h200-2026-12-01-start
F='warn|_conversion|USDT|numpy'
t0=$(date +%s)
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"; nproc; git log --oneline -1; } > $OUT/call5_env.txt 2>&1
timeout 280 python3 -m pytest -q -p no:cacheprovider -m gpu tests > $OUT/call5_pytest.txt 2>&1
echo "tests rc=$? $(( $(date +%s)-t0 ))s"; tail -n 3 $OUT/call5_pytest.txt
for i in 1 2 3 4 5 6; do echo "== worker_first $i"; python3 $R/worker_first.py 2>&1 | grep -Eiv "$F"; done > $OUT/call5_worker_first.txt
echo "worker_first $(( $(date +%s)-t0 ))s"; grep -E "ready|Result" $OUT/call5_worker_first.txt
export PYTHONPYCACHEPREFIX=/root/.cache/kernel-tui/bytecode
for i in 1 2 3 4 5 6; do python3 $R/ctx_thread.py seq 2>&1 | tail -1; python3 $R/ctx_thread.py thread 2>&1 | tail -1; done > $OUT/call5_ctx_thread.txt
echo "ctx $(( $(date +%s)-t0 ))s"; cat $OUT/call5_ctx_thread.txt
