#!/usr/bin/env bash
# session 5, call 1: the compile worker on the H200: truth beside a compile (shared lock vs none),
# the pair's tests, then the whole latency benchmark
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD
t0=$(date +%s)
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"; git log --oneline -1 2>/dev/null; ls /dev/nvidiactl; } > $OUT/call1_env.txt 2>&1
timeout 150 python3 lab/pair_truth.py > $OUT/call1_pair_truth.jsonl 2>$OUT/call1_pair_truth.log
echo "truth rc=$? $(( $(date +%s)-t0 ))s"; cat $OUT/call1_pair_truth.jsonl; tail -5 $OUT/call1_pair_truth.log
timeout 200 python3 -m pytest -q -p no:cacheprovider tests/test_worker_pair_gpu.py tests/test_worker_pair.py tests/test_device_lock.py > $OUT/call1_pair_tests.txt 2>&1
echo "pair tests rc=$? $(( $(date +%s)-t0 ))s"; tail -5 $OUT/call1_pair_tests.txt
timeout $(( 585 - ($(date +%s)-t0) )) python3 benchmarks/tui_latency.py --device cuda --edits 10 --out $OUT/call1_latency.json > $OUT/call1_latency.txt 2>$OUT/call1_latency.log
echo "latency rc=$? $(( $(date +%s)-t0 ))s"; cat $OUT/call1_latency.txt; tail -3 $OUT/call1_latency.log
