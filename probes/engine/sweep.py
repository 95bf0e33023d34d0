"""Run a ProfileRequest: every size x mode, each size guarded against the device's free memory.

This is the library entry point: the worker, ``kernel-tui profile`` and a notebook all call
``run_profile`` and receive the same protocol events.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable

import torch

from probes.chain.expr import ChainError, ParsedChain, parse_chain
from probes.engine import bandwidth, flops, torch_compat
from probes.engine.compute_peak import compute_peak, compute_refresh_due
from probes.engine.device_lock import importing_compiler, saying_waits
from probes.engine.diagnostics import capturing
from probes.engine.errors import Cancelled, DevicePoisoned, MeasureError
from probes.engine.inputs import input_specs, make_inputs
from probes.engine.measure import apply_peak, measure
from probes.engine.memory_guard import check_memory, free_memory, release_memory
from probes.engine.timing import L2Flusher
from probes.engine.user_source import SourceChain, check_source_memory, load_source, located, over_budget
from probes.engine.watchdog import CALL_BUDGET, CallOverBudget
from probes.link.protocol import (
    ChainErrorInfo,
    DeviceInfo,
    Event,
    Measurement,
    MeasurementResult,
    ProfileRequest,
    Progress,
    RequestDone,
    RequestFailed,
    Stage,
)
from probes.link.summary import counted

SIZE_ERROR_KINDS = ("input",)
"""Kinds of chain error that planning one size can raise and another size need not: an input's
shape at that N (a dim of 0 at N=100). The sweep skips that size only; any other chain error
would fail the same way at every size, and stops the request."""
MISSED_WORK_SHARE = 0.1
"""A CPU call whose profiled rows add up to less than this share of its wall time..."""
MISSED_WORK_WALL_US = 1000.0
"""...and that takes at least this long did work the profiler's rows do not show."""


def missed_work_reason(m: Measurement) -> str | None:
    """Why the rows of a CPU measurement fall far short of its wall time, or None. On the CPU a
    call's rows are the leaf ATen ops that did its work (probes.engine.launches); an op whose work
    runs under a name the rows do not count (or in a library's own threads) leaves a row of
    microseconds for a call of seconds, which would read as the call's device time. A short call's
    wall time is mostly the host's and says nothing."""
    if not m.device.startswith("cpu") or m.wall_time_us is None or m.wall_time_us < MISSED_WORK_WALL_US:
        return None
    if m.device_time_us >= MISSED_WORK_SHARE * m.wall_time_us:
        return None
    return (
        f"the CPU profiler's rows cover {m.device_time_us / m.wall_time_us:.0%} of a call's wall time: "
        "it missed work this call did (the device time is too low)"
    )


_compiles_budgeted = False


def _budget_compiles() -> None:
    """Stop the call budget's clock while Dynamo compiles (once per process; imports Dynamo, which
    the compiled mode about to run needs anyway)."""
    global _compiles_budgeted
    if not _compiles_budgeted:
        _compiles_budgeted = True
        torch_compat.on_compiles(CALL_BUDGET.compile_started, CALL_BUDGET.compile_ended)


def default_device() -> str:
    return "cuda:0" if torch.cuda.is_available() else "cpu"


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


def run_profile(
    request: ProfileRequest,
    emit: Callable[[Event], None],
    cancelled: Callable[[], bool] = lambda: False,
    before_compile: Callable[[Progress], None] = lambda step: None,
) -> None:
    """Measure ``request`` and emit its events; always ends with RequestDone.

    ``before_compile`` runs before each compiled mode's step (the worker imports the compiler
    there, whole, so that a request's eager rows never wait for it), with that step's Progress.

    A chain error stops the request (it would fail the same way at every size); a memory
    refusal, an out-of-memory, or an input whose shape does not exist at a size (``x: [N // 1024,
    1024]`` at N=100) skips that size only (``SIZE_ERROR_KINDS``). DevicePoisoned propagates: the caller
    (the worker) must exit so that a fresh process gets a fresh CUDA context. What torch reports
    outside a measurement (sizing the chain on meta tensors) joins each result's diagnostics.
    """
    step: list[Progress] = [Progress(request.id, "starting", "inputs")]
    """The request's last step, said again once a wait for the device ends."""

    def say_wait(words: str | None) -> None:
        emit(step[0] if words is None else dataclasses.replace(step[0], message=words, stage="waiting"))

    with capturing() as outside, saying_waits(say_wait):

        def emit_with_diagnostics(event: Event) -> None:
            if isinstance(event, MeasurementResult):
                known = event.measurement.diagnostics
                known[:0] = [line for line in outside if line not in known]
            if isinstance(event, Progress):
                step[0] = event
            emit(event)

        _run_profile(request, emit_with_diagnostics, cancelled, before_compile)


def _source_chain(request: ProfileRequest, device: torch.device) -> ParsedChain:
    """The request's file and name, imported in this process, as the chain to measure."""
    assert request.source is not None
    return load_source(request.source, device, request.dtype, request.grad, request.chain)


def _naming_source(emit: Callable[[Event], None], chain: SourceChain) -> Callable[[Event], None]:
    """``emit`` with each measurement naming the file, the function and the hash measured, and
    saying what the memory guard could not check."""

    def emit_named(event: Event) -> None:
        if isinstance(event, MeasurementResult):
            event.measurement.source = chain.ref
            known = event.measurement.diagnostics
            known.extend(note for note in chain.notes if note not in known)
        emit(event)

    return emit_named


def _run_profile(
    request: ProfileRequest,
    emit: Callable[[Event], None],
    cancelled: Callable[[], bool],
    before_compile: Callable[[Progress], None],
) -> None:
    rid = request.id
    CALL_BUDGET.limit_s = request.call_budget_s  # for the user's code besides its measured calls
    modes = list(dict.fromkeys(request.modes))  # eager,eager measures once
    try:
        parsed = parse_chain(request.chain) if request.source is None else None
        invalid = request.invalid()  # the settings model's limits, as every front end checks them
        if invalid:
            raise MeasureError(ChainErrorInfo("input", invalid))
        device = resolve_device(request.device)
        chain = parsed or _source_chain(request, device)
    except ChainError as exc:
        emit(RequestFailed(rid, exc.info))
        emit(RequestDone(rid))
        return
    except MeasureError as exc:
        emit(RequestFailed(rid, exc.info))
        emit(RequestDone(rid))
        return

    if isinstance(chain, SourceChain):
        emit = _naming_source(emit, chain)
    steps = len(request.sizes) * len(modes)
    step = 0
    peak: float | None = None
    compute_peaks: dict[str, float] = {}
    flush = L2Flusher(device)

    def early_rows(m: Measurement) -> None:
        """The rows before their wall time (with the compute peak where this request has it
        already), then the step that times it."""
        dtype = flops.flop_dtype(m)
        if dtype in compute_peaks:
            flops.apply_compute_peak(m, compute_peaks[dtype])
        emit(MeasurementResult(rid, m))
        emit(Progress(rid, f"timing {m.mode} at N={m.size:,} (wall time)", "measuring", m.mode, m.size, step, steps))

    try:
        for n in request.sizes:
            if cancelled():
                raise Cancelled
            try:
                if isinstance(chain, SourceChain):
                    trace = check_source_memory(chain, n, request.dtype, device)
                else:
                    trace = check_memory(chain, n, request.dtype, device)
                # Not under the device lock: filling them is a few short kernels, and a compile
                # worker that waited here would start its compile only after the eager measurement
                # of the same edit.
                inputs = make_inputs(input_specs(chain, n, request.dtype), device, n)
            except ChainError as exc:
                emit(RequestFailed(rid, exc.info, size=n))
                if exc.info.kind not in SIZE_ERROR_KINDS:
                    break
                step += len(modes)
                continue
            except MeasureError as exc:
                emit(RequestFailed(rid, exc.info, size=n))
                step += len(modes)
                continue
            except torch.OutOfMemoryError:
                emit(
                    RequestFailed(
                        rid, ChainErrorInfo("memory", f"out of memory allocating the inputs at N={n}"), size=n
                    )
                )
                step += len(modes)
                release_memory(device, full=True)
                continue
            if peak is None:
                emit(Progress(rid, f"measuring {device}'s peak bandwidth (once, cached)", "peak", None, n, step, steps))
                peak = bandwidth.peak(device).value
            stop = False
            for mode in modes:
                if cancelled():
                    raise Cancelled
                step += 1
                stage: Stage = "compiling" if mode != "eager" else "measuring"
                verb = "compiling and measuring" if mode != "eager" else "measuring"
                progress = Progress(rid, f"{verb} {mode} at N={n:,}", stage, mode, n, step, steps)
                if mode != "eager":
                    with importing_compiler(device):
                        before_compile(progress)
                        _budget_compiles()
                emit(progress)
                try:
                    with CALL_BUDGET.watching(request.call_budget_s, n, mode):
                        measurement = measure(
                            chain,
                            mode,
                            n,
                            device,
                            request.dtype,
                            inputs,
                            trace=trace,
                            reps=request.reps,
                            peak_gbps=peak,
                            flush=flush,
                            grad=request.grad,
                            on_rows=early_rows if request.rows_before_wall_time(str(device)) else None,
                        )
                except CallOverBudget as exc:
                    # A larger N, or the other modes at this one, would run as long: the request ends,
                    # with one line for all that is left (the line names the size and the mode, or
                    # where in the user's file it was stopped).
                    emit(RequestFailed(rid, over_budget(chain, exc)))
                    release_memory(device, full=True)
                    stop = True
                    break
                except DevicePoisoned:
                    raise
                except MeasureError as exc:
                    emit(RequestFailed(rid, located(chain, exc), size=n, mode=mode))
                    if exc.info.kind == "memory":
                        release_memory(device, full=True)
                        continue
                    if exc.info.kind == "compile":
                        continue
                    stop = True
                    break
                if bandwidth.beaten(peak, [k.gbps for k in measurement.kernels if k.gbps]) and bandwidth.refresh_due(
                    bandwidth.device_key(device)
                ):
                    emit(
                        Progress(
                            rid,
                            f"a kernel beat {device}'s cached peak bandwidth: measuring it again",
                            "peak",
                            mode,
                            n,
                            step,
                            steps,
                        )
                    )
                    peak = bandwidth.peak(device, refresh=True).value
                    apply_peak(measurement, peak, device)
                dtype = flops.flop_dtype(measurement)
                if dtype is not None:
                    if dtype not in compute_peaks:
                        emit(
                            Progress(
                                rid,
                                f"measuring {device}'s {dtype} compute peak (once, cached)",
                                "peak",
                                mode,
                                n,
                                step,
                                steps,
                            )
                        )
                        compute_peaks[dtype] = compute_peak(device, dtype).value
                    if bandwidth.beaten(
                        compute_peaks[dtype], [k.tflops for k in measurement.kernels if k.tflops]
                    ) and compute_refresh_due(device, dtype):
                        emit(
                            Progress(
                                rid,
                                f"a kernel beat {device}'s cached {dtype} compute peak: measuring it again",
                                "peak",
                                mode,
                                n,
                                step,
                                steps,
                            )
                        )
                        compute_peaks[dtype] = compute_peak(device, dtype, refresh=True).value
                    flops.apply_compute_peak(measurement, compute_peaks[dtype])
                missed = missed_work_reason(measurement)
                if missed is not None:
                    measurement.diagnostics.append(missed)
                emit(MeasurementResult(rid, measurement))
            del inputs
            release_memory(device)
            if stop:
                break
    except Cancelled:
        release_memory(device)
        emit(RequestDone(rid, cancelled=True))
        return
    emit(RequestDone(rid))
