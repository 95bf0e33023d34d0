"""The device's measured peak memory bandwidth: a device-to-device copy, once, cached on disk.

"% of peak" is only honest against what this device can actually do, not a datasheet figure.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import torch

from probes.state_files import user_cache_dir, write_private_file

COPY_BYTES = {"cuda": (1 << 30,), "cpu": (1 << 20, 1 << 23, 1 << 28)}
"""Copy sizes per device type. On CUDA one copy far past L2 gives the HBM peak. On the CPU the best
of several sizes: chains at everyday sizes run from cache, and a peak below what they reach
would show them at several hundred percent."""
REPS = 10


def _cache_path() -> Path:
    return user_cache_dir() / "peak_bandwidth.json"


def _device_key(device: torch.device) -> str:
    if device.type == "cuda":
        name = torch.cuda.get_device_name(device)
    else:
        name = f"cpu-{os.cpu_count()}"
    return f"{name}|torch {torch.__version__}|v2"


def measure_copy_gbps(device: torch.device) -> float:
    """GB/s of ``dst.copy_(src)``, counting bytes read and written: the best over sizes and reps."""
    return max(_copy_gbps(device, nbytes) for nbytes in COPY_BYTES.get(device.type, COPY_BYTES["cpu"]))


def _copy_gbps(device: torch.device, nbytes: int) -> float:
    src = torch.empty(nbytes // 4, dtype=torch.float32, device=device).fill_(1.0)
    dst = torch.empty_like(src)
    times: list[float] = []
    for _ in range(REPS + 2):
        if device.type == "cuda":
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            dst.copy_(src)
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end) * 1e-3)
        else:
            begin = time.perf_counter()
            dst.copy_(src)
            times.append(time.perf_counter() - begin)
    del src, dst
    return 2 * nbytes / min(times[2:]) / 1e9


def peak_gbps(device: torch.device) -> float:
    """The cached peak for this device and torch version, measuring it the first time."""
    path = _cache_path()
    key = _device_key(device)
    try:
        cache = json.loads(path.read_text())
    except (OSError, ValueError):
        cache = {}
    if not isinstance(cache, dict):
        cache = {}
    if isinstance(cache.get(key), (int, float)):
        return float(cache[key])
    value = measure_copy_gbps(device)
    cache[key] = value
    try:
        write_private_file(path, json.dumps(cache, indent=1))
    except OSError:
        pass
    return value
