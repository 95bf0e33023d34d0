"""What the panes show, as values: per mode the fresh measurement or the last one shown (stale, with
why, once the grace period is over), what runs now, and the sweep. The session's state computes
them (``tui.session_state.SessionState``: ``focus_view()``, ``sweep_view()``, ``activity()``); no
textual, no torch.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Literal

from probes.link.baseline import Delta
from probes.link.protocol import Measurement, Progress, RequestFailed
from tui.runs import SweepResults

ModeActivity = Literal["", "waiting", "starting", "measuring", "compiling", "after a pause", "held"]


def step_activity(progress: Progress) -> ModeActivity:
    """A worker's step as a mode's activity: importing the compiler is part of compiling; a wait
    for the device (another process measures there) is waiting."""
    if progress.stage == "waiting":
        return "waiting"
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
    batch: str | None = None
    """The request the measurement came from (None: not known); a ratio pairs one request's only."""


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
    two_processes: bool = False
    """The eager and compiled readings shown came from one request split between the eager and
    the compile worker: their wall times were timed in two processes."""
    entry: str = ""
    """The device entry shown (``b:cpu``), where ``--device`` lists several; empty otherwise."""
    devices: tuple[FocusView, ...] = ()
    """Every entry's view, the first entry's first, where there are several (the side-by-side
    summary); empty for a single device."""

    def mode(self, mode: str) -> ModeView | None:
        return next((v for v in self.modes if v.mode == mode), None)

    def sweep_share_only(self, lead: str) -> FocusView:
        """This view for a device of a spread sweep other than ``lead``: the size measured on every
        edit goes to the lead alone, so nothing here waits for it, and the view says why."""
        return dataclasses.replace(
            self,
            modes=tuple(dataclasses.replace(view, activity="") for view in self.modes),
            held=self.held
            or "this device measures only its share of the sweep (--spread); "
            f"the size measured on every edit runs on {lead}",
        )


@dataclass(frozen=True)
class SweepView:
    results: SweepResults | None
    sizes: tuple[int, ...]
    compile_mode: str
    stale: str | None = None
    running: bool = False
    lost: bool = False
    """The sweep ended because the worker (or its link) was lost."""
    two_processes: bool = False
    """Its eager and compiled rows were timed in two processes (the eager and the compile worker)."""
    entry: str = ""
    """The device entry shown, where there are several (see ``FocusView.entry``)."""
    devices: tuple[tuple[str, SweepResults | None], ...] = ()
    """Every entry's part of the sweep, by name, where there are several (a chart line each)."""
    spread: tuple[str, ...] = ()
    """The entries' names, by index, where the sweep was spread over them (``--spread``): one
    sweep, each point naming its entry (``SweepResults.measured_by``)."""


def missing_sizes(rs: SweepResults) -> tuple[int, ...]:
    """The sizes of a sweep with a mode neither measured nor refused on its own (a size refused
    for memory is accounted for; a run that ended early, cancelled or with its worker lost, is
    not): while any is missing, no verdict or crossover may be drawn from the rest."""
    refused = {(f.size, f.mode) for f in rs.run.failures if f.size is not None}
    return tuple(
        size
        for size in rs.sizes
        if any(
            (size, mode) not in rs.results and (size, mode) not in refused and (size, None) not in refused
            for mode in rs.modes
        )
    )


@dataclass(frozen=True)
class WorkerActivity:
    """The request the worker is serving now, for the status bar."""

    text: str
    started: float


@dataclass(frozen=True)
class SweepPaneState:
    """What the sweep pane draws: the sweep, the chart chosen, the device's peak, its hint and the
    pin's deltas."""

    view: SweepView
    chart: str = "time"
    peak_gbps: float | None = None
    hint: str = "press s to sweep"
    """How to start a sweep from where the focus is now."""
    baseline: list[Delta] = field(default_factory=list)
    """The sweep's deltas against the chain's pinned result (a ``vs pin`` column when any)."""


@dataclass(frozen=True)
class EditorStatus:
    name: str
    """The chain's name (from the workspace: outside text)."""
    status: str
    """``✓``, ``profiling…``, ``edited``, ``✗ error``, ``empty``."""
