#!/usr/bin/env bash
# call 8 of session 11, the same tree and box as call 7: the edit round again with its timeline
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD
TIMELINE_FILE=$OUT/call8_timeline.tsv PYTHONPATH=$PWD/benchmarks/timeline:$PYTHONPATH timeout 120 \
  python3 benchmarks/tui_latency.py --device cuda --edits 10 --pause-s 0 --only edit --out $OUT/call8_edit.json > $OUT/call8_edit.txt 2>&1
echo "edit rc=$?"; cat $OUT/call8_edit.txt
