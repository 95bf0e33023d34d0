#!/usr/bin/env bash
# session 16, call G (the tree of HEAD): the GPU-marked app tests, the whole latency benchmark
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
python3 -m compileall -q /tmp/site > /dev/null 2>&1
export PYTHONUNBUFFERED=1
t0=$(date +%s)
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; PYTHONPATH=/tmp/site python3 -c "import sys, torch, triton; print('python', sys.version.split()[0], 'torch', torch.__version__, 'triton', triton.__version__)"; nproc; uptime; } > $OUT/callG_env.txt 2>&1
PYTHONPATH=/tmp/site:$PWD timeout 90 python3 -m pytest -q -p no:cacheprovider -m gpu tests/tui/test_features_gpu.py > $OUT/callG_pytest.txt 2>&1
echo "pytest rc=$? $(( $(date +%s)-t0 ))s"; tail -2 $OUT/callG_pytest.txt; grep -E "^E  " $OUT/callG_pytest.txt | head -5 | cut -c1-400
PYTHONPATH=/tmp/site:$PWD timeout 200 python3 benchmarks/tui_latency.py --device cuda --edits 20 --out $OUT/callG_latency.json > $OUT/callG_latency.txt 2>/dev/null
echo "latency rc=$? $(( $(date +%s)-t0 ))s"; cat $OUT/callG_latency.txt
