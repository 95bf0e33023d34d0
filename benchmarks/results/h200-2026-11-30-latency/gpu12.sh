#!/usr/bin/env bash
# call 7: the compute peak with a chain's warm-up, and the roofline screenshot with it
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD KERNEL_TUI_STATE_DIR=$(mktemp -d)
t0=$(date +%s)
date -u > $OUT/env.txt
python3 -c "
import torch, json
from probes.compute_peak import measure_compute_peak
for i in range(3): print(json.dumps({'bf16_tflops': round(measure_compute_peak(torch.device('cuda'), 'bf16').value, 1)}))
" > $OUT/compute_peak.jsonl 2>/dev/null; cat $OUT/compute_peak.jsonl
train="x: [N, 4096] bf16
w: [4096, 4096] bf16
F.gelu(x @ w)"
timeout 45 python3 -m tui.screenshot $OUT/gpu_roofline.svg --keys escape,b,f -- "$train" --workspace $(mktemp -d)/ws.json --device cuda --n 4096 > $OUT/shots.log 2>&1
echo "shot roofline rc=$? $(( $(date +%s)-t0 ))s"
grep -o "bf16 peak [0-9,]*" $OUT/gpu_roofline.svg | head -1
