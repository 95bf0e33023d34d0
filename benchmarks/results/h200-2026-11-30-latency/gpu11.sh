#!/usr/bin/env bash
# call 6: compute peak variants side by side, then the roofline screenshots with the chosen one
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD KERNEL_TUI_STATE_DIR=$(mktemp -d)
t0=$(date +%s)
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"; } > $OUT/env.txt
timeout 60 python3 lab/peak_variants.py > $OUT/compute_peak_variants.jsonl 2>/dev/null; cat $OUT/compute_peak_variants.jsonl
train="x: [N, 4096] bf16
w: [4096, 4096] bf16
F.gelu(x @ w)"
timeout 50 python3 -m tui.screenshot $OUT/gpu_roofline.svg --keys escape,b,f -- "$train" --workspace $(mktemp -d)/ws.json --device cuda --n 4096 > $OUT/shots.log 2>&1
echo "shot roofline rc=$? $(( $(date +%s)-t0 ))s"
timeout 40 python3 -m tui.screenshot $OUT/gpu_grad.svg --keys escape,b -- "$train" --workspace $(mktemp -d)/ws.json --device cuda --n 4096 >> $OUT/shots.log 2>&1
echo "shot grad rc=$? $(( $(date +%s)-t0 ))s"
