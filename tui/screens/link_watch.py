"""The worker link as the main screen follows it: the bridge's state messages, in one place.

The worker's states go to one pure machine (``tui.link_state.WorkerLink``), shown in the status
bar only: it starts a worker again by itself after a failed start, waiting longer each time, and
at once on ctrl+r; the session sends nothing while no worker answers, and measures what is missing
once one does. The compile worker's troubles are said, and the session knows where compiles run.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from probes.link.protocol import WorkerReady
from tui import presenter
from tui.bridge import CompileWorkerStateChanged, WorkerStateChanged
from tui.link_state import WorkerLink

if TYPE_CHECKING:
    from tui.screens.main import MainScreen

LINK_TICK_S = 0.5
"""How often the link's countdown is redrawn and a start that is due is made."""


class LinkWatch:
    """The worker link's state (``WorkerLink``) fed from the bridge, shown in the status bar."""

    def __init__(self, screen: MainScreen) -> None:
        self.screen = screen
        self.live = screen.live
        self.session = screen.live.session
        self.state = WorkerLink()
        self.entries = {entry: WorkerLink() for entry in range(1, len(self.session.entry_names()))}
        """The links of the other device entries (``--device`` lists several), each its own
        machine: one that cannot be reached or drops is a line of the status bar naming it."""

    def watch(self) -> None:
        """Tick while the screen lives: the countdown, and a start that is due."""
        self.screen.set_interval(LINK_TICK_S, self._tick)

    def worker_state(self, event: WorkerStateChanged) -> None:
        """A state of a device entry's workers (the first's, or another's: its own link, said
        naming it). The session follows each entry's worker: the first one ready leads."""
        if self.live.closing:
            return
        entry, now = event.entry, time.monotonic()
        link = self.entries[entry] if entry else self.state
        if _moved(link, event, now) == "down":
            self.screen.loop.apply(self.session.worker_lost(entry) + self.session.tick(now))
        elif event.state == "ready" and event.ready is not None:
            said = link.ready()
            if said is not None:
                name = self.session.entry_names()[entry]
                self.screen.message(f"{name}: {said}" if entry else said, "yellow")
            if event.ready is not self.session.state.entries[entry].ready:
                self._ready(entry, event.ready, now)
        self.show()

    def _ready(self, entry: int, ready: WorkerReady, now: float) -> None:
        """A worker of ``entry`` answers (first, or again): the session sends what it lacks; the
        status bar names the lead's device."""
        session = self.session
        leads = session.ready is None or entry <= session.lead
        if leads:  # where compiles run is the lead's to say
            session.compiles_apart = self.live.fleet.bridges[entry].compiles_apart()
        effects = session.worker_ready(ready, now, entry)
        if leads:
            self.live.workspace.settings = session.settings  # a device this worker lacks: its default
            self.screen.status.set(device=presenter.device_label(session), torch=ready.torch_version)
        self.screen.loop.apply(effects)

    def show(self) -> None:
        """The link's state in the status bar, as of now, and a line for each other device whose
        link is down or coming back."""
        now = time.monotonic()
        view = self.state.view(now, measuring=self.session.running())
        names = self.session.entry_names()
        lines = []
        for entry, link in self.entries.items():
            if link.phase not in ("starting", "ready"):
                shown = link.view(now)
                lines.append(f"{names[entry]}: {shown.why or shown.words}" + (f" · {shown.short}" if shown.why else ""))
        lead = f"{names[0]}: " if names[0] and view.why else ""  # several devices: which one's link
        self.screen.status.set(
            worker_state=view.phase,
            worker_words=view.words,
            worker_short=view.short,
            worker_why=lead + view.why,
            entries_down=tuple(lines),
        )

    def compile_worker_state(self, event: CompileWorkerStateChanged) -> None:
        """The compile worker started, failed, was lost or stopped: the session knows where compiles
        run, and the status bar says what happened."""
        if self.live.closing:
            return
        self.session.compiles_apart = self.live.fleet.bridges[event.entry].compiles_apart()
        self.session.compile_worker_starting = event.state == "starting"
        detail = event.detail.replace("the worker ", "the compile worker ", 1)
        if event.state == "failed":
            self.screen.message(
                f"the compile worker did not start: {event.detail}; compiles run in the eager worker", "yellow"
            )
        elif event.state == "lost":
            self.screen.message(f"{detail}; a new one is starting", "yellow")
        elif event.state == "stopped" and event.detail:
            self.screen.message(f"{detail}; compiles run in the eager worker", "yellow")

    def retry(self) -> None:
        """ctrl+r while no worker answers: start one now (not while one starts); a start that
        cannot be made this moment is made by the next tick."""
        now = time.monotonic()
        if self.state.retry_now(now):
            self.live.bridge.start()
        for entry, link in self.entries.items():
            if link.retry_now(now):
                self.live.fleet.start(entry)

    def _tick(self) -> None:
        if self.live.closing:
            return
        now = time.monotonic()
        if self.state.due(now):
            self.live.bridge.start()
        for entry, link in self.entries.items():
            if link.due(now):
                self.live.fleet.start(entry)
        if self.state.down or any(link.down for link in self.entries.values()):
            self.show()  # the countdown


def _moved(link: WorkerLink, event: WorkerStateChanged, now: float) -> str:
    """``link`` moved on by ``event`` (all but a worker's being ready, which says how it came
    back); ``down`` when no worker answers any more."""
    if event.state == "starting":
        link.starting()
    elif event.state == "lost":
        link.lost(event.detail)
    elif event.state == "restarting":
        link.restarting()
    elif event.state in ("failed", "stopped") and event.detail:
        link.failed(event.detail, now, permanent=event.state == "stopped")
        return "down"
    return ""
