#!/usr/bin/env bash
# The app's start, this tree against lab/old (87168d1), in turns: the frame section with every
# process's events, 3 launches (after a warm-up launch) per turn; DEVICE=cpu|cuda, ROUNDS, OUTFILE
set -u
here=$PWD
out=${OUTFILE:-/tmp/start_ab.txt}; : > $out
for round in $(seq 1 ${ROUNDS:-2}); do
  for tree in old new; do
    root=$here; [ $tree = old ] && root=$here/lab/old
    tl=$(mktemp --suffix=.tsv)
    (cd $root && TIMELINE_FILE=$tl PYTHONPATH=$here/benchmarks/timeline:${SITE:+$SITE:}$root timeout 200 python3 benchmarks/tui_latency.py --device ${DEVICE:-cpu} --only frame --launches 3 > /tmp/frame_$tree.txt 2>/dev/null)
    echo "== round $round, $tree tree ($(head -1 /tmp/frame_$tree.txt))" >> $out
    python3 lab/gpu/start_summary.py $tl $here/benchmarks/timeline >> $out
    rm -f $tl
  done
done
cat $out
