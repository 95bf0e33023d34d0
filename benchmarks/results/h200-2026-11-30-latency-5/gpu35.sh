#!/usr/bin/env bash
# session 5, call 5 (tree of 9aa3fbf: the compile worker, the first-frame work merged): the whole
# latency benchmark, then the app's and the pair's GPU-marked tests
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD
t0=$(date +%s)
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"; } > $OUT/call5_env.txt 2>&1
timeout 260 python3 benchmarks/tui_latency.py --device cuda --edits 10 --out $OUT/call5_latency.json > $OUT/call5_latency.txt 2>$OUT/call5_latency.log
echo "latency rc=$? $(( $(date +%s)-t0 ))s"; cat $OUT/call5_latency.txt; tail -3 $OUT/call5_latency.log
timeout $(( 340 - ($(date +%s)-t0) )) python3 -m pytest -q -p no:cacheprovider -m gpu tests/tui tests/test_worker_pair_gpu.py > $OUT/call5_pytest.txt 2>&1
echo "tests rc=$? $(( $(date +%s)-t0 ))s"; tail -4 $OUT/call5_pytest.txt
