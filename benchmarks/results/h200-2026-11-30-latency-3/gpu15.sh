#!/usr/bin/env bash
# session 3, call 3: every GPU-marked test, then the whole latency benchmark, on this session's code
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD
t0=$(date +%s)
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"; } > $OUT/env.txt
FAILLOG=$OUT/gpu_tests.txt PYTHONPATH=$PYTHONPATH:$PWD/lab timeout 280 python3 -m pytest -q -p no:cacheprovider -p faillog -m gpu tests > $OUT/pytest.txt 2>&1
echo "tests rc=$? $(( $(date +%s)-t0 ))s"; tail -4 $OUT/pytest.txt
timeout $(( 585 - ($(date +%s)-t0) )) python3 benchmarks/tui_latency.py --device cuda --edits 10 --out $OUT/latency.json > $OUT/latency.txt 2>$OUT/latency.log
echo "latency rc=$? $(( $(date +%s)-t0 ))s"
cat $OUT/latency.txt; tail -3 $OUT/latency.log
