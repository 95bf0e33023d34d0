#!/usr/bin/env bash
set -u
unset PYTHONDONTWRITEBYTECODE
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
python3 -m compileall -q /tmp/site > /dev/null 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD
F='warn|_conversion|USDT|numpy'
t0=$(date +%s)
for i in 1 2 3 4; do echo "== worker_first $i"; TORCHINDUCTOR_COMPILE_THREADS=1 python3 lab/worker_first.py 2>&1 | grep -Eiv "$F"; done > $OUT/worker_first.txt
echo "worker_first $(( $(date +%s)-t0 ))s"; cat $OUT/worker_first.txt
export PYTHONPYCACHEPREFIX=/root/.cache/kernel-tui/bytecode
for i in 1 2; do
  TORCHINDUCTOR_COMPILE_THREADS=1 python3 lab/bare_threads.py one 2>&1 | grep -Eiv "$F"
  python3 lab/bare_threads.py default 2>&1 | grep -Eiv "$F"
done > $OUT/bare_threads.txt
echo "bare $(( $(date +%s)-t0 ))s"; cat $OUT/bare_threads.txt
