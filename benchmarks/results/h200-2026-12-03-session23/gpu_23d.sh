#!/usr/bin/env bash
# session 23, call D: which TEARDOWN_CUPTI start makes CUDA-graph modes crash after profiled sessions (call C's GPU tests)
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD
for v in unset 1; do
  if [ $v = unset ]; then env -u TEARDOWN_CUPTI KT_T0=unset timeout 60 python3 lab/s23/graphs_crash.py eager,compiled,max-autotune,reduce-overhead; else env TEARDOWN_CUPTI=$v KT_T0=$v timeout 60 python3 lab/s23/graphs_crash.py eager,compiled,max-autotune,reduce-overhead; fi 2>&1 | grep -E "RAISED|TEARDOWN_CUPTI at start" ; echo "rc=${PIPESTATUS[0]}"
done > $OUT/s23D_graphs.txt 2>&1
cat $OUT/s23D_graphs.txt
