"""The device's measured compute peak per dtype: a large matmul, repeated, cached like the
bandwidth peak (per device, driver and torch), with its spread.

"% of compute peak" is against what this device's matmul actually reaches in that dtype with the
process's current settings (TF32 on or off), not a datasheet figure.
"""

from __future__ import annotations

import time

import torch

from probes.bandwidth import Peak, cached_peak, device_key, was_busy
from probes.inputs import TORCH_DTYPES
from probes.noise import LoadWindow, quartiles

MATMUL_SIZE = {"cuda": 8192, "cpu": 1024}
REPS = 10
WARMUP_REPS = 2


def measure_compute_peak(device: torch.device, dtype: str) -> Peak:
    """TFLOP/s of ``[S, S] @ [S, S]`` in ``dtype``: the median over repeats, with its IQR."""
    size = MATMUL_SIZE.get(device.type, MATMUL_SIZE["cpu"])
    a = torch.randn(size, size, device=device).to(TORCH_DTYPES[dtype])
    b = torch.randn(size, size, device=device).to(TORCH_DTYPES[dtype])
    flops = 2 * size**3
    window = LoadWindow().start()
    rates = []
    for rep in range(WARMUP_REPS + REPS):
        if device.type == "cuda":
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            torch.mm(a, b)
            end.record()
            end.synchronize()
            seconds = start.elapsed_time(end) * 1e-3
        else:
            begin = time.perf_counter()
            torch.mm(a, b)
            seconds = time.perf_counter() - begin
        if rep >= WARMUP_REPS:
            rates.append(flops / max(seconds, 1e-9) / 1e12)
    p25, median, p75 = quartiles(rates)
    return Peak(median, [p25, p75], f"mm {size}x{size} {dtype}", was_busy([p25, p75], median, window.stop()))


def compute_peak(device: torch.device, dtype: str) -> Peak:
    """The cached compute peak (TFLOP/s) of ``dtype`` on ``device``, measured the first time."""
    key = f"{device_key(device)}|{dtype}|tf32 {torch.backends.cuda.matmul.allow_tf32}"
    return cached_peak("compute_peak.json", key, lambda: measure_compute_peak(device, dtype))
