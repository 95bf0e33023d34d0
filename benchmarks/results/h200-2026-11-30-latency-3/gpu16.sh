#!/usr/bin/env bash
# session 3, call 4: the two GPU tests that failed in call 3, again; the cold round with the bare
# reference timed to its first compile's end
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD
t0=$(date +%s)
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"; } > $OUT/env.txt
for i in 1 2; do
FAILLOG=$OUT/gpu_tests.txt PYTHONPATH=$PYTHONPATH:$PWD/lab timeout 120 python3 -m pytest -q -p no:cacheprovider -p faillog -m gpu tests/test_engine_gpu.py -k "flush_leaves_nothing or long_lived_worker" >> $OUT/pytest.txt 2>&1
echo "tests $i rc=$? $(( $(date +%s)-t0 ))s"; tail -1 $OUT/pytest.txt
done
timeout $(( 400 - ($(date +%s)-t0) )) python3 benchmarks/tui_latency.py --device cuda --only cold --out $OUT/latency_cold.json > $OUT/latency_cold.txt 2>$OUT/latency_cold.log
echo "latency rc=$? $(( $(date +%s)-t0 ))s"
cat $OUT/latency_cold.txt; tail -3 $OUT/latency_cold.log
