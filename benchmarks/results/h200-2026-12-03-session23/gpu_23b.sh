#!/usr/bin/env bash
# session 23, call B: finer steps of a new chain's compiled request on the H200 (memory guard, around the compile, reading events)
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
python3 -m compileall -q /tmp/site > /dev/null 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD
t0=$(date +%s)
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; uptime; sha1sum probes/*.py | sha1sum; } > $OUT/s23B_env.txt 2>&1
timeout 200 python3 lab/s23/fine_steps.py cuda 1e6 > $OUT/s23B_fine.txt 2>&1
echo "fine rc=$? $(( $(date +%s)-t0 ))s"; grep -A40 "^medians" $OUT/s23B_fine.txt

timeout 60 python3 lab/s23/read_events_ab.py lab/s23/pe_old.py cuda 2>&1 | grep -v "Warn\|USDT" | tail -2
