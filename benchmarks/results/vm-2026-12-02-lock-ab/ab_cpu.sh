#!/usr/bin/env bash
# CPU, in turns: the edit round of f78d5fa (before the device-lock and set-up-delay changes) and of HEAD
for round in 1 2; do
  for tree in /tmp/treeA /work/main; do
    (cd $tree && timeout 600 /work/main/.venv/bin/python benchmarks/tui_latency.py --edits 10 --pause-s 0 --only edit --out /tmp/ab_$(basename $tree)_$round.json > /tmp/ab_$(basename $tree)_$round.txt 2>/dev/null)
    echo "$tree round $round: $(grep -E 'chain by chain|new_eager' /tmp/ab_$(basename $tree)_$round.txt | tr '\n' ' ')"
  done
done
