"""Timing one call: the L2 flush, warm-up, rep counts, the profiled reps and the wall-time reps.

Nothing of the tool may land in a figure:

- **The flush leaves nothing behind.** Zero-filling a buffer larger than L2 (what ``do_bench``
  does) leaves L2 full of *dirty* lines; the measured kernel then pays for writing them back
  (a fifth more on large reductions). Here the zero-fill is followed by a read pass over a
  second buffer, which evicts those lines inside the flush and leaves only clean ones.
- **Wall time is the time per call of a loop of calls, host included.** Each wall rep is a block of
  back-to-back calls between two synchronisations (what ``torch.utils.benchmark.Timer`` times):
  the host launches the next call while the device runs this one, as in a user's loop, so a host-bound
  call reads its host time and a device-bound call its device time. Each block starts after the
  flush has ended. ``do_bench`` instead queues each call behind its flush, so any host overhead
  shorter than the flush (a 256 MB flush runs for a hundred microseconds or more) vanishes from
  its figure: a small compiled call bound by tens of microseconds of host time reads a few
  microseconds "per call", faster than eager. Timing each call alone from an idle GPU (host +
  device, never overlapped) overstates it the other way, by up to several times a loop's figure at
  small sizes (docs/performance.md).
- **No idle clocks.** Warm-up runs the call back to back for at least ``WARMUP_MIN_S`` (do_bench's
  25 ms) so a GPU that idled while the user typed is at full clocks before the first rep, not when
  any process timed reps on it less than ``WARM_FOR_S`` ago (see there); on the CPU, whose clocks
  are the host's, for ``CPU_WARMUP_MIN_S``, which wakes torch's threads. Both shortcuts are fast
  paths (``probes.link.fast_paths``): without them every measurement warms up for
  ``WARMUP_MIN_S``.
- **No garbage collection inside a rep**: the collector is paused during the reps.
- **No page faults of the profiler's making** (CPU): the profiler's own allocations between a
  call's outputs can make the next call's outputs land on fresh pages, which it faults in (at 1e6
  elements, several times the add itself). A profiled rep that faults in more pages than
  a call did while warming up is left out of the rows and another rep runs in its place
  (``probes.engine.host_heap`` keeps the process from doing it on every call).
- **Nothing left installed**: the profile and the op-recording mode end with their block.
- **The profiler's set-up hidden behind a compile** (a fast path). Setting a profile up attaches
  CUPTI anew (``TEARDOWN_CUPTI``): on a GPU, milliseconds of each measurement, with the GIL
  released. A compiled mode's measurement starts it on a thread of its own (``ProfilerSetUp``)
  ``SET_UP_AFTER_S`` into its compile, so a compile hides it whole. The set-up holds the device
  like a measurement: eager rows timed in the other worker while it attached read high.
"""

from __future__ import annotations

import gc
import resource
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import torch
from torch.autograd.profiler import profile, record_function
from torch.profiler import DeviceType

from probes.engine import torch_compat
from probes.engine.device_lock import device_lock, measuring
from probes.engine.launches import FLUSH_LABEL, REP_LABEL, Launch, read_profile
from probes.engine.profile_events import ProfileEvent
from probes.engine.profile_events import read_profile as read_profile_events
from probes.engine.trace import OpTrace, recording_ops
from probes.engine.watchdog import CALL_BUDGET
from probes.link import fast_paths

L2_FLUSH_BYTES = 256 * 1024 * 1024
"""Larger than any current GPU's L2 (tens of MB), like do_bench's cache buffer."""

TARGET_TIMING_S = 0.05
"""Wall-time reps are sized to take about this long: enough for a stable median, short enough
that an edit re-profiles in well under a second."""
MIN_REPS, MAX_REPS = 5, 100
BLOCK_MIN_S = 2e-3
"""A wall-time block lasts at least this long, so what only its first call pays (launching onto an
idle GPU, 20-60 µs of host time that later calls overlap with the device) and the synchronisation
that ends it are a few percent of it."""
MIN_CALLS_PER_BLOCK, MAX_CALLS_PER_BLOCK = 4, 1000
MIN_PROFILE_REPS, MAX_PROFILE_REPS = 3, 10
FAULT_SLACK_PAGES = 64
"""Page faults a profiled rep may take beyond a warm call's before it is left out: the
profiler's own buffers (a 4 MB output is 1024 pages)."""
WARMUP_MIN_S = 0.025
CPU_WARMUP_MIN_S = 0.005
"""On the CPU a warm-up of this long reads the same figures as one of WARMUP_MIN_S (device times
alike pair by pair, the spread within a measurement no wider, after short and long idle spells),
and an edit's rows come that much sooner (docs/performance.md)."""
WARMUP_MAX_CALLS = 2000
WARM_FOR_S = 2.0
"""On a GPU, a warm-up within this long of the last timed rep on it, in this process or another
(the app's other worker: a new chain's compiled rows follow its eager rows timed in the eager
worker), changes no figure: with and without it, device times and device-bound wall times read
the same within a percent, and host-bound wall times spread alike either way; it is a fifth of a
new chain's eager rows (docs/performance.md). On the CPU an idle second slows the next calls (the
thread pool sleeps): the warm-up always runs there."""
SETTLE_BUDGET_S = 0.5


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


class L2Flusher:
    """Leaves L2 holding only clean lines of the tool's own buffers before each timed rep."""

    def __init__(self, device: torch.device) -> None:
        self.dirty: torch.Tensor | None = None
        self.clean: torch.Tensor | None = None
        self.sink: torch.Tensor | None = None
        if device.type == "cuda":
            self.dirty = torch.empty(L2_FLUSH_BYTES, dtype=torch.int8, device=device)
            self.clean = torch.zeros(L2_FLUSH_BYTES // 4, dtype=torch.float32, device=device)
            self.sink = torch.empty((), dtype=torch.float32, device=device)

    def __call__(self) -> None:
        if self.dirty is None or self.clean is None:
            return
        with record_function(FLUSH_LABEL):
            self.dirty.zero_()
            torch.sum(self.clean, dim=0, out=self.sink)


@contextmanager
def gc_paused() -> Iterator[None]:
    """The cyclic garbage collector off for the block (reference counting still frees at once)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _settled_call_time(call: Callable[[], Any], device: torch.device) -> float:
    """Seconds per call, once two consecutive synchronised calls agree within 25%: a fresh
    process's first calls pay for page faults and thread-pool start-up."""
    times: list[float] = []
    spent = 0.0
    while spent < SETTLE_BUDGET_S and len(times) < 20:
        with CALL_BUDGET.calls():
            sync(device)
            begin = time.perf_counter()
            call()
            sync(device)
            times.append(max(time.perf_counter() - begin, 1e-7))
        spent += times[-1]
        if len(times) >= 2 and abs(times[-1] - times[-2]) <= 0.25 * times[-2]:
            break
    return min(times[-2:])


_last_timed = float("-inf")
"""When this process's last timed rep ended (time.time()); any process's last on a GPU is kept by
the GPU's lock (``DeviceLock.mark_timed``), where it can be."""


def needs_warm_up(device: torch.device, now: float) -> bool:
    """Whether the clocks may have dropped since the last timed rep on the device (see WARM_FOR_S);
    ``now`` from time.time()."""
    if device.type != "cuda" or not fast_paths.enabled("short_warm_up"):
        return True
    last = max(_last_timed, device_lock(device).last_timed() or float("-inf"))
    return not 0 <= now - last < WARM_FOR_S


def page_faults() -> int:
    """Page faults this process has taken (its threads' too)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def warm_up(call: Callable[[], Any], device: torch.device, single_s: float) -> float:
    """Back-to-back calls for at least WARMUP_MIN_S (CPU_WARMUP_MIN_S on the CPU), so clocks are
    up when the reps start (one call where they are: ``needs_warm_up``); returns the page faults
    of a warm call."""
    length = CPU_WARMUP_MIN_S if device.type != "cuda" and fast_paths.enabled("short_warm_up") else WARMUP_MIN_S
    wanted = length if needs_warm_up(device, time.time()) else 0.0
    calls = int(min(WARMUP_MAX_CALLS, max(1, wanted / single_s)))
    before = page_faults()
    with CALL_BUDGET.calls(calls):
        for _ in range(calls):
            call()
        sync(device)
    return (page_faults() - before) / calls


@dataclass(frozen=True)
class RepPlan:
    """How many times a measurement runs the call."""

    timing_reps: int
    """Wall-time reps (blocks of ``calls_per_block`` back-to-back calls)."""
    profiled_reps: int
    calls_per_block: int
    faults_per_call: float = 0.0
    """Page faults of a warm call, unprofiled (a call whose tensors are mapped anew each time
    takes them on every call)."""


def choose_reps(call: Callable[[], Any], device: torch.device, reps: int | None) -> RepPlan:
    """The reps, sized so timing takes about TARGET_TIMING_S unless given; the call is warmed up
    on the way."""
    single = _settled_call_time(call, device)
    faults = warm_up(call, device, single)
    calls_per_block = (
        int(min(MAX_CALLS_PER_BLOCK, max(MIN_CALLS_PER_BLOCK, BLOCK_MIN_S / single))) if device.type == "cuda" else 1
    )
    if reps is not None:
        return RepPlan(reps, max(1, min(reps, MAX_PROFILE_REPS)), calls_per_block, faults)
    timing = int(min(MAX_REPS, max(MIN_REPS, TARGET_TIMING_S / (single * calls_per_block))))
    profiled = int(min(MAX_PROFILE_REPS, max(MIN_PROFILE_REPS, TARGET_TIMING_S / single)))
    return RepPlan(timing, profiled, calls_per_block, faults)


def measure_wall_time(call: Callable[[], Any], device: torch.device, plan: RepPlan, flush: L2Flusher) -> list[float]:
    """Per-call wall time in µs of each rep: on CUDA a block of ``plan.calls_per_block``
    back-to-back calls started after the flush has ended, timed from one synchronisation to the
    next; on the CPU (where each call returns when its work is done) one call under perf_counter."""
    global _last_timed
    calls_per_block = plan.calls_per_block
    with gc_paused():
        times = []
        for _ in range(plan.timing_reps):
            if device.type == "cuda":
                flush()
                torch.cuda.synchronize(device)
                with CALL_BUDGET.calls(calls_per_block):
                    begin = time.perf_counter()
                    for _ in range(calls_per_block):
                        call()
                    torch.cuda.synchronize(device)
                    times.append((time.perf_counter() - begin) / calls_per_block * 1e6)
            else:
                with CALL_BUDGET.calls():
                    begin = time.perf_counter()
                    call()
                    times.append((time.perf_counter() - begin) * 1e6)
        _last_timed = time.time()
        if device.type == "cuda":
            device_lock(device).mark_timed()
        return times


def _new_profiler(device: torch.device) -> profile:
    """A profile of ``device``, not started (CUPTI's detach after each profile is asked for by
    importing ``probes.engine``: see its docstring). The autograd profiler, which
    ``torch.profiler.profile`` drives, on its own: the latter's start asks
    ``hasattr(torch, "_inductor")``, which imports Inductor and Dynamo (a fraction of a second) in a
    worker that may never compile."""
    return profile(use_device="cuda" if device.type == "cuda" else None, use_kineto=True)


@contextmanager
def _public_profiler(device: torch.device) -> Iterator[profile]:
    """A profile of ``device`` through ``torch.profiler.profile`` (the plain path of
    ``_new_profiler``), for the block; yields the autograd profile it drives."""
    activities = [torch.profiler.ProfilerActivity.CPU]
    if device.type == "cuda":
        activities.append(torch.profiler.ProfilerActivity.CUDA)
    with torch.profiler.profile(activities=activities) as prof:
        assert prof.profiler is not None
        yield prof.profiler


def set_up_ahead() -> bool:
    """Whether a compiled mode's profile is set up while it compiles (``ProfilerSetUp``): a fast
    path, where this torch sets a profile up apart from its start."""
    return fast_paths.enabled("profiler_set_up_ahead") and torch_compat.profiler_set_up_apart()


SET_UP_AFTER_S = 0.1
"""A compile's profiler set-up starts this far into the compile, or when its rows need it if
sooner: the other worker's eager measurement of the same edit, sent with the compile, then has
the device first, instead of waiting for the set-up's hold."""


class ProfilerSetUp:
    """A profile being set up on a thread of its own while the caller compiles: ``profile_run``
    then only starts it. Its calls are the ones ``torch.profiler.profile`` makes for a schedule's
    warm-up and active steps. One that is not used is ended by ``discard``, so no half-made profile
    outlives the measurement.

    Not for eager runs, which have no compile to hide it behind and whose rows are tied to their
    ops by the profiler's CPU events: eager forward + backward of a matmul measured in a profile
    set up on another thread tied both backward matmuls' FLOPs to one kernel; Inductor's kernels
    are tied to their ops by their names."""

    _first_done = False
    """Kineto initialises itself at a process's first set-up, which must run on the thread that
    imported torch (else it logs "External init callback must run in same thread as
    registerClient" and skips its set-up): the first is made where it is asked for."""

    def __init__(self, device: torch.device) -> None:
        self.device = device
        self.profiler = _new_profiler(device)
        self._error: BaseException | None = None
        self._due = threading.Event()
        self._thread: threading.Thread | None = None
        if ProfilerSetUp._first_done:
            self._thread = threading.Thread(target=self._prepare_when_due, name="profiler set-up", daemon=True)
            self._thread.start()
        else:
            self._prepare()
            ProfilerSetUp._first_done = True

    def _prepare_when_due(self) -> None:
        self._due.wait(SET_UP_AFTER_S)
        self._prepare()

    def _prepare(self) -> None:
        try:
            with measuring(self.device):  # attaching CUPTI is not to land in another worker's reps
                torch_compat.prepare_profile(self.profiler)
        except BaseException as exc:  # raised again on the measuring thread
            self._error = exc

    def _join(self) -> None:
        self._due.set()
        if self._thread is not None:
            self._thread.join()

    def take(self) -> profile:
        """The profile, set up (waiting for the rest of its set-up)."""
        self._join()
        if self._error is not None:
            raise self._error
        return self.profiler

    def discard(self) -> None:
        """End a profile that will not be used (the compile failed or was stopped)."""
        self._join()
        if self._error is None and self.profiler.entered and self.profiler.kineto_results is None:
            torch_compat.start_prepared_profile(self.profiler)
            self.profiler.__exit__(None, None, None)


@dataclass
class ProfiledRun:
    launches: list[Launch]
    """Launches inside the timed reps."""
    attribution: list[Launch]
    """Launches of the labelled eager call (empty when there was none)."""
    trace: OpTrace | None
    compiled_reps: int
    """How many of the reps ran Dynamo's compiled code."""
    reps: int
    """The reps ``launches`` come from (those left out for their page faults not counted)."""
    profile: profile | None = None
    """The finished profile, for what is read from it later (``read_kernel_records``)."""


def profile_run(
    call: Callable[[], Any],
    device: torch.device,
    reps: int,
    flush: L2Flusher,
    labelled_call: Callable[[], Any] | None = None,
    faults_per_call: float | None = None,
    set_up: ProfilerSetUp | None = None,
) -> ProfiledRun:
    """One profile (starting one costs tens of ms): first, optionally, one eager call with every op
    labelled, which ties each kernel to the op that launched it; then ``reps`` reps. With
    ``faults_per_call`` (a warm call's page faults), a rep that takes more is left out and another
    runs, up to ``reps`` more (all are kept when too few were clean).

    On CUDA a profile that recorded no device event at all (not even the flush's kernels) lost
    them to the profiler itself and runs once more: with ``TEARDOWN_CUPTI``, of profiles run back
    to back with no launch between them, every second one recorded nothing of the device and ran
    its reps several times slower (the profiler detaches at the first launch after a profile, here
    inside the next one). A measurement launches between its profiles; a caller of its own may
    not. ``set_up``: the profile, set up while the caller did something else."""
    recorded, trace, faulted, ran, prof = _one_profile(
        call, device, reps, flush, labelled_call, faults_per_call, set_up
    )
    if device.type == "cuda" and not any(e.device_type == DeviceType.CUDA for e in recorded):
        recorded, trace, faulted, ran, prof = _one_profile(
            call, device, reps, flush, labelled_call, faults_per_call, None
        )
    if ran - len(faulted) < min(reps, MIN_PROFILE_REPS):
        faulted = []  # faulting is how this call runs: every rep counts
    events = read_profile(recorded, device)
    left_out = set(faulted)
    return ProfiledRun(
        launches=[launch for launch in events.launches if launch.rep is not None and launch.rep not in left_out],
        attribution=[launch for launch in events.launches if launch.rep is None],
        trace=trace,
        compiled_reps=events.compiled_reps,
        reps=ran - len(faulted),
        profile=prof,
    )


def _one_profile(
    call: Callable[[], Any],
    device: torch.device,
    reps: int,
    flush: L2Flusher,
    labelled_call: Callable[[], Any] | None,
    faults_per_call: float | None,
    set_up: ProfilerSetUp | None,
) -> tuple[list[ProfileEvent], OpTrace | None, list[int], int, profile]:
    """The profile of ``profile_run``: (its events, the labelled call's op trace, the
    reps that faulted, the reps run, the profile)."""
    trace = None
    faulted: list[int] = []
    with _running(set_up.take() if set_up is not None else None, device) as prof:
        if labelled_call is not None:
            with CALL_BUDGET.calls():
                with recording_ops(label_ops=True) as trace:
                    labelled_call()
                sync(device)
        with gc_paused():
            allowed = None if faults_per_call is None else faults_per_call + FAULT_SLACK_PAGES
            ran = 0
            while ran - len(faulted) < reps and ran < 2 * reps:
                if ran == reps and len(faulted) == ran:
                    break  # every rep faulted: that is the call's own cost
                flush()
                before = page_faults() if allowed is not None else 0
                with CALL_BUDGET.calls(), record_function(REP_LABEL):
                    call()
                if allowed is not None and page_faults() - before > allowed:
                    faulted.append(ran)
                ran += 1
            sync(device)
    return read_profile_events(prof), trace, faulted, ran, prof


@contextmanager
def _running(prepared: profile | None, device: torch.device) -> Iterator[profile]:
    """A profile for the block: ``prepared`` (set up already) started, or a new one (the public
    profiler's where the fast paths are off)."""
    if prepared is None:
        new = _new_profiler(device) if fast_paths.enabled("light_profiler") else _public_profiler(device)
        with new as prof:
            yield prof
        return
    torch_compat.start_prepared_profile(prepared)
    try:
        yield prepared
    finally:
        prepared.__exit__(None, None, None)
