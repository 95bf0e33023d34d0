#!/usr/bin/env bash
# session 20, call D (the final tree, 4de92fb: 96f8935 with docs and two unused properties gone): the whole latency benchmark
# again, then its edit round again, for more readings of a new chain's compiled rows against a bare compile
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
python3 -m compileall -q /tmp/site > /dev/null 2>&1
export PYTHONUNBUFFERED=1
t0=$(date +%s)
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; uptime; } > $OUT/s20D_env.txt 2>&1
PYTHONPATH=/tmp/site:$PWD timeout 260 python3 benchmarks/tui_latency.py --device cuda --edits 20 --out $OUT/s20D_latency.json > $OUT/s20D_latency.txt 2>/dev/null
echo "latency rc=$? $(( $(date +%s)-t0 ))s"; cat $OUT/s20D_latency.txt
PYTHONPATH=/tmp/site:$PWD timeout $(( 580 - ($(date +%s)-t0) )) python3 benchmarks/tui_latency.py --device cuda --edits 20 --pause-s 0 --only edit --out $OUT/s20D_edit.json > $OUT/s20D_edit.txt 2>/dev/null
echo "edit rc=$? $(( $(date +%s)-t0 ))s"; grep "chain by chain\|new_eager\|new_compiled \|hit_\|median / median\|bare" $OUT/s20D_edit.txt
