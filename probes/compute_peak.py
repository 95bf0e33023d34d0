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
WARMUP_S = 0.1
"""Back-to-back matmuls for this long before the first rep: a lone 8192 matmul lasts ~1 ms on an
H200, and two of them (the earlier warm-up) left the clocks low enough that the training step's
own matmuls ran at 107-115% of the "peak"."""
CALLS_PER_REP = 5
"""Matmuls per timed rep on CUDA, back to back, as a real kernel stream keeps the device busy."""
KEY_VERSION = "v2"
"""Part of the cache key: peaks cached by an older way of measuring are measured again."""


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def measure_compute_peak(device: torch.device, dtype: str) -> Peak:
    """TFLOP/s of ``[S, S] @ [S, S]`` in ``dtype`` at full clocks: the median over repeats, with its IQR."""
    size = MATMUL_SIZE.get(device.type, MATMUL_SIZE["cpu"])
    a = torch.randn(size, size, device=device).to(TORCH_DTYPES[dtype])
    b = torch.randn(size, size, device=device).to(TORCH_DTYPES[dtype])
    flops = 2 * size**3
    window = LoadWindow().start()
    begin = time.perf_counter()
    while time.perf_counter() - begin < WARMUP_S:
        torch.mm(a, b)
        _sync(device)
    rates = []
    for _ in range(REPS):
        if device.type == "cuda":
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(CALLS_PER_REP):
                torch.mm(a, b)
            end.record()
            end.synchronize()
            seconds = start.elapsed_time(end) * 1e-3 / CALLS_PER_REP
        else:
            begin = time.perf_counter()
            torch.mm(a, b)
            seconds = time.perf_counter() - begin
        rates.append(flops / max(seconds, 1e-9) / 1e12)
    p25, median, p75 = quartiles(rates)
    return Peak(median, [p25, p75], f"mm {size}x{size} {dtype}", was_busy([p25, p75], median, window.stop()))


def compute_peak(device: torch.device, dtype: str, *, refresh: bool = False) -> Peak:
    """The cached compute peak (TFLOP/s) of ``dtype`` on ``device``, measured the first time (and
    again when ``refresh``: a kernel beat it)."""
    key = f"{device_key(device)}|{dtype}|tf32 {torch.backends.cuda.matmul.allow_tf32}|{KEY_VERSION}"
    return cached_peak("compute_peak.json", key, lambda: measure_compute_peak(device, dtype), refresh=refresh)
