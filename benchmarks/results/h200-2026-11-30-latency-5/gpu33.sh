#!/usr/bin/env bash
# session 5, call 3: after the lock moved behind the compile: truth beside a compile,
# the whole latency benchmark, every GPU-marked test
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD
t0=$(date +%s)
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"; git log --oneline -1 2>/dev/null; ls /dev/nvidiactl; } > $OUT/call3_env.txt 2>&1
timeout 150 python3 lab/pair_truth.py > $OUT/call3_pair_truth.jsonl 2>$OUT/call3_pair_truth.log
echo "truth rc=$? $(( $(date +%s)-t0 ))s"; cat $OUT/call3_pair_truth.jsonl; tail -5 $OUT/call3_pair_truth.log
timeout $(( 330 )) python3 benchmarks/tui_latency.py --device cuda --edits 10 --out $OUT/call3_latency.json > $OUT/call3_latency.txt 2>$OUT/call3_latency.log
echo "latency rc=$? $(( $(date +%s)-t0 ))s"; cat $OUT/call3_latency.txt; tail -3 $OUT/call3_latency.log
FAILLOG=$OUT/call3_gpu_tests.txt PYTHONPATH=$PYTHONPATH:$PWD/lab timeout $(( 590 - ($(date +%s)-t0) )) python3 -m pytest -q -p no:cacheprovider -p faillog -m gpu tests > $OUT/call3_pytest.txt 2>&1
echo "tests rc=$? $(( $(date +%s)-t0 ))s"; tail -4 $OUT/call3_pytest.txt
