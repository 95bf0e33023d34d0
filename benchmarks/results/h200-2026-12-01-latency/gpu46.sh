#!/usr/bin/env bash
# session 6, call 6 (the tree of this commit: a peak is never lowered by a worse reading): the GPU
# roofline screenshots, each app on the compute peak the ones before it cached
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD
t0=$(date +%s)
export KERNEL_TUI_STATE_DIR=$(mktemp -d)
train="x: [N, 4096] bf16
w: [4096, 4096] bf16
F.gelu(x @ w)"
mkdir -p /tmp/shots
for r in 1 2; do
  timeout 150 python3 -m tui.screenshot /tmp/shots/gpu_roofline_$r.svg --keys escape,b,f -- "$train" --workspace "$(mktemp -d)/ws.json" --device cuda --n 4096
  timeout 150 python3 -m tui.screenshot /tmp/shots/gpu_roofline_80x24_$r.svg --size 80x24 --keys escape,b,f -- "$train" --workspace "$(mktemp -d)/ws.json" --device cuda --n 4096
  echo "round $r $(( $(date +%s)-t0 ))s: $(python3 -c "import json,os; d=json.load(open(os.path.expanduser('~/.cache/kernel-tui/compute_peak.json'))); print({k.split('|')[4]: round(v['value']) for k, v in d.items()})")"
done
cp /tmp/shots/*.svg $OUT/
for f in /tmp/shots/*.svg; do echo "$f: $(grep -o 'peak&#160;[0-9]*&#160;TFLOP' $f | head -1)"; done
