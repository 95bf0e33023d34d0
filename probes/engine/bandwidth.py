"""The device's measured peak memory bandwidth, STREAM-like, cached per device + driver + torch.

"% of peak" is only honest against what this device can actually do, not a datasheet figure. As
STREAM does, the peak is taken from two kernels, copy (``b = a``: one read, one write) and triad
(``a = b + s * c``: two reads, one write, the mix of most elementwise chains), each repeated; a
kernel's sustained rate is the median over its repeats, and the peak is the best of those, with
that kernel's interquartile range as its spread.

A cached value is measured again when it was taken on a busy machine (its spread was wide, or
other processes loaded the CPU) and when a kernel beats it by more than ``BEATEN_BY``.
"""

from __future__ import annotations

import functools
import json
import os
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import torch

from probes.engine import torch_compat
from probes.engine.device_lock import measuring
from probes.engine.noise import CpuLoad, LoadWindow, iqr_is_wide, quartiles
from probes.link.state_files import user_cache_dir, write_private_file

ARRAY_BYTES = {"cuda": (1 << 30,), "cpu": (1 << 20, 1 << 23, 1 << 27)}
"""Bytes per array by device type. On CUDA one size far past L2 gives the HBM peak. On the CPU
the best of several sizes: chains at everyday sizes run from cache, and a peak below what they
reach would show them at several hundred percent."""
REPS = 15
WARMUP_REPS = 3
BEATEN_BY = 1.10
CACHE_VERSION = "v3"


@dataclass
class Peak:
    """A measured peak rate (GB/s here, TFLOP/s in probes.engine.compute_peak) with its spread."""

    value: float
    iqr: list[float]
    """[p25, p75] of the winning kernel's rate over its repeats."""
    kernel: str
    """What was run, e.g. ``copy, 1024 MiB arrays``."""
    busy: bool
    """Measured while the machine was busy: measure again next time."""


def _timed_rates(device: torch.device, op: Callable[[], Any], nbytes_moved: int) -> list[float]:
    """GB/s of each repeat of ``op`` (warm-up repeats dropped)."""
    rates = []
    for rep in range(WARMUP_REPS + REPS):
        if device.type == "cuda":
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            op()
            end.record()
            end.synchronize()
            seconds = start.elapsed_time(end) * 1e-3
        else:
            begin = time.perf_counter()
            op()
            seconds = time.perf_counter() - begin
        if rep >= WARMUP_REPS:
            rates.append(nbytes_moved / max(seconds, 1e-9) / 1e9)
    return rates


def _array_bytes(device: torch.device) -> tuple[int, ...]:
    sizes = ARRAY_BYTES.get(device.type, ARRAY_BYTES["cpu"])
    if device.type == "cuda":
        free, _ = torch.cuda.mem_get_info(device)
        return tuple(min(size, free // 8) for size in sizes)
    return sizes


def was_busy(iqr: list[float], median: float, load: CpuLoad | None) -> bool:
    """A peak taken with a wide spread, or while other processes loaded the CPU, is not trusted."""
    return iqr_is_wide(iqr[0], median, iqr[1]) or (load is not None and load.busy)


def measure_peak(device: torch.device) -> Peak:
    """Copy and triad at each array size; the best sustained (median) rate wins."""
    with measuring(device):
        return _measure_peak(device)


def _measure_peak(device: torch.device) -> Peak:
    window = LoadWindow().start()
    best: tuple[float, list[float], str] | None = None
    for nbytes in _array_bytes(device):
        n = max(1, nbytes // 4)
        a = torch.ones(n, dtype=torch.float32, device=device)
        b = torch.empty_like(a)
        c = torch.ones_like(a)
        kernels: dict[str, tuple[Callable[[], Any], int]] = {
            "copy": (functools.partial(b.copy_, a), 2 * n * 4),
            "triad": (functools.partial(torch.add, b, c, alpha=3.0, out=a), 3 * n * 4),
        }
        for name, (op, moved) in kernels.items():
            p25, median, p75 = quartiles(_timed_rates(device, op, moved))
            if best is None or median > best[0]:
                best = (median, [p25, p75], f"{name}, {nbytes >> 20} MiB arrays")
        del a, b, c, kernels
    assert best is not None
    load = window.stop()
    gbps, iqr, kernel = best
    return Peak(gbps, iqr, kernel, was_busy(iqr, gbps, load))


def _driver() -> str:
    version = torch_compat.cuda_driver_version()
    return f"driver {version}" if version is not None else "driver ?"


def device_key(device: torch.device) -> str:
    if device.type == "cuda":
        name = f"{torch.cuda.get_device_name(device)}|{_driver()}"
    else:
        name = f"cpu-{os.cpu_count()}"
    return f"{name}|torch {torch.__version__}|{CACHE_VERSION}"


def _read_cache(path: Path) -> dict[str, Any]:
    try:
        cache = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return cache if isinstance(cache, dict) else {}


def _cached(path: Path, key: str) -> Peak | None:
    entry = _read_cache(path).get(key)
    if not isinstance(entry, dict):
        return None
    try:
        return Peak(float(entry["value"]), [float(x) for x in entry["iqr"]], str(entry["kernel"]), bool(entry["busy"]))
    except (TypeError, KeyError, ValueError):
        return None


def _store(path: Path, key: str, peak: Peak) -> None:
    cache = _read_cache(path)
    cache[key] = asdict(peak)
    try:
        write_private_file(path, json.dumps(cache, indent=1))
    except OSError:
        pass


_refreshed: set[str] = set()
"""Keys re-measured in this process because a kernel beat them: once is enough."""
_measured: set[str] = set()
"""Keys measured in this process. A peak taken on a busy machine is measured again by the next
process, not at each request: on a loaded CPU machine each request paid seconds for it."""


def refresh_due(key: str) -> bool:
    """A refresh of ``key`` would measure it: none has in this process."""
    return key not in _refreshed


def cached_peak(filename: str, key: str, measure: Callable[[], Peak], refresh: bool = False) -> Peak:
    """The peak cached under ``key`` in the user's cache ``filename``; measured when missing,
    when it was taken on a busy machine (once per process), or when ``refresh`` (once per
    process and key).

    A peak is the most the device reaches, so a measurement that reads lower than the cached one
    replaces it only when the cached one was taken on a busy machine and this one was not. A
    refresh is asked for because a kernel went past the peak, yet a refresh can read well below
    both the cached peak and the kernels that went past it (a GPU at its power limit)."""
    try:
        path: Path | None = user_cache_dir() / filename
    except OSError:  # an unusable cache directory: measured each time, said by the app and the CLI
        path = None
    refresh = refresh and key not in _refreshed
    if refresh:
        _refreshed.add(key)
    cached = _cached(path, key) if path else None
    if cached is not None and not refresh and (not cached.busy or key in _measured):
        return cached
    measured = measure()
    _measured.add(key)
    if cached is not None and cached.value > measured.value and (measured.busy or not cached.busy):
        measured = cached
    if path is not None:
        _store(path, key, measured)
    return measured


def peak(device: torch.device, *, refresh: bool = False) -> Peak:
    """The device's peak bandwidth (GB/s), cached per device, driver and torch."""
    return cached_peak("peak_bandwidth.json", device_key(device), lambda: measure_peak(device), refresh)


def beaten(peak_gbps: float | None, kernel_gbps: list[float]) -> bool:
    """A kernel went more than BEATEN_BY past the peak: the peak was probably taken badly."""
    if not peak_gbps:
        return False
    return any(g > BEATEN_BY * peak_gbps for g in kernel_gbps)
