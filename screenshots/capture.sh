#!/usr/bin/env bash
# The README's screenshots, made by the app itself (headless, real worker), at 80x24, 120x40,
# 160x50 (main, sweep, code, error, grad, roofline, dynamic) and 220x60, plus the demo:
#   bash screenshots/capture.sh cuda OUTDIR    # on the GPU box: gpu_*.svg
#   bash screenshots/capture.sh cpu OUTDIR     # anywhere: cpu_*.svg
set -uo pipefail
device=${1:?usage: capture.sh cuda|cpu OUTDIR}
out=${2:?usage: capture.sh cuda|cpu OUTDIR}
mkdir -p "$out"
python=$(command -v python3 || command -v python)
prefix=$([ "$device" = cpu ] && echo cpu || echo gpu)
# Each shot in a state of its own: one shot's edits (the error shot's) are not the next one's workspace.
shot() { name=$1; shift; KERNEL_TUI_STATE_DIR=$(mktemp -d) timeout 240 "$python" -m tui.screenshot "$out/${prefix}_$name.svg" "$@" || echo "screenshot failed: $name"; }
workspace() { mktemp -d; }
seed="(a + b).relu()"
if [ "$device" = cpu ]; then dim=512 n=1024; else dim=4096 n=4096; fi
train="x: [N, $dim] bf16
w: [$dim, $dim] bf16
F.gelu(x @ w)"
shot main --rerun -- "$seed" --device "$device"
shot sweep --sweep -- "$seed" --device "$device"
shot code --size 120x40 --keys escape,tab,enter -- "$seed" --device "$device"
shot error --size 120x40 --keys end,backspace -- "$seed" --device "$device"
shot 80x24 --size 80x24 -- "$seed" --device "$device"
shot 120x40 --size 120x40 -- "$seed" --device "$device"
shot 220x60 --size 220x60 --sweep -- "$seed" --device "$device"
shot demo --size 100x30 --demo-step 4 -- demo --device "$device"
shot grad --keys escape,b -- "$train" --workspace "$(workspace)/ws.json" --device "$device" --n "$n"
shot roofline --keys escape,b,f -- "$train" --workspace "$(workspace)/ws.json" --device "$device" --n "$n"
shot roofline_80x24 --size 80x24 --keys escape,b,f -- "$train" --workspace "$(workspace)/ws.json" --device "$device" --n "$n"
shot dynamic --sweep -- "$seed" --device "$device" --modes static+dynamic
