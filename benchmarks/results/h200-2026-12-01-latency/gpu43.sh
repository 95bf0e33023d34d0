#!/usr/bin/env bash
# session 6, call 3 (tree of 8ce8514): the README's GPU screenshots with this app, then the edit
# round twice more (new eager / new compiled / hits with their spread)
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD
t0=$(date +%s)
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"; } > $OUT/call3_env.txt 2>&1
timeout 300 bash screenshots/capture.sh cuda /tmp/shots > /tmp/shots.log 2>&1; echo "shots rc=$? $(( $(date +%s)-t0 ))s"; ls /tmp/shots | wc -l
tar czf $OUT/call3_shots.tgz -C /tmp shots; tail -5 /tmp/shots.log
for r in 1 2; do
  timeout 120 python3 benchmarks/tui_latency.py --device cuda --only edit --edits 10 --out $OUT/call3_edit_$r.json > $OUT/call3_edit_$r.txt 2>/dev/null
  echo "edit $r rc=$? $(( $(date +%s)-t0 ))s"; cat $OUT/call3_edit_$r.txt
done
