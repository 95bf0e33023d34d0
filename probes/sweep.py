"""Run a ProfileRequest: every size x mode, each size guarded against the device's free memory.

This is the library entry point: the worker, ``kernel-tui profile`` and a notebook all call
``run_profile`` and receive the same protocol events.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Callable

import torch

from probes.bandwidth import peak_gbps
from probes.expr import ChainError, parse_chain
from probes.inputs import input_specs, make_inputs
from probes.measure import Cancelled, DevicePoisoned, L2Flusher, MeasureError, measure
from probes.memory_guard import check_memory, free_memory
from probes.protocol import (
    MODES,
    ChainErrorInfo,
    DeviceInfo,
    Event,
    MeasurementResult,
    ProfileRequest,
    Progress,
    RequestDone,
    RequestFailed,
)

def default_device() -> str:
    return "cuda:0" if torch.cuda.is_available() else "cpu"


def list_devices(measure_peak: bool = False) -> list[DeviceInfo]:
    devices = []
    for index in range(torch.cuda.device_count() if torch.cuda.is_available() else 0):
        device = torch.device("cuda", index)
        free, total = free_memory(device)
        devices.append(
            DeviceInfo(
                name=str(device),
                label=torch.cuda.get_device_name(index),
                total_memory=total,
                free_memory=free,
                peak_gbps=peak_gbps(device) if measure_peak else None,
            )
        )
    cpu = torch.device("cpu")
    free, total = free_memory(cpu)
    devices.append(
        DeviceInfo(
            name="cpu",
            label=f"CPU ({os.cpu_count()} cores)",
            total_memory=total,
            free_memory=free,
            peak_gbps=peak_gbps(cpu) if measure_peak else None,
        )
    )
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


def _release(device: torch.device) -> None:
    gc.collect()
    if device.type == "cuda":
        torch.cuda.empty_cache()


def run_profile(
    request: ProfileRequest,
    emit: Callable[[Event], None],
    cancelled: Callable[[], bool] = lambda: False,
) -> None:
    """Measure ``request`` and emit its events; always ends with RequestDone.

    A chain error stops the request (it would fail the same way at every size); a memory
    refusal or an out-of-memory skips that size only. DevicePoisoned propagates: the caller
    (the worker) must exit so that a fresh process gets a fresh CUDA context.
    """
    rid = request.id
    try:
        chain = parse_chain(request.chain)
        unknown = [mode for mode in request.modes if mode not in MODES]
        if unknown:
            raise MeasureError(ChainErrorInfo("input", f"unknown mode '{unknown[0]}': use {', '.join(MODES)}"))
        bad_sizes = [size for size in request.sizes if size <= 0]
        if bad_sizes:
            raise MeasureError(ChainErrorInfo("input", f"size {bad_sizes[0]} is not positive"))
        device = resolve_device(request.device)
    except ChainError as exc:
        emit(RequestFailed(rid, exc.info))
        emit(RequestDone(rid))
        return
    except MeasureError as exc:
        emit(RequestFailed(rid, exc.info))
        emit(RequestDone(rid))
        return

    steps = len(request.sizes) * len(request.modes)
    step = 0
    peak: float | None = None
    flush = L2Flusher(device)
    try:
        for n in request.sizes:
            if cancelled():
                raise Cancelled
            try:
                trace = check_memory(chain, n, request.dtype, device)
                inputs = make_inputs(input_specs(chain, n, request.dtype), device, n)
            except ChainError as exc:
                emit(RequestFailed(rid, exc.info, size=n))
                break
            except MeasureError as exc:
                emit(RequestFailed(rid, exc.info, size=n))
                step += len(request.modes)
                continue
            except torch.OutOfMemoryError:
                emit(RequestFailed(rid, ChainErrorInfo("memory", f"out of memory allocating the inputs at N={n}"), size=n))
                step += len(request.modes)
                _release(device)
                continue
            if peak is None:
                emit(Progress(rid, f"measuring {device}'s peak bandwidth (once, cached)", "peak", None, n, step, steps))
                peak = peak_gbps(device)
            stop = False
            for mode in request.modes:
                if cancelled():
                    raise Cancelled
                step += 1
                verb, stage = ("compiling and measuring", "compiling") if mode != "eager" else ("measuring", "measuring")
                emit(Progress(rid, f"{verb} {mode} at N={n:,}", stage, mode, n, step, steps))
                try:
                    measurement = measure(
                        chain, mode, n, device, request.dtype, inputs,
                        trace=trace, reps=request.reps, peak_gbps=peak, flush=flush,
                    )
                except DevicePoisoned:
                    raise
                except MeasureError as exc:
                    emit(RequestFailed(rid, exc.info, size=n, mode=mode))
                    if exc.info.kind == "memory":
                        _release(device)
                        continue
                    if exc.info.kind == "compile":
                        continue
                    stop = True
                    break
                emit(MeasurementResult(rid, measurement))
            del inputs
            _release(device)
            if stop:
                break
    except Cancelled:
        _release(device)
        emit(RequestDone(rid, cancelled=True))
        return
    emit(RequestDone(rid))
