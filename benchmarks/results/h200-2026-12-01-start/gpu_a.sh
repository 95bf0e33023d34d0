#!/usr/bin/env bash
# investigation: startup phases of a worker-like process, the real worker's first rows, compile phases
set -u
unset PYTHONDONTWRITEBYTECODE
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
python3 -m compileall -q /tmp/site > /dev/null 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD TORCHINDUCTOR_COMPILE_THREADS=1
F='warn|_conversion|USDT|numpy'
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"; nproc; } > $OUT/env.txt 2>&1
t0=$(date +%s)
for i in 1 2 3; do echo "== worker_first $i"; python3 lab/worker_first.py 2>&1 | grep -Eiv "$F"; done > $OUT/worker_first.txt
echo "worker_first $(( $(date +%s)-t0 ))s"; cat $OUT/worker_first.txt
export PYTHONPYCACHEPREFIX=/root/.cache/kernel-tui/bytecode
for a in "" "" "--no-meta" ""; do echo "== startup $a"; python3 lab/startup_phases.py $a 2>&1 | grep -Eiv "$F"; done > $OUT/startup.txt
echo "startup $(( $(date +%s)-t0 ))s"; cat $OUT/startup.txt
python3 lab/compile_phases.py 2>&1 | grep -Eiv "$F" > $OUT/compile_phases.txt
echo "compile $(( $(date +%s)-t0 ))s"; cat $OUT/compile_phases.txt
