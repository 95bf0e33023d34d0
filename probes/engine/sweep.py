"""Run a ProfileRequest: every size x mode, through the engine's pipeline.

This is the library entry point: the worker, ``kernel-tui profile`` and a notebook all call
``run_profile`` and receive the same protocol events. The pipeline, each stage a module with one
entry point, called from here and never calling back into an earlier stage:

- plan (``probes.engine.plan``): the request once (``plan_request``: settings, device, the chain
  parsed or the user's file imported), then each size once (``plan_size``: the memory guard, the
  inputs);
- build (``probes.engine.compiling.prepare``): the callable for each mode at that size, warmed up;
- measure (``probes.engine.measure.measure``): rep counts, the profiled reps, the wall-time reps,
  one call's peak memory;
- attribute (``probes.engine.attribute.attribute``): kernel rows, bytes, FLOPs, launch
  configurations, spread -> a ``Measurement``;
- result: against the device's peaks (``probes.engine.peaks``), emitted.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import torch

from probes.chain.expr import ChainError
from probes.engine import torch_compat
from probes.engine.attribute import attribute
from probes.engine.compiling import prepare
from probes.engine.device_lock import importing_compiler, saying_waits
from probes.engine.diagnostics import capturing
from probes.engine.errors import Cancelled, DevicePoisoned, MeasureError, classify_failure
from probes.engine.measure import Measured, measure, ready_to_measure
from probes.engine.memory_guard import release_memory
from probes.engine.peaks import RequestPeaks
from probes.engine.plan import RequestPlan, SizePlan, plan_request, plan_size
from probes.engine.timing import L2Flusher
from probes.engine.user_source import SourceChain, located, over_budget
from probes.engine.watchdog import CALL_BUDGET, CallOverBudget
from probes.link.protocol import (
    ChainErrorInfo,
    Event,
    Measurement,
    MeasurementResult,
    ProfileRequest,
    Progress,
    RequestDone,
    RequestFailed,
    Stage,
)

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
    try:
        plan = plan_request(request)
    except (ChainError, MeasureError) as exc:
        emit(RequestFailed(rid, exc.info))
        emit(RequestDone(rid))
        return
    if plan.source is not None:
        emit = _naming_source(emit, plan.source)
    try:
        _Sweep(plan, emit, cancelled, before_compile).run()
    except Cancelled:
        release_memory(plan.device)
        emit(RequestDone(rid, cancelled=True))
        return
    emit(RequestDone(rid))


class _Sweep:
    """One request's sizes x modes, in order: each size planned, then each mode built, measured,
    attributed and emitted. Counts the steps for the progress it says."""

    def __init__(
        self,
        plan: RequestPlan,
        emit: Callable[[Event], None],
        cancelled: Callable[[], bool],
        before_compile: Callable[[Progress], None],
    ) -> None:
        self.plan = plan
        self.rid = plan.request.id
        self.emit = emit
        self.cancelled = cancelled
        self.before_compile = before_compile
        self.steps = len(plan.request.sizes) * len(plan.modes)
        self.step = 0
        self.peaks = RequestPeaks(plan.device)
        self.flush = L2Flusher(plan.device)

    def _say_peak(self, words: str, mode: str | None, n: int) -> None:
        self.emit(Progress(self.rid, words, "peak", mode, n, self.step, self.steps))

    def run(self) -> None:
        """Every size in order; the request ends early where a size says the rest would fail."""
        for n in self.plan.request.sizes:
            if self.cancelled():
                raise Cancelled
            try:
                size = self._plan(n)
            except _EveryLaterSizeFails:
                return
            if size is None:
                self.step += len(self.plan.modes)
                continue
            for words in self.peaks.ready():
                self._say_peak(words, None, n)
            stop = any(self._mode(size, mode) for mode in self.plan.modes)
            del size  # the inputs: freed before the next size's are made
            release_memory(self.plan.device)
            if stop:
                return

    def _plan(self, n: int) -> SizePlan | None:
        """Size ``n`` planned; None for a size skipped (said). Raises _EveryLaterSizeFails (said)
        for an error that does not depend on the size."""
        plan, rid = self.plan, self.rid
        try:
            return plan_size(plan, n)
        except ChainError as exc:
            self.emit(RequestFailed(rid, exc.info, size=n))
            if exc.info.kind not in SIZE_ERROR_KINDS:
                raise _EveryLaterSizeFails from None
            return None
        except MeasureError as exc:
            self.emit(RequestFailed(rid, exc.info, size=n))
            return None
        except torch.OutOfMemoryError:
            message = f"out of memory allocating the inputs at N={n}"
            self.emit(RequestFailed(rid, ChainErrorInfo("memory", message), size=n))
            release_memory(plan.device, full=True)
            return None

    def _mode(self, size: SizePlan, mode: str) -> bool:
        """One mode at one size, its result emitted or its failure said; True where the request
        stops here (a call over its budget, a failure every later call would repeat)."""
        if self.cancelled():
            raise Cancelled
        n, device, rid = size.n, size.device, self.rid
        self.step += 1
        stage: Stage = "compiling" if mode != "eager" else "measuring"
        verb = "compiling and measuring" if mode != "eager" else "measuring"
        progress = Progress(rid, f"{verb} {mode} at N={n:,}", stage, mode, n, self.step, self.steps)
        if mode != "eager":
            with importing_compiler(device):
                self.before_compile(progress)
                _budget_compiles()
        self.emit(progress)
        try:
            with CALL_BUDGET.watching(self.plan.request.call_budget_s, n, mode):
                measurement = self._measure(size, mode)
        except CallOverBudget as exc:
            # A larger N, or the other modes at this one, would run as long: the request ends,
            # with one line for all that is left (the line names the size and the mode, or
            # where in the user's file it was stopped).
            self.emit(RequestFailed(rid, over_budget(size.chain, exc)))
            release_memory(device, full=True)
            return True
        except DevicePoisoned:
            raise
        except MeasureError as exc:
            self.emit(RequestFailed(rid, located(size.chain, exc), size=n, mode=mode))
            if exc.info.kind == "memory":
                release_memory(device, full=True)
                return False
            return exc.info.kind != "compile"
        for words in self.peaks.complete(measurement):
            self._say_peak(words, mode, n)
        missed = missed_work_reason(measurement)
        if missed is not None:
            measurement.diagnostics.append(missed)
        self.emit(MeasurementResult(rid, measurement))
        return False

    def _measure(self, size: SizePlan, mode: str) -> Measurement:
        """Build, measure and attribute ``mode`` at this size. What torch reports meanwhile joins
        the measurement's diagnostics; whatever the chain or torch raises becomes a MeasureError
        (or DevicePoisoned) in plain words."""
        peak = self.peaks.bandwidth
        early = self.plan.request.rows_before_wall_time(str(size.device))
        with capturing() as diagnostics:

            def rows_ready(got: Measured) -> None:
                self._early_rows(attribute(size, mode, got, diagnostics, peak))

            try:
                with ready_to_measure(mode, size.device) as set_up:
                    prepared = prepare(size, mode, diagnostics)  # holds the device but for a compile
                    got = measure(size, mode, prepared, self.flush, set_up, rows_ready if early else None)
            except MeasureError:
                raise
            except Exception as exc:  # anything the chain or torch raises becomes a message
                raise classify_failure(exc, mode) from exc
        return attribute(size, mode, got, diagnostics, peak)

    def _early_rows(self, m: Measurement) -> None:
        """The rows before their wall time (with the compute peak where this request has it
        already), then the step that times it."""
        self.peaks.early(m)
        self.emit(MeasurementResult(self.rid, m))
        words = f"timing {m.mode} at N={m.size:,} (wall time)"
        self.emit(Progress(self.rid, words, "measuring", m.mode, m.size, self.step, self.steps))


class _EveryLaterSizeFails(Exception):
    """A size's chain error that does not depend on the size: the request ends with it."""
