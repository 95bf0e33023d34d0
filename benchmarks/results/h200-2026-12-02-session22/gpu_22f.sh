#!/usr/bin/env bash
# session 22, call F: the tool sets TEARDOWN_CUPTI for its GPU sessions only: a CPU-only script exits, a GPU
# measurement still leaves no launch cost behind, the GPU test of it
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD
R=$OUT/s22F.txt; { date -u; sha1sum probes/__init__.py probes/timing.py; } > $R
( t0=$(date +%s%N); env -u TEARDOWN_CUPTI timeout 60 python3 lab/s22/exit/probes_eager.py > /tmp/f_eager.txt 2>&1; rc=$?
  echo "probes_eager (CPU, TEARDOWN_CUPTI unset): rc=$rc exited $(( ($(date +%s%N)-t0)/1000000 )) ms after start; $(grep '^done' /tmp/f_eager.txt)" >> $R ) &
env -u TEARDOWN_CUPTI timeout 100 python3 -m pytest -q -p no:cacheprovider tests/test_engine_gpu.py -k cupti > /tmp/f_pytest.txt 2>&1; echo "gpu cupti test rc=$?: $(tail -1 /tmp/f_pytest.txt)" >> $R
for mode in fresh measured; do env -u TEARDOWN_CUPTI timeout 60 python3 lab/s22/exit/launch_cost.py $mode 2>&1 | grep "us per launch" >> $R; done
TEARDOWN_CUPTI=0 timeout 60 python3 lab/s22/exit/launch_cost.py measured_teardown_off 2>&1 | grep "us per launch" >> $R
wait
cat $R
