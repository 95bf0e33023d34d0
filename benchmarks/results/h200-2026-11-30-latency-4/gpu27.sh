#!/usr/bin/env bash
# session 4, call 7: the same with the host-bound check one-sided (the worker at most 25% slower)
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD
t0=$(date +%s)
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } > $OUT/env.txt
for i in 1; do
  FAILLOG=$OUT/gpu_tests.txt PYTHONPATH=$PYTHONPATH:$PWD/lab timeout 90 python3 -m pytest -q -p no:cacheprovider -p faillog -m gpu tests/test_engine_gpu.py -k long_lived >> $OUT/pytest.txt 2>&1
  echo "run $i rc=$? $(( $(date +%s)-t0 ))s: $(tail -1 $OUT/pytest.txt)"
  [ $(( $(date +%s)-t0 )) -gt 200 ] && break
done
grep -A3 "AssertionError" $OUT/pytest.txt | head -20
