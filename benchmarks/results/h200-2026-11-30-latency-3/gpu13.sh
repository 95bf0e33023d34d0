#!/usr/bin/env bash
# session 3, call 1: worker start steps, kill time, sweep per size, the whole latency benchmark
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD
t0=$(date +%s)
{ date -u; git log --oneline -1 2>/dev/null; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"; } > $OUT/env.txt
for i in 1 2; do python3 -X importtime -c "import torch" 2>&1 | tail -1 >> $OUT/env.txt; done
for i in 1 2 3; do timeout 60 python3 lab/worker_start.py >> $OUT/worker_start.jsonl 2>/dev/null; done
echo "worker start $(( $(date +%s)-t0 ))s"; cat $OUT/worker_start.jsonl
timeout 120 python3 lab/kill_time.py cuda 2 > $OUT/kill_time.json 2>/dev/null
echo "kill $(( $(date +%s)-t0 ))s"; cat $OUT/kill_time.json
timeout 120 python3 lab/sweep_phases.py cuda > $OUT/sweep_phases.jsonl 2>/dev/null
echo "sweep $(( $(date +%s)-t0 ))s"; cat $OUT/sweep_phases.jsonl | cut -c1-1500
timeout $(( 570 - ($(date +%s)-t0) )) python3 benchmarks/tui_latency.py --device cuda --edits 10 --out $OUT/latency.json > $OUT/latency.txt 2>$OUT/latency.log
echo "latency rc=$? $(( $(date +%s)-t0 ))s"
cat $OUT/latency.txt; tail -3 $OUT/latency.log
