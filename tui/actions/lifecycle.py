"""The app's life: autosave, quitting (asking first when edits cannot be saved), shutting down.

Quitting kills the workers first, then saves the workspace and releases its lock while they die;
the app's unmount waits what is left of a fraction of a second for them to be gone
(``WorkerBridge.kill`` and ``close``). Edits that cannot be saved (a read-only workspace, a failed
save) are never dropped without asking.
"""

from __future__ import annotations

import gc
from typing import TYPE_CHECKING

from rich.console import RenderableType
from textual.driver import Driver
from textual.timer import Timer

from probes.link.safe_text import inert_line
from tui.actions.host import AppHost
from tui.debug_log import log_error
from tui.driver import driver_class
from tui.workspace_file import WorkspaceFile

if TYPE_CHECKING:
    from tui.screens.dialogs import ChoiceDialog

AUTOSAVE_S = 1.0


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
