"""What was sent to the worker and what came back: the runs in flight, the measurements cached by
(chain, target, size, mode), the failures by the same key. The bookkeeping under
``tui.session.LiveSession``, which decides what to send and what to show. No textual, no torch.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from probes.chain.matching import normalize
from probes.link.protocol import (
    MODES,
    Measurement,
    MeasurementResult,
    ProfileRequest,
    Progress,
    RequestDone,
    RequestFailed,
)

CACHE_SIZE = 256


@dataclass(frozen=True)
class Target:
    """What a measurement depends on besides the chain, the size and the mode."""

    device: str | None
    dtype: str
    reps: int | None
    grad: bool = False


MeasureKey = tuple[str, Target, int, str]
"""(normalised chain, target, size, mode)."""


@dataclass
class Run:
    """One request sent to the worker, and what came back so far."""

    request: ProfileRequest
    kind: Literal["focus", "sweep", "other"]
    chain: str
    """Normalised chain text."""
    target: Target
    started: float
    progress: Progress | None = None
    failures: list[RequestFailed] = field(default_factory=list)
    cancelled: bool = False
    done: bool = False
    measured: set[tuple[int, str]] = field(default_factory=set)
    """The (size, mode) pairs whose measurement came back whole (its wall time in)."""

    def keys(self) -> list[MeasureKey]:
        return [(self.chain, self.target, n, m) for n in self.request.sizes for m in self.request.modes]

    def count(self) -> tuple[int, int]:
        """(steps done, steps in all), a step being one size in one mode, measured or failed on its
        own: the one count of a run's progress, wherever it is shown (the status bar, the sweep
        pane), so that two places never say two counts in one frame."""
        total = len(self.request.sizes) * len(self.request.modes)
        failed = sum(1 for f in self.failures if f.size is not None)
        return min(total, len(self.measured) + failed), total


@dataclass
class SweepResults:
    """The rows of one sweep (every size x mode), streamed in as they arrive."""

    run: Run
    results: dict[tuple[int, str], Measurement] = field(default_factory=dict)
    measured_by: dict[tuple[int, str], int] = field(default_factory=dict)
    """The device entry that measured each (size, mode), in a sweep spread over several
    (``merged_sweep``); empty otherwise."""

    @property
    def modes(self) -> tuple[str, ...]:
        return tuple(self.run.request.modes)

    @property
    def sizes(self) -> tuple[int, ...]:
        return tuple(self.run.request.sizes)

    def measurements(self, entry: int | None = None) -> list[Measurement]:
        """In size and mode order; those ``entry`` measured alone, given one, in a spread sweep."""
        found = [m for pair, m in self.results.items() if entry is None or self.measured_by.get(pair, entry) == entry]
        return sorted(found, key=lambda m: (m.size, MODES.index(m.mode) if m.mode in MODES else 9))

    def at(self, size: int, mode: str) -> Measurement | None:
        return self.results.get((size, mode))

    def covers(self, chain: str, target: Target, modes: tuple[str, ...], sizes: tuple[int, ...]) -> bool:
        """Same chain, target and modes; a sweep may cover more sizes than asked now."""
        run = self.run
        return run.chain == chain and run.target == target and self.modes == modes and set(sizes) <= set(self.sizes)


@dataclass(frozen=True)
class SweepSent:
    """A sweep as it went out: the whole request, and each device entry's part of it (``(entry,
    request id)``: the whole request on each, or with ``spread`` each entry's share of its pairs,
    ``probes.link.spread``)."""

    request: ProfileRequest
    parts: tuple[tuple[int, str], ...]
    spread: bool = False


def merged_sweep(request: ProfileRequest, parts: list[tuple[int, SweepResults]]) -> SweepResults:
    """The entries' parts of a spread sweep as one sweep of ``request``: every part's rows, each
    (size, mode) with the entry that measured it; running until every part is done, stopped when
    any was."""
    runs = [part.run for _, part in parts]
    first = runs[0]
    run = Run(
        request,
        "sweep",
        first.chain,
        first.target,
        first.started,
        failures=[failure for r in runs for failure in r.failures],
        cancelled=any(r.cancelled for r in runs),
        done=all(r.done for r in runs),
        measured={pair for r in runs for pair in r.measured},
    )
    merged = SweepResults(run)
    for entry, part in parts:
        merged.results.update(part.results)
        merged.measured_by.update(dict.fromkeys(part.results, entry))
    return merged


RunKind = Literal["focus", "sweep", "other"]


class RunBook:
    """Runs in flight (oldest first: the worker serves them in order), cached rows and failures."""

    def __init__(self) -> None:
        self.runs: dict[str, Run] = {}
        self.pending: dict[MeasureKey, str] = {}
        """Keys being measured, by the id of the run measuring them."""
        self.cache: OrderedDict[MeasureKey, Measurement] = OrderedDict()
        self.batch: dict[MeasureKey, str] = {}
        """The id of the request each cached measurement came from: readings of one request were
        taken one after the other under the same conditions, and only they are paired in a ratio."""
        self.failed: dict[MeasureKey, RequestFailed] = {}

    def track(self, request: ProfileRequest, kind: RunKind, target: Target, now: float) -> Run:
        run = Run(request, kind, normalize(request.chain), target, now)
        self.runs[request.id] = run
        for key in run.keys():
            self.pending[key] = request.id
            self.failed.pop(key, None)
        return run

    def cancel(self, which: Callable[[Run], bool]) -> list[str]:
        """Mark the runs ``which`` picks cancelled (their keys are no longer pending); their ids."""
        ids = []
        for rid, run in self.runs.items():
            if not run.cancelled and which(run):
                run.cancelled = True
                self._release(run)
                ids.append(rid)
        return ids

    def running(self) -> bool:
        return any(not r.cancelled and r.kind != "other" for r in self.runs.values())

    def forget(self, key: MeasureKey) -> None:
        self.cache.pop(key, None)
        self.batch.pop(key, None)
        self.failed.pop(key, None)

    def progress(self, event: Progress) -> None:
        run = self.runs.get(event.id)
        if run is not None:
            run.progress = event

    def result(self, event: MeasurementResult) -> Run | None:
        """Cache the measurement under its run's key; the run, if it is one of ours."""
        run = self.runs.get(event.id)
        if run is None:
            return None
        m = event.measurement
        if m.wall_pending and run.cancelled:
            return run
        key = (run.chain, run.target, m.size, m.mode)
        if not m.wall_pending:
            run.measured.add((m.size, m.mode))
        self.cache.pop(key, None)
        self.cache[key] = m
        self.batch[key] = event.id
        while len(self.cache) > CACHE_SIZE:
            self.batch.pop(self.cache.popitem(last=False)[0], None)
        self.failed.pop(key, None)
        return run

    def failure(self, event: RequestFailed) -> Run | None:
        """File the failure under every key of its run it concerns; the run, if it is one of ours."""
        run = self.runs.get(event.id)
        if run is None:
            return None
        run.failures.append(event)
        for key in run.keys():
            if event.size in (None, key[2]) and event.mode in (None, key[3]):
                self.failed[key] = event
        return run

    def done(self, event: RequestDone) -> Run | None:
        run = self.runs.pop(event.id, None)
        if run is None:
            return None
        run.done = True
        run.cancelled = run.cancelled or event.cancelled
        self._release(run)
        return run

    def same_batch(self, one: MeasureKey, other: MeasureKey) -> bool:
        """Whether the measurements cached under ``one`` and ``other`` came from one request."""
        batch = self.batch.get(one)
        return batch is not None and batch == self.batch.get(other)

    def failures_of(self, chain: str, target: Target) -> list[RequestFailed]:
        found: list[RequestFailed] = []
        for key, failure in self.failed.items():
            if key[0] == chain and key[1] == target and failure not in found:
                found.append(failure)
        return found

    def _release(self, run: Run) -> None:
        """The run's keys are no longer being measured; rows it left without a wall time (an
        early-rows result whose run ended first) are no rows to reuse."""
        for key in run.keys():
            if self.pending.get(key) == run.request.id:
                del self.pending[key]
            cached = self.cache.get(key)
            if cached is not None and cached.wall_pending and key not in self.pending:
                del self.cache[key]
                self.batch.pop(key, None)
