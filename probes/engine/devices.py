"""The devices a worker offers: the default one, a name resolved to a usable device, and each
device's memory and measured peak bandwidth for ``WorkerReady``."""

from __future__ import annotations

import os
import re
from pathlib import Path

import torch

from probes.engine import bandwidth
from probes.engine.errors import MeasureError
from probes.engine.memory_guard import free_memory
from probes.link.protocol import ChainErrorInfo, DeviceInfo
from probes.link.summary import counted


def default_device() -> str:
    return "cuda:0" if torch.cuda.is_available() else "cpu"


NVIDIA_DRIVER_FILE = Path("/proc/driver/nvidia/version")
_DRIVER_VERSION = re.compile(r"Kernel Module(?: for \S+)?\s+([0-9][0-9.]{0,30})")


def nvidia_driver_version(version_file: Path = NVIDIA_DRIVER_FILE) -> str | None:
    """The NVIDIA driver's version (``550.54.15``) as its kernel module states it (Linux), or None
    where there is none to read: torch names the CUDA it was built with, not the driver."""
    try:
        found = _DRIVER_VERSION.search(version_file.read_text(errors="replace")[:4096])
    except OSError:
        return None
    return found.group(1).rstrip(".") if found else None


def _device_info(device: torch.device, label: str, measure_peak: bool) -> DeviceInfo:
    free, total = free_memory(device)
    peak = bandwidth.peak(device) if measure_peak else None
    return DeviceInfo(
        name=str(device),
        label=label,
        total_memory=total,
        free_memory=free,
        peak_gbps=peak.value if peak else None,
        peak_gbps_iqr=peak.iqr if peak else None,
        driver=nvidia_driver_version() if device.type == "cuda" else None,
    )


def list_devices(measure_peak: bool = False) -> list[DeviceInfo]:
    devices = []
    for index in range(torch.cuda.device_count() if torch.cuda.is_available() else 0):
        devices.append(_device_info(torch.device("cuda", index), torch.cuda.get_device_name(index), measure_peak))
    devices.append(_device_info(torch.device("cpu"), f"CPU ({counted(os.cpu_count() or 1, 'core')})", measure_peak))
    return devices


def resolve_device(name: str | None) -> torch.device:
    """``cuda``, ``cuda:1``, ``cpu`` or None (the default) -> a usable torch.device, or MeasureError."""
    text = (name or default_device()).strip().lower()
    try:
        device = torch.device(text)
    except RuntimeError:
        raise MeasureError(ChainErrorInfo("input", f"unknown device '{name}': use cpu, cuda or cuda:N")) from None
    if device.type == "cuda":
        if not torch.cuda.is_available():
            raise MeasureError(ChainErrorInfo("input", "no CUDA device here: use --device cpu"))
        index = device.index if device.index is not None else 0
        if index >= torch.cuda.device_count():
            count = torch.cuda.device_count()
            raise MeasureError(ChainErrorInfo("input", f"there is no {text}: this machine has {count} CUDA device(s)"))
        return torch.device("cuda", index)
    if device.type != "cpu":
        raise MeasureError(ChainErrorInfo("input", f"unsupported device '{name}': use cpu, cuda or cuda:N"))
    return device
