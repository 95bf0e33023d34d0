#!/usr/bin/env bash
# session 14, call C (the tree of 75d0aab, probes/ as in calls A and B): the GPU screenshots, each
# shot in a state of its own; then one more edit round of the latency benchmark
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
python3 -m compileall -q /tmp/site > /dev/null 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD
t0=$(date +%s)
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; python3 -c "import sys, torch, triton; print('python', sys.version.split()[0], 'torch', torch.__version__, 'triton', triton.__version__)"; nproc; } > $OUT/callC_env.txt 2>&1
rm -rf /tmp/shotsC
timeout 300 bash screenshots/capture.sh cuda /tmp/shotsC > $OUT/callC_screenshots.log 2>&1
tar czf $OUT/callC_screenshots.tgz -C /tmp/shotsC . ; ls /tmp/shotsC | wc -l
echo "shots $(( $(date +%s)-t0 ))s"
timeout 170 python3 benchmarks/tui_latency.py --device cuda --edits 10 --only edit --out $OUT/callC_edit.json > $OUT/callC_edit.txt 2>$OUT/callC_edit.log
echo "edit rc=$? $(( $(date +%s)-t0 ))s"; cat $OUT/callC_edit.txt
