"""Peak memory of one call: the most it allocates above what it started with.

Fusion saves intermediate tensors as well as transfers: eager ``(a + b).relu() * c`` holds
``a + b`` (and the relu) while the next op runs, the fused kernel never makes them. The figure is
the chain's own allocations above its inputs, per call, its output included, measured on one
extra call outside the timed reps:

- **CUDA**: the caching allocator's peak (``torch.cuda.reset_peak_memory_stats`` before the
  call, ``max_memory_allocated`` after it, less ``memory_allocated`` before it). Exact in the
  allocator's units: its blocks round a request up to 512 bytes. Under CUDA graphs
  (reduce-overhead, max-autotune) the graph's memory pool is taken at capture: a replay allocates
  only what lies outside it and would read near zero, so the engine leaves those modes' peak
  unknown.
- **CPU**: torch's CPU allocator keeps no peak, so the call runs once under a profile that records
  memory (``profile_memory``); the peak is the largest running total of its allocations and
  frees. The profile costs a few milliseconds, once per measurement.

With grad the forward and the backward are measured apart: the forward's peak (the activations it
saves for the backward are part of it) and the backward's above what the forward left allocated.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from torch.autograd.profiler import profile

from probes.engine import torch_compat
from probes.engine.launches import BACKWARD_LABEL
from probes.engine.training_step import GradStep, backward_of
from probes.engine.watchdog import CALL_BUDGET


@dataclass(frozen=True)
class PeakMemory:
    call: int | None
    forward: int | None = None
    backward: int | None = None


def running_peak(events: list[tuple[int, int]], split_ns: int | None = None) -> tuple[int, int | None, int | None]:
    """(peak of the whole, peak before ``split_ns``, peak from ``split_ns`` on above the total
    there) of a run of (time, bytes) allocations (positive) and frees (negative), from zero."""
    total = peak = 0
    before = after = 0
    at_split: int | None = None
    for when, nbytes in events:
        if split_ns is not None and at_split is None and when >= split_ns:
            at_split = total
        total += nbytes
        peak = max(peak, total)
        if split_ns is None or at_split is None:
            before = max(before, total)
        else:
            after = max(after, total - at_split)
    if split_ns is None:
        return peak, None, None
    return peak, before, after if at_split is not None else 0


def _cpu_peak(call: Callable[[], Any], grad: bool) -> PeakMemory:
    """The profile sees frees too: memory made before it (the last step's gradients, which a
    step sets to None as it starts) is freed outside it, so that its frees do not offset the
    call's own allocations."""
    if isinstance(call, GradStep):
        for leaf in call.leaves:
            leaf.grad = None
    with profile(use_kineto=True, profile_memory=True) as prof, CALL_BUDGET.calls():
        call()
    results = prof.kineto_results
    events = torch_compat.memory_events(results)
    if events is None:
        return PeakMemory(None)
    split = torch_compat.range_start_ns(results, BACKWARD_LABEL) if grad else None
    whole, forward, backward = running_peak(events, split)
    return PeakMemory(whole, forward, backward) if split is not None else PeakMemory(whole)


def _cuda_peak(call: Callable[[], Any], device: torch.device) -> PeakMemory:
    torch.cuda.synchronize(device)
    base = torch.cuda.memory_allocated(device)
    torch.cuda.reset_peak_memory_stats(device)
    with CALL_BUDGET.calls():
        result = call()
        torch.cuda.synchronize(device)
    peak = torch.cuda.max_memory_allocated(device) - base
    del result
    return PeakMemory(max(0, peak))


def _cuda_step_peak(step: GradStep, device: torch.device) -> PeakMemory:
    for leaf in step.leaves:
        leaf.grad = None
    try:
        torch.cuda.synchronize(device)
        base = torch.cuda.memory_allocated(device)
        torch.cuda.reset_peak_memory_stats(device)
        with CALL_BUDGET.calls():
            result = step.forward()
            torch.cuda.synchronize(device)
            forward = torch.cuda.max_memory_allocated(device) - base
            middle = torch.cuda.memory_allocated(device)
            torch.cuda.reset_peak_memory_stats(device)
            backward_of(result, step.seeds)
            torch.cuda.synchronize(device)
            backward = torch.cuda.max_memory_allocated(device) - middle
        del result
    finally:
        for leaf in step.leaves:
            leaf.grad = None
    return PeakMemory(max(forward, middle - base + backward), max(0, forward), max(0, backward))


def measure_peak_memory(call: Callable[[], Any], labelled_call: Callable[[], Any], device: torch.device) -> PeakMemory:
    """The peak of one call of ``call`` (a ``GradStep`` with grad; ``labelled_call``: its twin
    with the backward labelled, for the CPU's profile), on ``device``. Unknown (None) where torch
    cannot say."""
    grad = isinstance(call, GradStep)
    if device.type == "cuda":
        if isinstance(call, GradStep) and call.seeds:
            return _cuda_step_peak(call, device)
        return _cuda_peak(call, device)
    if device.type == "cpu":
        return _cpu_peak(labelled_call if grad else call, grad)
    return PeakMemory(None)
