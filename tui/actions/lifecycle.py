"""The app's life: the worker link, autosave, quitting (asking first when edits cannot be saved),
shutting down.

The worker's states go to one pure machine (``tui.link_state.WorkerLink``), shown in one place,
the status bar: it starts a worker again by itself after a failed start, waiting longer each
time, and at once on ctrl+r; the session sends nothing while no worker answers, and measures
what is missing once one does. Quitting kills the workers first, then saves the workspace and
releases its lock while they die; the app's unmount waits what is left of a fraction of a second
for them to be gone (``WorkerBridge.kill`` and ``close``). Edits that cannot be saved (a
read-only workspace, a failed save) are never dropped without asking.
"""

from __future__ import annotations

import gc
import time
from typing import TYPE_CHECKING

from rich.console import RenderableType
from textual.driver import Driver
from textual.timer import Timer

from probes.link.safe_text import inert_line
from tui import presenter
from tui.actions.host import AppHost
from tui.bridge import CompileWorkerStateChanged, WorkerStateChanged
from tui.debug_log import log_error
from tui.driver import driver_class
from tui.link_state import WorkerLink
from tui.widgets.status_bar import StatusBar
from tui.workspace_file import WorkspaceFile

if TYPE_CHECKING:
    from tui.screens.dialogs import ChoiceDialog

AUTOSAVE_S = 1.0
LINK_TICK_S = 0.5
"""How often the link's countdown is redrawn and a start that is due is made."""


def unsaved_dialog(store: WorkspaceFile) -> ChoiceDialog:
    from tui.screens.dialogs import ChoiceDialog  # dialogs: off start-up

    why = store.read_only or "the last save failed"
    return ChoiceDialog(
        f"Your edits cannot be saved to {inert_line(str(store.path))} ({inert_line(why)}).",
        [("c", "Save a copy and quit"), ("q", "Quit without saving"), ("escape", "Stay")],
        id="unsaved-dialog",
    )


class LifecycleActions(AppHost):
    _save_timer: Timer | None = None
    _quitting = False
    _exiting = False
    _link: WorkerLink | None = None

    # -- the worker link -------------------------------------------------------------------------

    @property
    def link(self) -> WorkerLink:
        if self._link is None:
            self._link = WorkerLink()
        return self._link

    def on_mount(self) -> None:
        self.set_interval(LINK_TICK_S, self._link_tick)

    def on_worker_state_changed(self, event: WorkerStateChanged) -> None:
        if self.closing:
            return
        link, now = self.link, time.monotonic()
        if event.state == "starting":
            link.starting()
        elif event.state == "lost":
            link.lost(event.detail)
        elif event.state == "restarting":
            link.restarting()
        elif event.state in ("failed", "stopped") and event.detail:
            self.session.worker_lost()
            link.failed(event.detail, now, permanent=event.state == "stopped")
            self.render_panes()
        elif event.state == "ready" and event.ready is not None:
            said = link.ready()
            if said is not None:
                self.message(said, "yellow")
            if event.ready is not self.session.ready:
                self.session.compiles_apart = self.bridge.compiles_apart()
                effects = self.session.worker_ready(event.ready, now)
                self.workspace.settings = self.session.settings  # a device this worker lacks: its default
                self.query_one(StatusBar).set(
                    device=presenter.device_label(self.session), torch=event.ready.torch_version
                )
                self.apply(effects)
        self.show_link()

    def show_link(self) -> None:
        """The link's state in the status bar, as of now."""
        view = self.link.view(time.monotonic(), measuring=self.session.running())
        self.query_one(StatusBar).set(
            worker_state=view.phase, worker_words=view.words, worker_short=view.short, worker_why=view.why
        )

    def compile_worker_state_changed(self, event: CompileWorkerStateChanged) -> None:
        """The compile worker started, failed, was lost or stopped: the session knows where compiles
        run, and the status bar says what happened."""
        if self.closing:
            return
        self.session.compiles_apart = self.bridge.compiles_apart()
        self.session.compile_worker_starting = event.state == "starting"
        detail = event.detail.replace("the worker ", "the compile worker ", 1)
        if event.state == "failed":
            self.message(
                f"the compile worker did not start: {event.detail}; compiles run in the eager worker", "yellow"
            )
        elif event.state == "lost":
            self.message(f"{detail}; a new one is starting", "yellow")
        elif event.state == "stopped" and event.detail:
            self.message(f"{detail}; compiles run in the eager worker", "yellow")

    def retry_link(self) -> None:
        """ctrl+r while no worker answers: start one now (not while one starts); a start that
        cannot be made this moment is made by the next tick."""
        if self.link.retry_now(time.monotonic()):
            self.bridge.start()

    def _link_tick(self) -> None:
        if self.closing:
            return
        if self.link.due(time.monotonic()):
            self.bridge.start()
        if self.link.down:
            self.show_link()  # the countdown

    def schedule_save(self) -> None:
        self.unsaved = True
        if not self.autosave or self.store.read_only:
            return
        if self._save_timer is not None:
            self._save_timer.stop()
        self._save_timer = self.set_timer(AUTOSAVE_S, self.save_workspace)

    def save_workspace(self) -> bool:
        """Write the workspace if it may be written; True when nothing is left unsaved."""
        if not self.autosave or self.store.read_only:
            return not self.unsaved
        try:
            self.store.save()
        except OSError as exc:
            log_error(self, f"saving the workspace to {self.store.path}", exc)
            self.message(f"could not save the workspace to {self.store.path}: {exc.strerror or exc}", "bold red")
            return False
        self.unsaved = False
        return True

    @property
    def closing(self) -> bool:
        """Not running (starting, quitting or exiting): the panes may not be there, nothing is drawn."""
        return self._quitting or self._exiting or not self.is_running

    def on_ready(self) -> None:
        gc.enable()  # off while the app started (tui.__main__.main)

    def get_driver_class(self) -> type[Driver]:
        return driver_class(self)

    def exit(self, result: int | None = None, return_code: int = 0, message: RenderableType | None = None) -> None:
        self._exiting = True
        super().exit(result, return_code, message)

    async def action_quit(self) -> None:
        if self.screen.id == "unsaved-dialog":
            self.unsaved = False  # asked to quit again while asked about the edits: quit
        if self.unsaved and not self.save_workspace() and self.autosave:
            self.push_screen(unsaved_dialog(self.store), self._quit_answered)
            return
        self.begin_shutdown()
        self.exit(0)

    async def _quit_answered(self, answer: str | None) -> None:
        if answer == "c":
            try:
                where = self.store.save_copy()
            except OSError as exc:
                self.message(f"no copy could be saved: {exc.strerror or exc}", "bold red")
                return
            self.unsaved = False
            self.message(f"saved a copy as {where}", "green")
        if answer in ("c", "q"):
            self.unsaved = False
            await self.action_quit()

    async def action_quit_key(self) -> None:
        await self.action_quit()

    def begin_shutdown(self) -> None:
        """Kill the workers, then save: they die while the app saves and takes itself down."""
        if self._quitting:
            return
        self._quitting = True
        self.bridge.kill()
        self.save_workspace()
        self.store.release()

    async def on_unmount(self) -> None:
        """The app's last step: what is left of the short wait for the workers to be gone."""
        self.begin_shutdown()
        await self.bridge.close()
