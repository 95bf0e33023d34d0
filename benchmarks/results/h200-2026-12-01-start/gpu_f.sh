#!/usr/bin/env bash
# call 7: three launches with their timeline (every process's start-up events)
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
python3 -m compileall -q /tmp/site > /dev/null 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD
TIMELINE_FILE=$OUT/call7_timeline.tsv PYTHONPATH=$PWD/benchmarks/timeline:$PYTHONPATH timeout 200 \
  python3 benchmarks/tui_latency.py --device cuda --only frame --launches 3 --out $OUT/call7_frame.json > $OUT/call7_frame.txt 2>&1
cat $OUT/call7_frame.txt
python3 benchmarks/timeline/show_start.py $OUT/call7_timeline.tsv > $OUT/call7_start.txt; cat $OUT/call7_start.txt
