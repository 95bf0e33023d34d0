#!/usr/bin/env bash
# session 20, call C (96f8935): the edit round with every process's events, then the border A/B again with more results
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
python3 -m compileall -q /tmp/site > /dev/null 2>&1
export PYTHONUNBUFFERED=1
t0=$(date +%s)
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; uptime; } > $OUT/s20C_env.txt 2>&1
TIMELINE_FILE=$OUT/s20C_timeline.tsv PYTHONPATH=$PWD/benchmarks/timeline:/tmp/site:$PWD timeout 200 python3 benchmarks/tui_latency.py --device cuda --edits 20 --pause-s 0 --only edit --out $OUT/s20C_edit.json > $OUT/s20C_edit.txt 2>/dev/null
echo "edit rc=$? $(( $(date +%s)-t0 ))s"; grep "chain by chain\|new_eager\|new_compiled \|hit_\|median / median" $OUT/s20C_edit.txt
{ PYTHONPATH=/tmp/site:$PWD python3 benchmarks/timeline/show.py $OUT/s20C_timeline.tsv; PYTHONPATH=/tmp/site:$PWD python3 benchmarks/timeline/show.py $OUT/s20C_timeline.tsv --compiled; PYTHONPATH=/tmp/site:$PWD python3 benchmarks/results/h200-2026-12-02-session19/frames.py $OUT/s20C_timeline.tsv; } > $OUT/s20C_phases.txt 2>&1
grep median $OUT/s20C_phases.txt
PYTHONPATH=/tmp/site:$PWD timeout $(( 580 - ($(date +%s)-t0) )) python3 lab/border_ab.py 80 > $OUT/s20C_border_ab.txt 2>&1
echo "border rc=$? $(( $(date +%s)-t0 ))s"; tail -4 $OUT/s20C_border_ab.txt
