"""The device's measured compute peak per dtype: a large matmul, repeated, cached like the
bandwidth peak (per device, driver and torch), with its spread.

"% of compute peak" is against what this device's matmul actually reaches in that dtype with the
process's current settings (TF32 on or off), not a datasheet figure.
"""

from __future__ import annotations

import time

import torch

from probes.engine.bandwidth import Peak, cached_peak, device_key, refresh_due, was_busy
from probes.engine.device_lock import measuring
from probes.engine.inputs import TORCH_DTYPES
from probes.engine.noise import LoadWindow, quartiles
from probes.engine.timing import WARMUP_MIN_S, L2Flusher, sync

MATMUL_SIZE = {"cuda": 4096, "cpu": 1024}
REPS = 10
KEY_VERSION = "v3"
"""Part of the cache key: peaks cached by an older way of measuring are measured again."""


def measure_compute_peak(device: torch.device, dtype: str) -> Peak:
    """TFLOP/s of ``[S, S] @ [S, S]`` in ``dtype`` as the tool measures a chain's kernels: at full
    clocks, each rep one matmul after the L2 flush; the median over repeats, with its IQR.

    Not back to back: a stream of large matmuls runs into the power limit and sustains less than a
    training step's matmuls reach, each after a flush; two lone matmuls as the only warm-up leave
    the clocks low. Either way a measured kernel would stand above its roof.
    """
    with measuring(device):
        return _measure_compute_peak(device, dtype)


def _measure_compute_peak(device: torch.device, dtype: str) -> Peak:
    size = MATMUL_SIZE.get(device.type, MATMUL_SIZE["cpu"])
    a = torch.randn(size, size, device=device).to(TORCH_DTYPES[dtype])
    b = torch.randn(size, size, device=device).to(TORCH_DTYPES[dtype])
    flops = 2 * size**3
    flush = L2Flusher(device)
    window = LoadWindow().start()
    # Warmed up as a chain is: the clocks are up, and the device is not yet held at its power limit
    # (a longer warm-up of matmuls leaves the reps below what a chain's matmuls reach).
    begin = time.perf_counter()
    while time.perf_counter() - begin < WARMUP_MIN_S:
        torch.mm(a, b)
        sync(device)
    rates = []
    for _ in range(REPS):
        flush()
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
        rates.append(flops / max(seconds, 1e-9) / 1e12)
    p25, median, p75 = quartiles(rates)
    return Peak(median, [p25, p75], f"mm {size}x{size} {dtype}", was_busy([p25, p75], median, window.stop()))


def compute_peak(device: torch.device, dtype: str, *, refresh: bool = False) -> Peak:
    """The cached compute peak (TFLOP/s) of ``dtype`` on ``device``, measured the first time (and
    again when ``refresh``: a kernel beat it)."""
    return cached_peak(
        "compute_peak.json", _key(device, dtype), lambda: measure_compute_peak(device, dtype), refresh=refresh
    )


def compute_refresh_due(device: torch.device, dtype: str) -> bool:
    """A refresh of this compute peak would measure it: none has in this process."""
    return refresh_due(_key(device, dtype))


def _key(device: torch.device, dtype: str) -> str:
    return f"{device_key(device)}|{dtype}|tf32 {torch.backends.cuda.matmul.allow_tf32}|{KEY_VERSION}"
