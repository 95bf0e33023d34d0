"""The pipeline's attribute stage: what the measure stage recorded, as a ``Measurement``.

Kernel rows from the profiled launches (``probes.engine.launches``): launches per call = events /
reps, each kernel's device time the median over its launches, device time per call the sum of the
rows; each row's bytes (``probes.engine.bytes_moved``) and FLOPs (``probes.engine.flops``), its
ops, its launch configuration and occupancy (``probes.engine.kernel_launch``); every time with its
interquartile range, and a measurement taken while its spread was wide or the machine busy says so
(``probes.engine.noise``); % of the measured peak bandwidth, a row above it explained.
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING

import torch

from probes.engine import flops
from probes.engine.bytes_moved import KernelKey, op_nodes
from probes.engine.diagnostics import Diagnostics
from probes.engine.kernel_launch import KnownLaunches, device_limits, fill_launches, launch_diagnostics, triton_launches
from probes.engine.launches import Launch
from probes.engine.measure import Measured, OpCalls
from probes.engine.noise import CpuLoad, quartiles, spread_reason
from probes.engine.profile_events import read_kernel_records
from probes.engine.training_step import GRAD_SEED
from probes.link.kernel_names import classify_device_event, short_name, strip_graph_prefix
from probes.link.protocol import KernelRow, Measurement
from probes.link.summary import kernels_over_wall_reason

if TYPE_CHECKING:
    from probes.engine.plan import SizePlan

PEAK_EXCEEDED = 1.0
"""A kernel above this fraction of the measured peak gets an explanation in the diagnostics."""


def _row(
    name: str,
    pass_: str | None,
    times: list[float],
    reps: int,
    aten_op: str | None,
    kernel_bytes: dict[KernelKey, int],
    kernel_ops: dict[KernelKey, list[str]],
) -> KernelRow:
    kind = classify_device_event(name)
    launches_per_call = len(times) / reps
    p25, median, p75 = quartiles(times)
    per_call = median * launches_per_call
    keys = [(strip_graph_prefix(name), pass_), (name, pass_), (strip_graph_prefix(name), None), (name, None)]
    nbytes = next((kernel_bytes[k] for k in keys if k in kernel_bytes), None)
    ops = (
        next((kernel_ops[k] for k in keys if kernel_ops.get(k)), None)
        or ([aten_op] if aten_op else [])
        or ([name] if name.startswith("aten::") else [])
    )
    return KernelRow(
        name=name,
        short_name=short_name(name),
        kind=kind,
        launches_per_call=launches_per_call,
        device_time_us=median,
        time_per_call_us=per_call,
        share=0.0,
        bytes=nbytes,
        gbps=nbytes / (per_call * 1e3) if nbytes and per_call > 0 else None,
        pct_of_peak=None,
        ops=list(ops),
        device_time_us_iqr=[p25, p75],
        pass_=pass_,  # type: ignore[arg-type]
    )


def build_rows(
    launches: list[Launch],
    reps: int,
    kernel_bytes: dict[KernelKey, int],
    kernel_ops: dict[KernelKey, list[str]],
) -> tuple[list[KernelRow], list[KernelRow]]:
    """(kernel rows by time per call, memcpy/memset rows), one per kernel name (and pass, with
    grad), shares filled in."""
    durations: dict[tuple[str, str | None], list[float]] = defaultdict(list)
    aten_of: dict[tuple[str, str | None], str | None] = {}
    for launch in launches:
        key = (launch.name, launch.pass_)
        durations[key].append(launch.duration_us)
        aten_of.setdefault(key, launch.aten_op)
    rows = [
        _row(name, pass_, times, reps, aten_of[(name, pass_)], kernel_bytes, kernel_ops)
        for (name, pass_), times in durations.items()
    ]
    kernels = sorted((r for r in rows if r.kind == "kernel"), key=lambda r: -r.time_per_call_us)
    transfers = [r for r in rows if r.kind != "kernel"]
    total = sum(r.time_per_call_us for r in kernels)
    for row in kernels:
        row.share = row.time_per_call_us / total if total > 0 else 0.0
    return kernels, transfers


def bytes_per_call(kernels: list[KernelRow]) -> int | None:
    """Bytes of the whole call, or None when any kernel's are unknown (never a partial sum)."""
    if not kernels or any(k.bytes is None for k in kernels):
        return None
    return sum(k.bytes for k in kernels if k.bytes is not None)


def device_time(kernels: list[KernelRow]) -> tuple[float, list[float]]:
    """Device time per call and its [p25, p75]: by construction the sum of the kernel rows."""
    total = sum(r.time_per_call_us for r in kernels)
    low = sum(r.launches_per_call * (r.device_time_us_iqr or [r.device_time_us])[0] for r in kernels)
    high = sum(r.launches_per_call * (r.device_time_us_iqr or [r.device_time_us])[-1] for r in kernels)
    return total, [low, high]


def _over_peak_reason(row: KernelRow, device: torch.device) -> str:
    pct = row.pct_of_peak or 0.0
    head = f"{row.short_name} reached {pct:.0f}% of the measured peak bandwidth"
    if device.type == "cpu":
        return f"{head}: at this size its data stays in the CPU caches, which are faster than memory"
    l2 = getattr(torch.cuda.get_device_properties(device), "L2_cache_size", 0)
    if row.bytes is not None and l2 and row.bytes <= 2 * l2:
        return (
            f"{head}: it moves {row.bytes / 1e6:.0f} MB, close to the {l2 / 1e6:.0f} MB L2, "
            "so part of it is served from cache"
        )
    return f"{head}: its mix of reads and writes streams a little better than the copy/triad the peak was measured with"


def apply_peak(measurement: Measurement, peak_gbps: float | None, device: torch.device) -> None:
    """Fill in % of peak for every row, explaining (in the diagnostics) any row above 100%."""
    measurement.peak_gbps = peak_gbps
    for row in measurement.kernels + measurement.transfers:
        row.pct_of_peak = 100 * row.gbps / peak_gbps if row.gbps and peak_gbps else None
    measurement.diagnostics = [d for d in measurement.diagnostics if "of the measured peak bandwidth" not in d]
    for row in measurement.kernels:
        if row.pct_of_peak is not None and row.pct_of_peak > 100 * PEAK_EXCEEDED:
            measurement.diagnostics.append(_over_peak_reason(row, device))


def _noise(
    wall: list[float] | None, device_iqr: list[float], device_us: float, profiled_reps: int, load: CpuLoad | None
) -> list[str]:
    reasons: list[str] = []
    spreads = [spread_reason("device time", device_iqr[0], device_us, device_iqr[1], profiled_reps)]
    if wall is not None:
        p25, median, p75 = quartiles(wall)
        spreads.insert(0, spread_reason("wall time", p25, median, p75, len(wall)))
        spreads.append(kernels_over_wall_reason(device_us, median))
    reasons.extend(reason for reason in spreads if reason)
    if load is not None and load.busy:
        reasons.append(load.reason())
    return reasons


def _ran_eager_reason(
    prepared_reason: str | None, mode: str, compiled_reps: int, reps: int, kernels: list[KernelRow], generated: set[str]
) -> str | None:
    """The fall-back reason, also when compiling looked fine but the measured calls ran eager."""
    if mode == "eager" or prepared_reason:
        return prepared_reason
    ran_generated = any(strip_graph_prefix(k.name) in generated for k in kernels)
    if compiled_reps == 0 and not ran_generated:
        return f"ran eager: none of the {reps} measured calls entered the compiled code"
    return None


def _extern_bytes(kernels: list[KernelRow], bytes_by_pass: OpCalls) -> None:
    """Bytes of the compiled call's kernels that ATen runs (not generated): those of the op's
    calls in the row's pass, where the compile ran each of them (``flops.ran_every_call``) and
    the calls can be told apart (``flops.shares``)."""
    for pass_, calls_by_op in bytes_by_pass.items():
        for op, calls in calls_by_op.items():
            rows = [k for k in kernels if k.pass_ == pass_ and k.bytes is None and k.ops == [op]]
            if not flops.ran_every_call(rows, calls):
                continue
            for row, share in zip(rows, flops.shares(rows, calls), strict=True):
                row.bytes = share
                row.gbps = share / (row.time_per_call_us * 1e3) if share and row.time_per_call_us > 0 else None


def attribute(
    size: SizePlan, mode: str, got: Measured, diagnostics: Diagnostics, peak_gbps: float | None
) -> Measurement:
    """What ``got`` recorded as a Measurement (without a wall time while its reps have not run):
    the kernel rows with their bytes and FLOPs, device and wall time with their spread, the
    compile, the ops, each GPU kernel's launch configuration, % of ``peak_gbps``."""
    chain, n, device, dtype, grad, inputs = size.chain, size.n, size.device, size.dtype, size.grad, size.inputs
    diagnostics = Diagnostics(diagnostics)
    kernels, transfers = build_rows(got.run.launches, got.profiled_reps, got.kernel_bytes, got.kernel_ops)
    if got.kernel_flops is not None:
        for row in kernels:
            row.flops = got.kernel_flops.get((row.name, row.pass_))
    else:
        _extern_bytes(kernels, got.extern_bytes)
        flops.assign(kernels, got.flops_by_pass, frozenset(got.prepared.kernels))
    unknown = list(dict.fromkeys(k.short_name for k in kernels if k.bytes is None))  # a name once, in order
    if unknown and len(unknown) < len(kernels):
        diagnostics.add(f"bytes unknown for {', '.join(unknown)}: no bytes or GB/s for the call as a whole")
    device_us, device_iqr = device_time(kernels)
    wall_us, wall_iqr = None, None
    if got.wall is not None:
        w25, wall_us, w75 = quartiles(got.wall)
        wall_iqr = [w25, w75]
    reasons = _noise(got.wall, device_iqr, device_us, got.profiled_reps, got.load)
    prepared = got.prepared
    fallback = _ran_eager_reason(
        prepared.fallback_reason, mode, got.run.compiled_reps, got.profiled_reps, kernels, set(prepared.kernels)
    )
    outputs = [op for op in got.trace.ops if not op.is_view] if got.trace else []
    measurement = Measurement(
        chain=chain.text,
        mode=mode,
        size=n,
        device=str(device),
        dtype=dtype,
        kernels=kernels,
        transfers=transfers,
        kernels_per_call=sum(k.launches_per_call for k in kernels),
        bytes_per_call=bytes_per_call(kernels),
        device_time_us=device_us,
        wall_time_us=wall_us,
        reps=got.timing_reps,
        ran_compiled=mode != "eager" and fallback is None,
        fallback_reason=fallback,
        compile=prepared.compile_info,
        ops=op_nodes(got.trace, got.op_kernels, prepared),
        input_bytes=sum(t.numel() * t.element_size() for t in inputs),
        output_bytes=outputs[-1].bytes_out if outputs else 0,
        wall_time_us_iqr=wall_iqr,
        device_time_us_iqr=device_iqr,
        noisy=bool(reasons),
        noise_reasons=reasons,
        diagnostics=list(diagnostics),
        grad=grad,
        forward_time_us=sum(k.time_per_call_us for k in kernels if k.pass_ == "forward") if grad else None,
        backward_time_us=sum(k.time_per_call_us for k in kernels if k.pass_ == "backward") if grad else None,
        grad_seed=GRAD_SEED if grad else None,
    )
    if got.peak is not None:
        measurement.peak_memory_bytes = got.peak.call
        measurement.forward_peak_memory_bytes = got.peak.forward
        measurement.backward_peak_memory_bytes = got.peak.backward
    if device.type == "cpu":
        measurement.cpu_threads = torch.get_num_threads()
    elif got.wall is not None:  # the whole result: the early rows do not wait for the trace
        _fill_launches(measurement, got, device)
    apply_peak(measurement, peak_gbps, device)
    flops.fill_rates(measurement)
    return measurement


_known_launches = KnownLaunches()


def _fill_launches(measurement: Measurement, got: Measured, device: torch.device) -> None:
    """Each kernel row's launch configuration and occupancy (``probes.engine.kernel_launch``), read
    from the profile's trace unless this call's were read before; and a line for each kernel that
    spills or runs at low occupancy."""
    prepared = got.prepared
    m = measurement
    key = (m.chain, m.mode, m.size, m.device, m.dtype, m.grad, tuple(id(module) for module in prepared.modules))
    if not _known_launches.fill(key, m.kernels):
        first_correlation: dict[tuple[str, str | None], int] = {}
        for launch in got.run.launches:
            first_correlation.setdefault((launch.name, launch.pass_), launch.correlation_id)
        records = read_kernel_records(got.run.profile) if got.run.profile is not None else {}
        triton = triton_launches(prepared.modules, prepared.kernels, prepared.autotune_trials)
        fill_launches(m.kernels, first_correlation, records, triton, device_limits(device.index or 0))
        if any(row.launch is not None for row in m.kernels):  # a trace that could not be read is read again
            _known_launches.remember(key, m.kernels)
    m.diagnostics.extend(launch_diagnostics(m.kernels))
