#!/usr/bin/env bash
# session 24, call E: the truth run on the final engine (784a250's probes/): three chains (elementwise, a reduction, a row softmax) against a bare profiler, Timer, do_bench; then ncu
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD
t0=$(date +%s)
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader; nproc; uptime; which ncu; sha1sum benchmarks/truth.py probes/*.py | sort -k2; } > $OUT/s24E_env.txt 2>&1
timeout 420 python3 benchmarks/truth.py --chains add_relu,mul_sum,softmax --budget-s 190 --out $OUT/s24E_truth.json > $OUT/s24E_truth.txt 2> $OUT/s24E_truth.log
echo "truth rc=$? $(( $(date +%s)-t0 ))s"; cat $OUT/s24E_truth.txt | cut -c1-260; tail -3 $OUT/s24E_truth.log
