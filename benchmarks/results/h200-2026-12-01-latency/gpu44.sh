#!/usr/bin/env bash
# session 6, call 4: the GPU roofline screenshots with the fitted table, and the app's GPU-marked tests
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD
t0=$(date +%s)
export KERNEL_TUI_STATE_DIR=$(mktemp -d)
train="x: [N, 4096] bf16
w: [4096, 4096] bf16
F.gelu(x @ w)"
mkdir -p /tmp/shots
timeout 150 python3 -m tui.screenshot /tmp/shots/gpu_roofline.svg --keys escape,b,f -- "$train" --workspace "$(mktemp -d)/ws.json" --device cuda --n 4096
timeout 150 python3 -m tui.screenshot /tmp/shots/gpu_roofline_80x24.svg --size 80x24 --keys escape,b,f -- "$train" --workspace "$(mktemp -d)/ws.json" --device cuda --n 4096
echo "shots $(( $(date +%s)-t0 ))s"; cp /tmp/shots/*.svg $OUT/
timeout 200 python3 -m pytest -q -p no:cacheprovider -m gpu tests/tui > $OUT/call4_pytest.txt 2>&1
echo "tests rc=$? $(( $(date +%s)-t0 ))s"; tail -3 $OUT/call4_pytest.txt
