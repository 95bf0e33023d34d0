#!/usr/bin/env bash
# session 22, call E: is it TEARDOWN_CUPTI (set by importing probes) that keeps a CPU-only profiling script from exiting here?
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD
R=$OUT/s22E_exit.txt; date -u > $R
run() {  # $1 tag, $2 env assignment, $3 script
  ( t0=$(date +%s%N); env $2 timeout 60 python3 lab/s22/exit/$3.py > /tmp/e_$1.txt 2>&1; rc=$?
    echo "$1 ($2 $3): rc=$rc exited $(( ($(date +%s%N)-t0)/1000000 )) ms after start; $(grep '^done' /tmp/e_$1.txt)" >> $R ) &
}
run plain_no_env X=1 plain_profiler_eager
run plain_teardown TEARDOWN_CUPTI=1 plain_profiler_eager
run probes_teardown_off TEARDOWN_CUPTI=0 probes_eager
run probes_default X=1 probes_eager
wait
cat $R
