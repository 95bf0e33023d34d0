"""The GPU's context, made by the driver while the worker imports torch.

A worker's start on a GPU is ``import torch`` (seconds), then the device's context (a fraction of
a second), then the memory guard's first run: the first eager rows of a launch wait for all of it.
The context is the CUDA driver's work: made here through ``libcuda`` on a thread of its own
(ctypes lets go of the GIL), it is ready by the time torch has imported, and torch's runtime uses
it, since the runtime works in each device's primary context. Where there is no CUDA driver, or
the fast paths are off (``probes.link.fast_paths``), nothing is started.

This module never imports torch: it runs before torch is imported.
"""

from __future__ import annotations

import ctypes
import os
import threading
from collections.abc import Callable
from typing import Any

from probes.link import fast_paths

CUDA_SUCCESS = 0


def make_primary_context(lib: Any, ordinal: int = 0) -> ctypes.c_void_p | None:
    """Initialise the driver and retain device ``ordinal``'s primary context (kept for the life of
    the process, as torch keeps it); None where a step fails (no device, a broken driver)."""
    if lib.cuInit(0) != CUDA_SUCCESS:
        return None
    device = ctypes.c_int()
    if lib.cuDeviceGet(ctypes.byref(device), ordinal) != CUDA_SUCCESS:
        return None
    context = ctypes.c_void_p()
    if lib.cuDevicePrimaryCtxRetain(ctypes.byref(context), device) != CUDA_SUCCESS:
        return None
    return context


def start_driver_context(load: Callable[[str], Any] = ctypes.CDLL) -> threading.Thread | None:
    """Make device 0's context on a daemon thread, where a CUDA driver can be loaded."""
    if not fast_paths.enabled("driver_context"):
        return None
    try:
        lib = load("libcuda.so.1")
    except OSError:
        return None
    os.environ.setdefault("CUDA_MODULE_LOADING", "LAZY")  # as torch sets it before its own first call
    thread = threading.Thread(target=make_primary_context, args=(lib,), name="driver-context", daemon=True)
    thread.start()
    return thread
