"""The pipeline's measure stage: one prepared call run and recorded, at one size in one mode.

The rules: warm up first (the build stage's compile is timed apart); kernel rows come from
profiler device events over several reps (``probes.engine.timing``: flush, reps, the profile);
wall time per call is timed separately, after the rows (which a caller may have first:
``on_rows``), as the median of blocks of back-to-back calls; then one call's peak memory. For a
compiled mode, one eager call records each op's FLOPs and bytes for the attribution
(``probes.engine.attribute``), which turns what is recorded here into a ``Measurement``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch

from probes.engine.bytes_moved import KernelKey, compiled_bytes, eager_bytes
from probes.engine.compiling import CHAIN_NAMESPACE, CUDA_GRAPH_MODES, PreparedCall
from probes.engine.device_lock import measuring
from probes.engine.host_heap import pin_malloc_thresholds
from probes.engine.noise import CpuLoad, LoadWindow
from probes.engine.peak_memory import PeakMemory, measure_peak_memory
from probes.engine.timing import (
    L2Flusher,
    ProfiledRun,
    ProfilerSetUp,
    RepPlan,
    choose_reps,
    measure_wall_time,
    profile_run,
    set_up_ahead,
)
from probes.engine.trace import OpTrace, TracedOp, recording_ops
from probes.engine.training_step import backward_of, outputs_of, seeds_for

if TYPE_CHECKING:
    from probes.engine.plan import SizePlan

OpCalls = dict[str | None, dict[str, list[int]]]
"""Per pass (None without grad), per ATen op: one figure per call, in the order they ran."""


@dataclass
class Measured:
    """Everything one measurement ran and recorded, before it is reduced to a Measurement."""

    prepared: PreparedCall
    run: ProfiledRun
    trace: OpTrace | None
    kernel_bytes: dict[KernelKey, int]
    kernel_ops: dict[KernelKey, list[str]]
    op_kernels: dict[int, list[str]]
    timing_reps: int
    profiled_reps: int
    flops_by_pass: OpCalls
    """Compiled: the FLOPs of each counted op call, per pass, for ``flops.assign``."""
    kernel_flops: dict[KernelKey, int] | None
    """Eager: the FLOPs of each kernel per call, from the attribution pass."""
    extern_bytes: OpCalls
    """Compiled: the bytes of each op call, per pass, for the kernels ATen runs."""
    wall: list[float] | None = None
    """None until the wall-time reps have run."""
    load: CpuLoad | None = None
    peak: PeakMemory | None = None
    """One call's peak memory, measured after the wall-time reps."""


@contextmanager
def ready_to_measure(mode: str, device: torch.device) -> Iterator[ProfilerSetUp | None]:
    """What a measurement sets up before its call is built, for the block around the build and
    the measurement: on the CPU the host heap's thresholds (a call's outputs reused, not faulted
    in anew: ``probes.engine.host_heap``); for a compiled mode the profile, set up while the chain
    compiles (``ProfilerSetUp``, a fast path), and ended if the measurement never uses it."""
    if device.type == "cpu":
        pin_malloc_thresholds()
    set_up: ProfilerSetUp | None = None
    try:
        if mode != "eager" and set_up_ahead():
            set_up = ProfilerSetUp(device)
        yield set_up
    finally:
        if set_up is not None:
            set_up.discard()


def measure(
    size: SizePlan,
    mode: str,
    prepared: PreparedCall,
    flush: L2Flusher,
    set_up: ProfilerSetUp | None,
    on_rows: Callable[[Measured], None] | None = None,
) -> Measured:
    """Run ``prepared`` (the build stage's call) and record it: the rep counts (warming it up on
    the way), the profiled reps, the wall-time reps, one call's peak memory; all while holding
    the device. ``on_rows`` is given what is recorded as soon as the profiled reps end (``wall``
    None). ``set_up``: the profile ``ready_to_measure`` set up."""
    device = size.device
    with measuring(device):
        load_window = LoadWindow().start()
        plan = choose_reps(prepared.call, device, size.reps)
        got = _profile(size, mode, prepared, plan, flush, set_up)
        if on_rows is not None:
            on_rows(got)
        got.wall = measure_wall_time(prepared.call, device, plan, flush)
        got.load = load_window.stop()
        cuda_graphs = mode in CUDA_GRAPH_MODES and device.type == "cuda"
        # a CUDA graph's memory pool is taken at capture: a replay's peak would read ~0, not unknown
        got.peak = (
            PeakMemory(None)
            if cuda_graphs
            else measure_peak_memory(prepared.call, prepared.profiled_call or prepared.call, device)
        )
        return got


def _profile(
    size: SizePlan,
    mode: str,
    prepared: PreparedCall,
    plan: RepPlan,
    flush: L2Flusher,
    set_up: ProfilerSetUp | None,
) -> Measured:
    """The profiled reps (the rows), the bytes and the FLOPs: all but the wall time."""
    device = size.device
    profiled = prepared.profiled_call or prepared.call
    op_kernels: dict[int, list[str]] = {}
    faults = plan.faults_per_call if device.type == "cpu" else None  # a GPU kernel's time pays no host page fault
    if mode == "eager":
        run = profile_run(profiled, device, plan.profiled_reps, flush, labelled_call=profiled, faults_per_call=faults)
        trace = run.trace
        assert trace is not None
        attributed = eager_bytes(trace, run.attribution)
        kernel_bytes, kernel_ops, op_kernels = attributed.bytes, attributed.ops, attributed.op_kernels
        kernel_flops: dict[KernelKey, int] | None = attributed.flops
        flops_by_pass: OpCalls = {}
        extern_bytes: OpCalls = {}
    else:
        forward, flops_by_pass, extern_bytes = _eager_step(size)
        trace = size.trace or forward
        kernel_bytes, kernel_ops = compiled_bytes(prepared)
        kernel_flops = None
        run = profile_run(profiled, device, plan.profiled_reps, flush, faults_per_call=faults, set_up=set_up)
    return Measured(
        prepared,
        run,
        trace,
        kernel_bytes,
        kernel_ops,
        op_kernels,
        plan.timing_reps,
        run.reps,
        flops_by_pass,
        kernel_flops,
        extern_bytes,
    )


def _per_call(trace: OpTrace, figure: Callable[[TracedOp], int | None]) -> dict[str, list[int]]:
    calls: dict[str, list[int]] = {}
    for op in trace.ops:
        value = None if op.is_view else figure(op)
        if value:
            calls.setdefault(op.op, []).append(value)
    return calls


def _eager_step(size: SizePlan) -> tuple[OpTrace | None, OpCalls, OpCalls]:
    """(forward trace, FLOPs, bytes) of one eager call, a training step with grad, every op
    recorded in its pass: the FLOPs for the generated kernels (``flops.assign``), the bytes for
    the kernels a compile leaves to ATen (an extern ``aten::mm``, a CPU ``aten::cumsum``). When
    it fails, nothing (the measurement stands; those figures are unknown)."""
    inputs = size.inputs
    fn = size.chain.build_function(CHAIN_NAMESPACE)
    try:
        with recording_ops() as forward:
            result = fn(*inputs, N=size.n)
        traces: dict[str | None, OpTrace] = {None: forward}
        if size.grad:
            with torch.no_grad():
                seeds = seeds_for(outputs_of(result))
            for leaf in [*inputs, *size.parameters]:  # as in every measured step: no gradient to accumulate into
                leaf.grad = None
            with recording_ops() as backward:
                backward_of(result, seeds)
            traces = {"forward": forward, "backward": backward}
    except Exception:  # the chain already ran; a failure here only means "unknown"
        return None, {}, {}
    finally:
        for leaf in inputs:
            leaf.grad = None
    flops_by_pass = {p: _per_call(t, lambda op: op.flops) for p, t in traces.items()}
    bytes_by_pass = {p: _per_call(t, lambda op: op.bytes_in + op.bytes_out) for p, t in traces.items()}
    return forward, flops_by_pass, bytes_by_pass
