"""What the panes show, computed from a ``LiveSession``: per mode the fresh measurement or the last
one shown (stale, with why, once the grace period is over), what runs now, and the sweep. Pure
values, no textual, no torch.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from probes.link.protocol import Measurement, Progress, RequestFailed
from tui.runs import MeasureKey, SweepResults

if TYPE_CHECKING:
    from tui.session import LiveSession


ModeActivity = Literal["", "waiting", "starting", "measuring", "compiling", "after a pause", "held"]


def step_activity(progress: Progress) -> ModeActivity:
    """A worker's step as a mode's activity: importing the compiler is part of compiling."""
    return "compiling" if progress.stage in ("importing", "compiling") else "measuring"


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


def focus_view(session: LiveSession, now: float) -> FocusView:
    """Per selected mode at the focus size: what to show, whether it is fresh, what runs for it."""
    keys = session.focus_keys()
    modes = []
    outdated = False
    coming = True
    for mode, key in keys.items():
        fresh = session.book.cache.get(key)
        failure = session.book.failed.get(key)
        shown = fresh or session.shown.get(mode)
        activity = mode_activity(session, mode, key)
        if fresh is None and shown is not None:
            outdated = True
            coming = coming and activity in ("waiting", "starting", "measuring", "compiling", "after a pause")
        if fresh is None and failure is not None:
            coming = False
        modes.append(ModeView(mode, shown, fresh is not None, activity, failure))
    failures = session.book.failures_of(session.chain, session.target())
    errors = tuple(f for f in failures if f.size is None and f.mode is None)
    stale = None
    updating = False
    if outdated:
        within_grace = now - session.changed_at < session.timing.stale_grace_s
        if session.parse_error is None and coming and within_grace and not errors:
            updating = True
        else:
            stale = "the chain has an error" if session.parse_error is not None else session.held or session.why_stale
    busy = any(key in session.book.pending for key in keys.values())
    return FocusView(session.settings.focus_size, tuple(modes), stale, updating, errors, busy, session.held)


def sweep_view(session: LiveSession) -> SweepView:
    """The last sweep, stale (with why) when it no longer covers the text and settings."""
    s = session.settings
    sweep = session.sweep
    stale = None
    if sweep is not None and not sweep.covers(session.chain, session.target(), session.modes(), tuple(s.sizes)):
        if session.parse_error is not None:
            stale = "the chain has an error"
        elif sweep.run.chain != session.chain:
            stale = "sweep of an earlier text"
        else:
            stale = "settings changed: s sweeps again"
    running = sweep is not None and not sweep.run.done and not sweep.run.cancelled
    return SweepView(sweep, tuple(s.sizes), s.compile_mode, stale, running)


def worker_activity(session: LiveSession) -> WorkerActivity | None:
    """The run the worker is serving now (the oldest one not done), in words."""
    run = next((r for r in session.book.runs.values() if r.kind != "other" and not r.cancelled), None)
    if run is None:
        return None
    p = run.progress
    if p is None:
        return WorkerActivity("sending", run.started)
    step = f" ({p.step}/{p.total})" if p.total else ""
    return WorkerActivity(f"{p.message}{step}", run.started)


def mode_activity(session: LiveSession, mode: str, key: MeasureKey) -> ModeActivity:
    """What happens for ``key`` (the current chain and settings in ``mode``) now."""
    rid = session.book.pending.get(key)
    if rid is not None:
        progress = session.book.runs[rid].progress
        if progress is not None and progress.mode == mode and progress.size in (None, key[2]):
            return step_activity(progress)
        return "starting" if mode != "eager" and session.compile_worker_starting else "waiting"
    if key in session.book.cache or key in session.book.failed or session.parse_error is not None:
        return ""
    if session.held is not None:
        return "held"
    if session.ready is None:
        return "waiting"
    return "after a pause" if mode != "eager" else "waiting"
