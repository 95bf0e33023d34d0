#!/usr/bin/env bash
# session 22, call D: which CPU-only script on this box does not exit after its last line: torch.compile alone, with a
# CPU profiler session, the engine's eager measurement, the engine's compiled one (side by side, each its own Inductor cache)
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD
R=$OUT/s22D_exit.txt; date -u > $R
for s in plain_compile plain_profiler probes_eager probes_compiled; do
  ( t0=$(date +%s%N); TORCHINDUCTOR_CACHE_DIR=/tmp/ic_$s timeout 170 python3 lab/s22/exit/$s.py > /tmp/x_$s.txt 2>&1; rc=$?
    echo "$s: rc=$rc exited $(( ($(date +%s%N)-t0)/1000000 )) ms after start; $(grep '^done' /tmp/x_$s.txt)" >> $R ) &
done
wait
cat $R
