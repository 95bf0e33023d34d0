#!/usr/bin/env bash
# session 6, call 7 (the tree of this session's last app commit): the README's GPU screenshots,
# then the whole latency benchmark, on one box
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD
t0=$(date +%s)
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"; } > $OUT/call7_env.txt 2>&1
timeout 260 bash screenshots/capture.sh cuda /tmp/shots > /tmp/shots.log 2>&1; echo "shots rc=$? $(( $(date +%s)-t0 ))s $(ls /tmp/shots | wc -l)"
grep -o "device [^(]*(.*" /tmp/shots.log | head -2
tar czf $OUT/call7_shots.tgz -C /tmp shots
timeout $(( 540 - ($(date +%s)-t0) )) python3 benchmarks/tui_latency.py --device cuda --edits 10 --out $OUT/call7_latency.json > $OUT/call7_latency.txt 2>$OUT/call7_latency.log
echo "latency rc=$? $(( $(date +%s)-t0 ))s"; cat $OUT/call7_latency.txt
