#!/usr/bin/env bash
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
t0=$(date +%s)
for round in 1 2; do
  for td in 0 1; do
    TEARDOWN_CUPTI=$td timeout 75 python3 benchmarks/tui_latency.py --device cuda --only edit --edits 3 --out $OUT/latency_teardown${td}_round${round}.json > /tmp/l.txt 2>/tmp/l.log
    echo "TEARDOWN_CUPTI=$td round $round rc=$? $(( $(date +%s)-t0 ))s"; cat /tmp/l.txt
  done
done
