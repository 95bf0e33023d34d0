#!/usr/bin/env bash
# session 16, call B: the roofline GPU test that failed in call A, on this tree and on bff8244's
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
export PYTHONUNBUFFERED=1
t0=$(date +%s)
for tree in new base new; do
  d=$PWD; [ $tree = base ] && d=$PWD/lab/base
  (cd $d && PYTHONPATH=/tmp/site:$d timeout 150 python3 -m pytest -q -p no:cacheprovider -m gpu tests/tui/test_features_gpu.py -k training 2>&1 | grep -E "passed|failed|^E  " | cut -c1-600)
  echo "$tree $(( $(date +%s)-t0 ))s"
done
