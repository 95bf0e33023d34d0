#!/usr/bin/env bash
# session 16, call C: the roofline GPU test on 0070858 (eager early rows only) and 2440377 (with the profiler set up beside the compile), rows printed on failure
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
export PYTHONUNBUFFERED=1
t0=$(date +%s)
for tree in t_early t_new t_early; do
  d=$PWD/lab/$tree
  (cd $d && PYTHONPATH=/tmp/site:$d timeout 150 python3 -m pytest -q -p no:cacheprovider -m gpu tests/tui/test_features_gpu.py -k training 2>&1 | grep -E "passed|failed|^E  " | head -3 | cut -c1-1500)
  echo "$tree $(( $(date +%s)-t0 ))s"
done
