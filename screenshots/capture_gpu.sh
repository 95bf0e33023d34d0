#!/usr/bin/env bash
# The README's GPU screenshots, made by the app itself (headless, real worker) on the GPU box, at
# 80x24, 120x40, 160x50 (main, sweep) and 220x60:
#   bash screenshots/capture_gpu.sh OUTDIR
set -uo pipefail
out=${1:?usage: capture_gpu.sh OUTDIR}
mkdir -p "$out"
export KERNEL_TUI_STATE_DIR=$(mktemp -d)
shot() { timeout 240 python3 -m tui.screenshot "$@" || echo "screenshot failed: $*"; }
seed="(a + b).relu()"
shot "$out/gpu_main.svg" --rerun -- "$seed" --device cuda
shot "$out/gpu_sweep.svg" --sweep -- "$seed" --device cuda
shot "$out/gpu_code.svg" --size 120x40 --keys escape,tab,enter -- "$seed" --device cuda
shot "$out/gpu_error.svg" --size 120x40 --keys end,backspace -- "$seed" --device cuda
shot "$out/gpu_80x24.svg" --size 80x24 -- "$seed" --device cuda
shot "$out/gpu_120x40.svg" --size 120x40 -- "$seed" --device cuda
shot "$out/gpu_220x60.svg" --size 220x60 --sweep -- "$seed" --device cuda
shot "$out/gpu_demo.svg" --size 100x30 --demo-step 4 -- demo --device cuda
train=$'x: [N, 4096] bf16\nw: [4096, 4096] bf16\nF.gelu(x @ w)'
shot "$out/gpu_grad.svg" --keys escape,b -- "$train" --workspace "$(mktemp -d)/ws.json" --device cuda --n 4096
shot "$out/gpu_roofline.svg" --keys escape,b,f -- "$train" --workspace "$(mktemp -d)/ws.json" --device cuda --n 4096
shot "$out/gpu_roofline_80x24.svg" --size 80x24 --keys escape,b,f -- "$train" --workspace "$(mktemp -d)/ws.json" --device cuda --n 4096
shot "$out/gpu_dynamic.svg" --sweep -- "$seed" --device cuda --modes static+dynamic
