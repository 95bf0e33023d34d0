#!/usr/bin/env bash
# session 12, call 4 (the tree of the GC commit): a worker's start and compiler warm-up, this tree
# against the one before the commit, in turns; with the bytecode cache the app uses
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
python3 -m compileall -q /tmp/site > /dev/null 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD
t0=$(date +%s)
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; python3 -c "import sys, torch, triton; print('python', sys.version.split()[0], 'torch', torch.__version__, 'triton', triton.__version__)"; nproc; } > $OUT/call4_env.txt 2>&1
timeout 200 python3 lab/worker_start_ab.py $PWD/lab/old_tree 8 > $OUT/call4_worker_start_ab.txt 2>&1
echo "ab rc=$? $(( $(date +%s)-t0 ))s"; cat $OUT/call4_worker_start_ab.txt


