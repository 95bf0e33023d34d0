#!/usr/bin/env bash
# session 4, call 1: the latency benchmark on this session's code (240 fps, bytecode compiled),
# every GPU-marked test, and the 43-or-70 us split probe (fresh processes)
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD
t0=$(date +%s)
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"; env | grep -i "^python"; } > $OUT/env.txt
timeout 300 python3 benchmarks/tui_latency.py --device cuda --edits 10 --out $OUT/latency.json > $OUT/latency.txt 2>$OUT/latency.log
echo "latency rc=$? $(( $(date +%s)-t0 ))s"; cat $OUT/latency.txt; tail -3 $OUT/latency.log
for i in 1 2 3 4 5; do
  timeout 45 python3 lab/split_probe.py 2>/dev/null >> $OUT/split.jsonl
  [ $(( $(date +%s)-t0 )) -gt 390 ] && break
done
echo "split $(( $(date +%s)-t0 ))s"; cat $OUT/split.jsonl
FAILLOG=$OUT/gpu_tests.txt PYTHONPATH=$PYTHONPATH:$PWD/lab timeout $(( 590 - ($(date +%s)-t0) )) python3 -m pytest -q -p no:cacheprovider -p faillog -m gpu tests > $OUT/pytest.txt 2>&1
echo "tests rc=$? $(( $(date +%s)-t0 ))s"; tail -4 $OUT/pytest.txt
