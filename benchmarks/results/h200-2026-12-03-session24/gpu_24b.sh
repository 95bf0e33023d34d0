#!/usr/bin/env bash
# session 24, call B: which TEARDOWN_CUPTI history makes CUDA-graph modes crash after profiled sessions (session 23 call C's GPU suite on 3ea6613), four histories in four processes at once; then the latency benchmark's edit round again on 784a250
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD
t0=$(date +%s)
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; uptime; sha1sum probes/__init__.py probes/timing.py probes/sweep.py lab/s24/cupti_crash.py; } > $OUT/s24B_env.txt 2>&1
for s in import first_gpu test_order off; do
  ( env -u TEARDOWN_CUPTI timeout 280 python3 lab/s24/cupti_crash.py $s > /tmp/crash_$s.txt 2>&1; echo "$s: rc=$?" >> /tmp/crash_$s.txt ) &
done
wait
for s in import first_gpu test_order off; do grep -vE "Warn|USDT|^\s*$|warn\(" /tmp/crash_$s.txt | tail -6; done > $OUT/s24B_crash.txt
echo "crash $(( $(date +%s)-t0 ))s"; cut -c1-400 $OUT/s24B_crash.txt
timeout 250 python3 benchmarks/tui_latency.py --device cuda --edits 20 --only edit --out $OUT/s24B_edit.json > $OUT/s24B_edit.txt 2>/dev/null
echo "latency rc=$? $(( $(date +%s)-t0 ))s"; cat $OUT/s24B_edit.txt
