"""The live loop as a pure state machine: what is shown, pending, running, cached, stale, and why.

No textual and no torch. The app feeds it events (an edit, a settings change, a worker event, the
worker's state, a timer) with the current monotonic time, and carries out the effects it returns
(``Send`` a request, ``Cancel`` one, ``WakeAt`` a time, ``Notice`` a message). ``focus_view()`` and
``sweep_view()`` say what the panes show. So every rule of the loop is unit-tested in milliseconds.

The rules:
- measurements are cached per (chain, target, size, mode), so switching back to a text, a setting
  or a chain shows its rows at once, and a late result of a cancelled run is still kept;
- after an edit, eager runs as soon as the text is valid (a short pause coalesces a burst of keys)
  and compiled modes once the text has been stable for longer (a compile cannot be interrupted);
  any run for an older text or settings is cancelled;
- what is shown for a mode is its fresh measurement, else the last one shown, marked stale with the
  reason once the grace period is over (so rows do not flicker while new ones are on their way);
- a sweep measures every size x mode on demand; its rows also feed the focus size;
- ``hold()`` keeps the loop from running anything (a chain from a workspace file that has not been
  confirmed, or after Stop) until the next edit, ``run_now()`` or sweep.
"""

from __future__ import annotations

import itertools
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Literal

from probes.expr import ChainError, parse_chain
from probes.protocol import (
    MODES,
    ChainErrorInfo,
    Measurement,
    MeasurementResult,
    ProfileRequest,
    Progress,
    RequestDone,
    RequestFailed,
    WarmupRequest,
    WorkerReady,
)
from probes.summary import format_size
from tui.workspace import Settings

CACHE_SIZE = 256


def normalize(chain: str) -> str:
    """Chains that differ only in whitespace are the same chain (as the replay worker matches them)."""
    return "".join(chain.split())


@dataclass(frozen=True)
class Target:
    """What a measurement depends on besides the chain, the size and the mode."""

    device: str | None
    dtype: str
    reps: int | None


MeasureKey = tuple[str, Target, int, str]
"""(normalised chain, target, size, mode)."""


@dataclass(frozen=True)
class Timing:
    eager_delay_s: float = 0.03
    """Eager runs this long after the last edit: enough to coalesce a burst of keys."""
    compile_delay_s: float = 0.5
    """Compiled modes run once the text has been stable this long (a compile cannot be stopped)."""
    compile_delay_max_s: float = 2.0
    """The delay doubles (up to this) each time typing resumes while a compile of an older text runs:
    that compile was wasted, and the eager rows of the new text had to wait for it."""
    stale_grace_s: float = 0.35
    """Rows of the previous text stay undimmed this long while the new ones are on their way."""


# -- effects --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Send:
    request: ProfileRequest | WarmupRequest


@dataclass(frozen=True)
class Cancel:
    request_id: str


@dataclass(frozen=True)
class WakeAt:
    """Call ``tick()`` at this monotonic time (replaces any earlier wake-up)."""

    when: float


@dataclass(frozen=True)
class Notice:
    text: str
    style: str = ""
    elapsed_s: float | None = None
    """How long the request took, for ``... done in 0.3 s`` (the app may leave it out)."""


Effect = Send | Cancel | WakeAt | Notice


# -- runs and results ---------------------------------------------------------------------------


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
    results: int = 0
    cancelled: bool = False
    done: bool = False

    def keys(self) -> list[MeasureKey]:
        return [(self.chain, self.target, n, m) for n in self.request.sizes for m in self.request.modes]


@dataclass
class SweepResults:
    """The rows of one sweep (every size x mode), streamed in as they arrive."""

    run: Run
    results: dict[tuple[int, str], Measurement] = field(default_factory=dict)

    @property
    def modes(self) -> tuple[str, ...]:
        return tuple(self.run.request.modes)

    @property
    def sizes(self) -> tuple[int, ...]:
        return tuple(self.run.request.sizes)

    def measurements(self) -> list[Measurement]:
        return sorted(self.results.values(), key=lambda m: (m.size, MODES.index(m.mode) if m.mode in MODES else 9))

    def at(self, size: int, mode: str) -> Measurement | None:
        return self.results.get((size, mode))

    def covers(self, chain: str, target: Target, modes: tuple[str, ...], sizes: tuple[int, ...]) -> bool:
        """Same chain, target and modes; a sweep may cover more sizes than asked now."""
        run = self.run
        return run.chain == chain and run.target == target and self.modes == modes and set(sizes) <= set(self.sizes)


# -- views --------------------------------------------------------------------------------------


ModeActivity = Literal["", "waiting", "measuring", "compiling", "after a pause", "held"]


@dataclass(frozen=True)
class ModeView:
    mode: str
    measurement: Measurement | None
    """What to show: the fresh measurement, else the last one shown (see ``fresh``)."""
    fresh: bool
    activity: ModeActivity = ""
    """What is happening for this mode's current key."""
    failure: RequestFailed | None = None
    """Why the current key has no measurement (the shown one is then an older one, if any)."""


@dataclass(frozen=True)
class FocusView:
    size: int
    modes: tuple[ModeView, ...]
    stale: str | None = None
    """Why the rows shown no longer match the text and settings (None: they do, or nothing shown)."""
    updating: bool = False
    """New rows for an edit are on their way (shown rows are not fresh, within the grace period)."""
    errors: tuple[RequestFailed, ...] = ()
    """Failures of the current text not tied to one mode or size."""
    busy: bool = False
    held: str | None = None
    """Why nothing runs now (a chain from a workspace file not confirmed yet, or after Stop)."""

    def mode(self, mode: str) -> ModeView | None:
        return next((v for v in self.modes if v.mode == mode), None)


@dataclass(frozen=True)
class SweepView:
    results: SweepResults | None
    sizes: tuple[int, ...]
    compile_mode: str
    stale: str | None = None
    running: bool = False


@dataclass(frozen=True)
class WorkerActivity:
    """The request the worker is serving now, for the status bar."""

    text: str
    started: float


# -- the session ----------------------------------------------------------------------------------


class LiveSession:
    """The live loop of one app (see the module doc)."""

    def __init__(self, settings: Settings, text: str = "", *, timing: Timing | None = None) -> None:
        self.settings = settings
        self.timing = timing or Timing()
        self.ready: WorkerReady | None = None
        self.text = ""
        self.chain = ""
        self.parse_error: ChainErrorInfo | None = None
        self.cache: OrderedDict[MeasureKey, Measurement] = OrderedDict()
        self.failed: dict[MeasureKey, RequestFailed] = {}
        self.runs: dict[str, Run] = {}
        """Runs sent and not done yet, oldest first (the worker serves them in order)."""
        self.pending: dict[MeasureKey, str] = {}
        """Keys being measured, by the id of the run measuring them."""
        self.sweep: SweepResults | None = None
        self.shown: dict[str, Measurement] = {}
        """The last measurement shown per mode (shown stale once the text or settings move on)."""
        self.held: str | None = None
        self.changed_at = float("-inf")
        """When the text or the settings last changed (the grace period of stale rows starts then)."""
        self.eager_due = float("-inf")
        self.compiled_due = float("-inf")
        """When the missing eager / compiled rows of the current text and settings are due."""
        self.why_stale = "the chain was edited"
        self.warmed = False
        self.warmup: str | None = None
        self.compile_delay = self.timing.compile_delay_s
        """The current wait before compiling (see ``Timing.compile_delay_max_s``)."""
        self._ids = itertools.count(1)
        self._set_text(text)

    # -- what the loop is about now ----------------------------------------------------------

    @property
    def device(self) -> str | None:
        if self.settings.device:
            return self.settings.device
        return self.ready.default_device if self.ready else None

    def target(self) -> Target:
        s = self.settings
        return Target(self.device, s.dtype, s.reps)

    def modes(self) -> tuple[str, ...]:
        return tuple(self.settings.request_modes())

    def focus_keys(self) -> dict[str, MeasureKey]:
        target, size = self.target(), self.settings.focus_size
        return {mode: (self.chain, target, size, mode) for mode in self.modes()}

    def new_id(self) -> str:
        return f"s{next(self._ids)}"

    # -- events --------------------------------------------------------------------------------

    def edit(self, text: str, now: float, *, hold: str | None = None) -> list[Effect]:
        """The editor's text changed; ``hold``: run nothing for it until confirmed (see ``hold()``)."""
        before = self.chain
        self._set_text(text)
        if self.chain == before and self.text.strip():
            return self._plan(now)  # whitespace only: same chain, same results
        self.changed_at = now
        if any(run.kind == "focus" and not run.cancelled and run.chain != self.chain and
               any(mode != "eager" for mode in run.request.modes) for run in self.runs.values()):  # fmt: skip
            self.compile_delay = min(self.timing.compile_delay_max_s, self.compile_delay * 2)
        self.eager_due = now + self.timing.eager_delay_s
        self.compiled_due = now + self.compile_delay
        self.why_stale = "the chain was edited" if self.parse_error is None else "the chain has an error"
        self.held = hold
        self.failed = {key: f for key, f in self.failed.items() if key[0] == self.chain}  # coming back retries
        self._sync_shown()
        return self._cancel_outdated() + self._plan(now)

    def settings_changed(self, what: str, now: float) -> list[Effect]:
        """A setting changed: what no longer matches is re-measured (or marked stale)."""
        self.changed_at = self.eager_due = now
        self.compiled_due = max(now, self.compiled_due)  # still typing: compiled waits for the pause
        self.why_stale = f"{what} changed"  # a hold stays: a setting is no confirmation of the chain
        self._sync_shown()
        return self._cancel_outdated() + self._plan(now)

    def worker_ready(self, ready: WorkerReady, now: float) -> list[Effect]:
        effects: list[Effect] = []
        names = [d.name for d in ready.devices]
        wanted = self.settings.device
        if wanted is not None and wanted not in names:
            cuda = next((n for n in names if n.startswith("cuda")), None)
            if wanted == "cuda" and cuda is not None:
                self.settings.device = cuda
            else:
                self.settings.device = None
                effects.append(Notice(f"device {wanted} is not available here; using {ready.default_device}", "yellow"))
        self.ready = ready
        self.warmed = False
        self.warmup = None
        return effects + self._plan(now)

    def worker_lost(self) -> None:
        """The worker is gone (failed to start, or stopped): nothing is running any more."""
        self.ready = None
        for run in self.runs.values():
            run.done = True
        self.runs.clear()
        self.pending.clear()
        self.warmup = None

    def hold(self, reason: str) -> None:
        """Run nothing until the next edit, ``run_now()`` or sweep (the views say ``reason``)."""
        self.held = reason

    def tick(self, now: float) -> list[Effect]:
        return self._plan(now)

    def run_now(self, now: float) -> list[Effect]:
        """Measure the focus size again, every mode, now (cached rows are dropped)."""
        if self.parse_error is not None:
            return [Notice(f"fix the chain first: {self.parse_error.located()}", "bold red")]
        self.held = None
        keys = self.focus_keys()
        for key in keys.values():
            self.cache.pop(key, None)
            self.failed.pop(key, None)
        effects = self._cancel_runs(lambda run: run.kind == "focus")
        self.changed_at = self.eager_due = self.compiled_due = now
        self.why_stale = "measuring again"
        return effects + self._plan(now)

    def start_sweep(self, now: float) -> list[Effect]:
        if self.parse_error is not None:
            return [Notice(f"fix the chain first: {self.parse_error.located()}", "bold red")]
        if self.ready is None:
            return [Notice("the worker is still starting; try again in a moment", "yellow")]
        self.held = None
        effects = self._cancel_runs(lambda run: run.kind in ("focus", "sweep"))
        request = self._request(list(self.settings.sizes), list(self.modes()))
        run = self._track(request, "sweep", now)
        self.sweep = SweepResults(run)
        return [*effects, *self._preempt_warmup(), Send(request)]

    def stop(self) -> list[Effect]:
        """Cancel everything running; nothing runs again until the next change or ``run_now()``."""
        effects = self._cancel_runs(lambda run: run.kind in ("focus", "sweep"))
        if not effects:
            return [Notice("nothing is running")]
        self.held = "stopped: ctrl+r measures again"
        return [*effects, Notice("cancelled", "yellow")]

    def track(self, request: ProfileRequest, now: float) -> None:
        """Remember a request sent by someone else (the compare screen), so its rows are cached."""
        self._track(request, "other", now)

    def on_event(self, event: object, now: float) -> list[Effect]:
        """An event of a request from the worker."""
        if isinstance(event, Progress):
            run = self.runs.get(event.id)
            if run is not None:
                run.progress = event
            return []
        if isinstance(event, MeasurementResult):
            return self._result(event, now)
        if isinstance(event, RequestFailed):
            return self._failure(event)
        if isinstance(event, RequestDone):
            return self._done(event, now)
        return []

    # -- views ---------------------------------------------------------------------------------

    def focus_view(self, now: float) -> FocusView:
        keys = self.focus_keys()
        views = []
        outdated = False
        coming = True
        for mode, key in keys.items():
            fresh = self.cache.get(key)
            failure = self.failed.get(key)
            shown = fresh or self.shown.get(mode)
            activity = self._activity(mode, key)
            if fresh is None and shown is not None:
                outdated = True
                coming = coming and activity in ("waiting", "measuring", "compiling", "after a pause")
            if fresh is None and failure is not None:
                coming = False
            views.append(ModeView(mode, shown, fresh is not None, activity, failure))
        errors = tuple(f for f in self._current_failures() if f.size is None and f.mode is None)
        stale = None
        updating = False
        if outdated:
            within_grace = now - self.changed_at < self.timing.stale_grace_s
            if self.parse_error is None and coming and within_grace and not errors:
                updating = True
            else:
                stale = "the chain has an error" if self.parse_error is not None else self.held or self.why_stale
        busy = any(key in self.pending for key in keys.values())
        return FocusView(self.settings.focus_size, tuple(views), stale, updating, errors, busy, self.held)

    def sweep_view(self) -> SweepView:
        s = self.settings
        compile_mode = s.compile_mode
        sweep = self.sweep
        stale = None
        if sweep is not None and not sweep.covers(self.chain, self.target(), self.modes(), tuple(s.sizes)):
            if self.parse_error is not None:
                stale = "the chain has an error"
            elif sweep.run.chain != self.chain:
                stale = "sweep of an earlier text"
            else:
                stale = "settings changed: s sweeps again"
        running = sweep is not None and not sweep.run.done and not sweep.run.cancelled
        return SweepView(sweep, tuple(s.sizes), compile_mode, stale, running)

    def activity(self) -> WorkerActivity | None:
        """The run the worker is serving now (the oldest one not done), in words."""
        run = next((r for r in self.runs.values() if r.kind != "other" and not r.cancelled), None)
        if run is None:
            return None
        p = run.progress
        if p is None:
            return WorkerActivity("sending", run.started)
        step = f" ({p.step}/{p.total})" if p.total else ""
        return WorkerActivity(f"{p.message}{step}", run.started)

    def running(self) -> bool:
        return any(not r.cancelled and r.kind != "other" for r in self.runs.values())

    def cached(self, text: str, mode: str) -> Measurement | None:
        """The measurement of ``text`` in ``mode`` at the focus size with the current target, if any."""
        return self.cache.get((normalize(text), self.target(), self.settings.focus_size, mode))

    def shown_measurements(self) -> list[Measurement]:
        """Everything on screen now (sweep rows and the focus rows), once each."""
        seen: dict[tuple, Measurement] = {}
        sweep = self.sweep.measurements() if self.sweep else []
        focus = [m for mode in self.modes() if (m := self.shown.get(mode)) is not None]
        for m in [*sweep, *focus]:
            seen[(m.chain, m.size, m.mode, m.dtype, m.device)] = m
        return list(seen.values())

    # -- internals -------------------------------------------------------------------------------

    def _set_text(self, text: str) -> None:
        self.text = text
        self.chain = normalize(text)
        try:
            parse_chain(text)
        except ChainError as exc:
            self.parse_error = exc.info
        else:
            self.parse_error = None

    def _activity(self, mode: str, key: MeasureKey) -> ModeActivity:
        rid = self.pending.get(key)
        if rid is not None:
            progress = self.runs[rid].progress
            if progress is not None and progress.mode == mode and progress.size in (None, key[2]):
                return "compiling" if progress.stage == "compiling" else "measuring"
            return "waiting"
        if key in self.cache or key in self.failed or self.parse_error is not None:
            return ""
        if self.held is not None:
            return "held"
        if self.ready is None:
            return "waiting"
        return "after a pause" if mode != "eager" else "waiting"

    def _current_failures(self) -> list[RequestFailed]:
        chain, target = self.chain, self.target()
        found: list[RequestFailed] = []
        for key, failure in self.failed.items():
            if key[0] == chain and key[1] == target and failure not in found:
                found.append(failure)
        return found

    def _request(self, sizes: list[int], modes: list[str]) -> ProfileRequest:
        s = self.settings
        return ProfileRequest(
            id=self.new_id(), chain=self.text, sizes=sizes, modes=modes, device=s.device, dtype=s.dtype, reps=s.reps
        )

    def _track(self, request: ProfileRequest, kind: Literal["focus", "sweep", "other"], now: float) -> Run:
        run = Run(request, kind, normalize(request.chain), Target(request.device or self.device, request.dtype,
                                                                   request.reps), now)  # fmt: skip
        self.runs[request.id] = run
        for key in run.keys():
            self.pending[key] = request.id
            self.failed.pop(key, None)
        return run

    def _cancel_runs(self, which) -> list[Effect]:  # noqa: ANN001 (Callable[[Run], bool])
        effects: list[Effect] = []
        for rid, run in self.runs.items():
            if not run.cancelled and which(run):
                run.cancelled = True
                for key in run.keys():
                    if self.pending.get(key) == rid:
                        del self.pending[key]
                effects.append(Cancel(rid))
        return effects

    def _cancel_outdated(self) -> list[Effect]:
        """Cancel the runs whose chain or target no longer match (their late rows are still cached)."""
        chain, target = self.chain, self.target()
        return self._cancel_runs(lambda run: run.kind != "other" and (run.chain != chain or run.target != target))

    def _preempt_warmup(self) -> list[Effect]:
        if self.warmup is None:
            return []
        rid, self.warmup = self.warmup, None
        return [Cancel(rid)]

    def _plan(self, now: float) -> list[Effect]:
        """Send what the current text and settings still need, when it is due."""
        if self.ready is None or self.parse_error is not None or self.held is not None:
            return []
        if any(run.kind == "sweep" and not run.cancelled for run in self.runs.values()):
            return []  # the sweep is measuring; what it does not cover runs when it is done
        missing = [
            mode for mode, key in self.focus_keys().items()
            if key not in self.cache and key not in self.pending and key not in self.failed
        ]  # fmt: skip
        if not missing:
            return self._maybe_warm_up(now)
        due = {mode: self.eager_due if mode == "eager" else max(self.eager_due, self.compiled_due) for mode in missing}
        now_modes = [mode for mode in missing if due[mode] <= now]
        effects: list[Effect] = []
        if now_modes:
            request = self._request([self.settings.focus_size], now_modes)
            self._track(request, "focus", now)
            effects += [*self._preempt_warmup(), Send(request)]
        later = [due[mode] for mode in missing if mode not in now_modes]
        if later:
            effects.append(WakeAt(min(later)))
        return effects

    def _maybe_warm_up(self, now: float) -> list[Effect]:
        """Once the first eager rows are in and nothing is left to do: warm Inductor up."""
        if self.warmed or self.ready is None or self.runs or self.ready.protocol < 2:
            return []
        if not any(key[3] == "eager" for key in self.cache):
            return []
        self.warmed = True
        self.warmup = self.new_id()
        return [Send(WarmupRequest(self.warmup, self.settings.device))]

    def _remember(self, key: MeasureKey, m: Measurement) -> None:
        self.cache.pop(key, None)
        self.cache[key] = m
        while len(self.cache) > CACHE_SIZE:
            self.cache.popitem(last=False)

    def _sync_shown(self) -> None:
        for mode, key in self.focus_keys().items():
            m = self.cache.get(key)
            if m is not None:
                self.shown[mode] = m

    def _result(self, event: MeasurementResult, now: float) -> list[Effect]:
        run = self.runs.get(event.id)
        if run is None:
            return []
        m = event.measurement
        run.results += 1
        key = (run.chain, run.target, m.size, m.mode)
        self._remember(key, m)
        self.failed.pop(key, None)
        if run.kind == "sweep" and self.sweep is not None and self.sweep.run is run:
            self.sweep.results[(m.size, m.mode)] = m
        self._sync_shown()
        return []

    def _failure(self, event: RequestFailed) -> list[Effect]:
        run = self.runs.get(event.id)
        if run is None:
            return []
        run.failures.append(event)
        for key in run.keys():
            if event.size in (None, key[2]) and event.mode in (None, key[3]):
                self.failed[key] = event
        if run.cancelled or run.kind == "other" or run.chain != self.chain or run.target != self.target():
            return []
        where = " ".join(x for x in (event.mode or "", f"N={format_size(event.size)}" if event.size else "") if x)
        return [Notice(f"{where + ': ' if where else ''}{event.error.located()}", "bold red")]

    def _done(self, event: RequestDone, now: float) -> list[Effect]:
        if event.id == self.warmup:
            self.warmup = None
        run = self.runs.pop(event.id, None)
        if run is None:
            return []
        run.done = True
        run.cancelled = run.cancelled or event.cancelled
        for key in run.keys():
            if self.pending.get(key) == event.id:
                del self.pending[key]
        effects: list[Effect] = []
        current = run.chain == self.chain and run.target == self.target() and run.kind != "other"
        if current and not run.cancelled and any(mode != "eager" for mode in run.request.modes):
            self.compile_delay = max(self.timing.compile_delay_s, self.compile_delay * 0.8)  # a compile that counted
        if current and not run.cancelled and not run.failures and not self.running():
            what = "sweep" if run.kind == "sweep" else "profile"
            effects.append(Notice(f"{what} done", "green", elapsed_s=now - run.started))
        return effects + self._plan(now)
