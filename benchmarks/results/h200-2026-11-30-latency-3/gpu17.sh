#!/usr/bin/env bash
# session 3, call 5: the long-lived-worker test with TEARDOWN_CUPTI set by probes itself (the
# in-process engine in pytest measured with CUPTI left attached), twice; then every GPU test once
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD
t0=$(date +%s)
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"; } > $OUT/env.txt
for i in 1 2; do
FAILLOG=$OUT/gpu_tests_pair.txt PYTHONPATH=$PYTHONPATH:$PWD/lab timeout 100 python3 -m pytest -q -p no:cacheprovider -p faillog -m gpu tests/test_engine_gpu.py -k "flush_leaves_nothing or long_lived_worker" >> $OUT/pytest_pair.txt 2>&1
echo "pair $i rc=$? $(( $(date +%s)-t0 ))s"; tail -1 $OUT/pytest_pair.txt
done
FAILLOG=$OUT/gpu_tests.txt PYTHONPATH=$PYTHONPATH:$PWD/lab timeout $(( 470 - ($(date +%s)-t0) )) python3 -m pytest -q -p no:cacheprovider -p faillog -m gpu tests > $OUT/pytest.txt 2>&1
echo "all rc=$? $(( $(date +%s)-t0 ))s"; tail -4 $OUT/pytest.txt
