#!/usr/bin/env bash
# call 2 of this session: a request's phases with this engine, then the whole latency benchmark
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD
t0=$(date +%s)
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"; nproc; git log -1 --format=%H; } > $OUT/env.txt
timeout 100 python3 lab/phases.py cuda 1e6 2>/dev/null | grep '^{' > $OUT/phases.jsonl
echo "phases rc=$? $(( $(date +%s)-t0 ))s"
timeout $(( 560 - ($(date +%s)-t0) )) python3 benchmarks/tui_latency.py --device cuda --edits 10 --out $OUT/latency.json > $OUT/latency.txt 2>$OUT/latency.log
echo "latency rc=$? $(( $(date +%s)-t0 ))s"
cat $OUT/latency.txt; tail -5 $OUT/latency.log
