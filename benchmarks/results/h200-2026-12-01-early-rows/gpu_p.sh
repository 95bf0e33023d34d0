#!/usr/bin/env bash
# call 7 of session 11, the final tree (6bab949: the status bar's clock repaints the bar alone):
# the benchmark's frame, edit and quit sections (the device time left did not cover the whole)
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
python3 -m compileall -q /tmp/site > /dev/null 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"; nproc; } > $OUT/call7_env.txt 2>&1
timeout 200 python3 benchmarks/tui_latency.py --device cuda --edits 10 --pause-s 0 --only frame,edit,quit --out $OUT/call7_latency.json > $OUT/call7_latency.txt 2>$OUT/call7_latency.log
echo "latency rc=$?"; cat $OUT/call7_latency.txt
