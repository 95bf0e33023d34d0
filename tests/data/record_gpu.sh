#!/usr/bin/env bash
# Re-record the GPU results that the replay tests, snapshots and README use.
# Run on the GPU box from the repo root:  bash tests/data/record_gpu.sh OUTDIR
# Each file is exactly what `kernel-tui profile --json` printed (date, GPU and torch are inside).
set -uo pipefail
out=${1:?usage: record_gpu.sh OUTDIR}
mkdir -p "$out"
profile() { python3 -c 'import sys; from probes.cli import main; sys.exit(main(sys.argv[1:]))' "$@"; }
profile "(a + b).relu()" --sizes 1e2,1e4,1e6,1e7,1e8 --modes eager,compiled --json > "$out/h200_add_relu_sweep.json"
profile "(a + b).relu()" --sizes 1e6 --modes eager,compiled,max-autotune,reduce-overhead --json > "$out/h200_add_relu_modes.json"
profile "c = a + b" --sizes 8,1e6 --modes eager,compiled --json > "$out/h200_add.json"
profile "(a * b).sum()" --sizes 1e6,1e8 --modes eager,compiled --json > "$out/h200_mul_sum.json"
profile "x: [N, 1024] bf16
w: [1024, 1024] bf16
F.gelu(x @ w)" --sizes 1e3,1e5 --modes eager,compiled --json > "$out/h200_matmul_gelu.json"
profile "torch.nonzero(a > 0)" --sizes 1e6 --modes eager,compiled --json > "$out/h200_nonzero_fallback.json"
# Issue 13: a training-style step (forward + backward, roofline figures) and one symbolic compile
# (dynamic) beside static compiles over the same sweep.
profile "x: [N, 4096] bf16
w: [4096, 4096] bf16
F.gelu(x @ w)" --sizes 1e3,8e3 --modes eager,compiled --grad --json > "$out/h200_gelu_matmul_grad.json"
profile "(a + b).relu()" --sizes 1e4,1e5,1e6,1e7,1e8 --modes compiled,dynamic --json > "$out/h200_add_relu_dynamic.json"
# Issue 44: each kernel's launch (grid, block, registers, shared memory, occupancy) and peak memory
# per mode, eager holding the intermediate that the fused kernel never makes.
profile "(a + b).relu() * c" --sizes 1e6,1e8 --modes eager,compiled,max-autotune --json > "$out/h200_add_relu_mul_makeup.json"
