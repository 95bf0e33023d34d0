#!/usr/bin/env bash
# session 6, call 5: the compute peak from the profiler's kernels against CUDA events, on a fresh box;
# the roofline screenshots again; the engine's GPU-marked tests
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl > /dev/null 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD
t0=$(date +%s)
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw --format=csv,noheader; } > $OUT/call5_env.txt 2>&1
timeout 120 python3 lab/peak_ab.py > $OUT/call5_peak_ab.txt 2>&1; echo "peak rc=$? $(( $(date +%s)-t0 ))s"; cat $OUT/call5_peak_ab.txt
export KERNEL_TUI_STATE_DIR=$(mktemp -d)
train="x: [N, 4096] bf16
w: [4096, 4096] bf16
F.gelu(x @ w)"
mkdir -p /tmp/shots
timeout 150 python3 -m tui.screenshot /tmp/shots/gpu_roofline.svg --keys escape,b,f -- "$train" --workspace "$(mktemp -d)/ws.json" --device cuda --n 4096
timeout 150 python3 -m tui.screenshot /tmp/shots/gpu_roofline_80x24.svg --size 80x24 --keys escape,b,f -- "$train" --workspace "$(mktemp -d)/ws.json" --device cuda --n 4096
echo "shots $(( $(date +%s)-t0 ))s"; cp /tmp/shots/*.svg $OUT/
cat ~/.cache/kernel-tui/compute_peak.json > $OUT/call5_compute_peak.json 2>/dev/null
timeout 240 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_engine_gpu.py tests/tui > $OUT/call5_pytest.txt 2>&1
echo "tests rc=$? $(( $(date +%s)-t0 ))s"; tail -3 $OUT/call5_pytest.txt
