#!/usr/bin/env bash
# session 19, call D: launch -> first frame and first eager rows, in turns, 3 rounds: the tree of c24a48d
# (lab/old, before the tables' change) and of d88a4e6 (this tree), --only frame (5 launches and a warm-up each)
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
python3 -m compileall -q /tmp/site > /dev/null 2>&1
export PYTHONUNBUFFERED=1
t0=$(date +%s)
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; uptime; } > $OUT/s19D_env.txt 2>&1
for round in 1 2 3; do
  for tree in old new; do
    root=$PWD; [ $tree = old ] && root=$PWD/lab/old
    echo "== round $round, tree $tree ($root)" >> $OUT/s19D_frame.txt
    (cd $root && PYTHONPATH=/tmp/site:$root timeout 150 python3 benchmarks/tui_latency.py --device cuda --only frame --out /tmp/s19D_${tree}_${round}.json >> $OUT/s19D_frame.txt 2>/dev/null)
    echo "round $round $tree rc=$? $(( $(date +%s)-t0 ))s"
  done
done
grep -E "==|first eager rows|first frame  " $OUT/s19D_frame.txt
