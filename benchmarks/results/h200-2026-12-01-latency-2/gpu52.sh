#!/usr/bin/env bash
# session 9, call 2 (the tree of this session's last app commit): the whole latency benchmark, the
# README's GPU screenshots, then the edit round again with each edit's timeline
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
python3 -m compileall -q /tmp/site > /dev/null 2>&1  # as pip install leaves an installed package
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD
t0=$(date +%s)
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"; nproc; } > $OUT/call2_env.txt 2>&1
timeout 300 python3 benchmarks/tui_latency.py --device cuda --edits 10 --out $OUT/call2_latency.json > $OUT/call2_latency.txt 2>$OUT/call2_latency.log
echo "latency rc=$? $(( $(date +%s)-t0 ))s"; cat $OUT/call2_latency.txt
timeout 200 bash screenshots/capture.sh cuda /tmp/shots > /tmp/shots.log 2>&1; echo "shots rc=$? $(( $(date +%s)-t0 ))s $(ls /tmp/shots | wc -l)"
tar czf $OUT/call2_shots.tgz -C /tmp shots
TIMELINE_FILE=$OUT/call2_timeline.tsv PYTHONPATH=$PWD/benchmarks/timeline:$PYTHONPATH timeout $(( 570 - ($(date +%s)-t0) )) \
  python3 benchmarks/tui_latency.py --device cuda --edits 10 --only edit --out $OUT/call2_edit.json > $OUT/call2_edit.txt 2>&1
echo "edit rc=$? $(( $(date +%s)-t0 ))s"; cat $OUT/call2_edit.txt
python3 benchmarks/timeline/show.py $OUT/call2_timeline.tsv | tail -n 1
