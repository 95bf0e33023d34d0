#!/usr/bin/env bash
# session 3, call 6: test_engine_gpu.py (the long-lived-worker test now keeps each side's faster
# of two readings), three times
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD
t0=$(date +%s)
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"; } > $OUT/env.txt
for i in 1 2 3; do
FAILLOG=$OUT/gpu_tests.txt PYTHONPATH=$PYTHONPATH:$PWD/lab timeout 110 python3 -m pytest -q -p no:cacheprovider -p faillog -m gpu tests/test_engine_gpu.py >> $OUT/pytest.txt 2>&1
echo "run $i rc=$? $(( $(date +%s)-t0 ))s"; tail -1 $OUT/pytest.txt
[ $(( $(date +%s)-t0 )) -gt 230 ] && break
done
