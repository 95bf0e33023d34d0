#!/usr/bin/env bash
# call 3: a fresh worker's first rows, _compile's parts, the edit latency (10 chains)
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD
t0=$(date +%s)
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"; } > $OUT/env.txt
python3 -X importtime -c "import torch" 2>&1 | tail -1 >> $OUT/env.txt
for i in 1 2 3; do timeout 60 python3 lab/first_rows.py cuda >> $OUT/first_rows.jsonl 2>>$OUT/first_rows.err; done
echo "first rows $(( $(date +%s)-t0 ))s"; cat $OUT/first_rows.jsonl
timeout 60 python3 lab/compile_gpu.py cuda 2>/dev/null | grep '^{' > $OUT/compile_parts.jsonl
echo "compile parts $(( $(date +%s)-t0 ))s"; cat $OUT/compile_parts.jsonl
timeout $(( 400 - ($(date +%s)-t0) )) python3 benchmarks/tui_latency.py --device cuda --edits 10 --only edit --out $OUT/latency_edit.json > $OUT/latency_edit.txt 2>$OUT/latency_edit.log
echo "latency rc=$? $(( $(date +%s)-t0 ))s"
cat $OUT/latency_edit.txt; tail -3 $OUT/latency_edit.log
