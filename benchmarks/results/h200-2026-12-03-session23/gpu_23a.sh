#!/usr/bin/env bash
# session 23, call A: every step of a new chain's compiled request on the H200, and whether an op's first use costs its compile more.
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
python3 -m compileall -q /tmp/site > /dev/null 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD
t0=$(date +%s)
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; uptime; sha1sum probes/*.py | sha1sum; } > $OUT/s23A_env.txt 2>&1
timeout 200 python3 lab/s23/compiled_steps.py cuda 1e6 > $OUT/s23A_steps.txt 2>&1
echo "steps rc=$? $(( $(date +%s)-t0 ))s"; grep -v "Warn\|USDT" $OUT/s23A_steps.txt | head -60
timeout 200 python3 lab/s23/op_first_use.py cuda 1e6 > $OUT/s23A_first_use.txt 2>&1
echo "first use rc=$? $(( $(date +%s)-t0 ))s"; grep -E "first use|medians" $OUT/s23A_first_use.txt
timeout 200 python3 lab/compile_paths.py --device cuda --ops 20 > $OUT/s23A_compile_paths.txt 2>&1
echo "paths rc=$? $(( $(date +%s)-t0 ))s"; grep -E "median|around" $OUT/s23A_compile_paths.txt
timeout 120 python3 lab/s23/capture_ab.py cuda 1e6 > $OUT/s23A_capture.txt 2>&1
echo "capture rc=$? $(( $(date +%s)-t0 ))s"; tail -3 $OUT/s23A_capture.txt
