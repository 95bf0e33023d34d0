"""The kernel-tui app: edit an op chain, see its kernels eager vs compiled, live.

The app is a composition: it owns the workspace (and its autosave), the live session
(``tui.session.LiveSession``, pure) and the bridges to the workers, one per device
(``tui.fleet``; one unless ``--device`` lists several), and shows
the main screen (``tui.screens.main.MainScreen``), which composes the panes and carries the
session's effects out; screens over it (help, details, compare, roofline, dialogs) own their keys.
Its own keys are the two that work on every screen: ctrl+q quits, ctrl+c stops or quits. Quitting
kills the workers first, then saves the workspace and releases its lock while they die; the app's
unmount waits what is left of a fraction of a second for them to be gone (``WorkerBridge.kill``
and ``close``). Edits that cannot be saved (a read-only workspace, a failed save) are never
dropped without asking. See ARCHITECTURE.md for one edit's way from key press to rows on screen.
"""

from __future__ import annotations

import gc
from collections.abc import Iterable, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import RenderableType
from textual.app import App, SystemCommand
from textual.driver import Driver
from textual.filter import LineFilter
from textual.screen import Screen
from textual.timer import Timer

from probes.link.safe_text import inert
from probes.link.settings import DeviceEntry
from probes.link.state_files import UnusableDir, user_cache_dir, user_state_dir
from tui import commands
from tui.debug_log import log_error
from tui.device_entries import entry_names, spread_over, trusted_entries
from tui.driver import driver_class
from tui.screens.start import StartScreen
from tui.sixteen_colours import with_sixteen_colours
from tui.trust import TrustedChains
from tui.workspace_file import WorkspaceFile, open_workspace

if TYPE_CHECKING:
    from probes.link.protocol import SourceRef
    from probes.link.worker_process import EarlyWorker
    from tui.bridge import WorkerBridge
    from tui.fleet import DeviceFleet
    from tui.screens.main import MainScreen
    from tui.session import LiveSession, Timing

AUTOSAVE_S = 1.0


def _folder_notices(store: WorkspaceFile) -> list[str]:
    """What is not kept because a folder of the app's own cannot be used; the workspace's notice
    has said it already where the workspace would live there."""
    found = []
    losses = ((user_state_dir, "confirmed chains are not remembered"), (user_cache_dir, "nothing is cached"))
    for folder, lost in losses:
        try:
            folder()
        except UnusableDir as exc:
            if str(exc) != store.read_only:
                found.append(f"{exc}: {lost}")
    return found


class KernelTuiApp(App[int]):
    """The live kernel profiler."""

    CSS_PATH = "app.tcss"
    TITLE = "kernel-tui"
    ENABLE_COMMAND_PALETTE = True
    BINDINGS = commands.app_bindings()

    session: LiveSession
    main: MainScreen
    fleet: DeviceFleet
    bridge: WorkerBridge
    """The first device's bridge (the link of the first entry, its restarts)."""

    def __init__(
        self,
        *,
        chain: str | None = None,
        source: SourceRef | None = None,
        worker_command: list[str] | str | None = None,
        early_worker: EarlyWorker | None = None,
        early_compiler: EarlyWorker | None = None,
        compile_worker: bool | None = None,
        workspace_path: Path | None = None,
        settings: Mapping[str, Any] | None = None,
        devices: list[DeviceEntry] | None = None,
        hosts: Mapping[str, str] | None = None,
        export_dir: Path | None = None,
        frozen: bool = False,
        highlight: bool | None = None,
        timing: Timing | None = None,
        autosave: bool = True,
        start_screen: bool = False,
    ) -> None:
        """Everything a bad argument is refused for is checked here (WorkspaceRefused, SettingError).
        ``start_screen``: the first frame is the start screen's (``tui.screens.start``), and the
        session, the main screen and the worker link are made after it; else they are made now."""
        super().__init__()
        self.store = open_workspace(workspace_path)  # WorkspaceRefused: the caller says why and exits
        self.store.notices += _folder_notices(self.store)
        self.workspace = self.store.workspace
        self.trust = TrustedChains()
        if chain is not None:
            self.workspace.select_text(chain)
            self.trust.add(chain)  # given on the command line: confirmed
        self.workspace.take(settings or {})  # given on the command line: checked values by name
        entries = trusted_entries(self.workspace, self.trust, devices, hosts, self.store.notices)
        spread = spread_over(entries, self.workspace.settings.spread, "spread" in (settings or {}), self.store.notices)
        self.export_dir = export_dir or Path.cwd()
        self.frozen = frozen
        """Tests and snapshots: no clock in the status bar, no cursor blink, no elapsed times."""
        self.autosave = autosave
        self.unsaved = False
        """Edits not written to the workspace file yet (read-only, a failed save, or not yet due)."""
        self._early = (early_worker, early_compiler)
        self._save_timer: Timer | None = None
        self._quitting = False
        self._exiting = False
        self._build_main = partial(
            self._build,
            entries=entries,
            spread=spread,
            source=source,
            chain_given=chain is not None,
            worker_command=worker_command,
            compile_worker=compile_worker,
            highlight=highlight,
            timing=timing,
        )
        self.start: StartScreen | None = StartScreen(self.workspace, self._open_main) if start_screen else None
        """The first frame's screen until the main screen replaces it; None once it has."""
        if self.start is None:
            self._build_main()

    def _build(
        self,
        *,
        entries: list[DeviceEntry],
        spread: bool,
        source: SourceRef | None,
        chain_given: bool,
        worker_command: list[str] | str | None,
        compile_worker: bool | None,
        highlight: bool | None,
        timing: Timing | None,
    ) -> MainScreen:
        """The session, the main screen and the worker link (their modules imported here: most of
        the app's, off the start screen's first frame)."""
        from tui.fleet import DeviceFleet
        from tui.screens.main import UNCONFIRMED, MainScreen
        from tui.session import LiveSession

        self.session = LiveSession(self.workspace.settings, inert(self.workspace.chain.text), timing=timing)
        self.session.set_entries(entry_names(entries), spread=spread)
        if source is not None:
            self.session.hold(f"opening {inert(source.label)}")  # the chain waits: the file is what was asked for
        elif not self.trust.knows(self.workspace.chain.text):
            self.session.hold(UNCONFIRMED)
        self.main = MainScreen(self, highlight=highlight, source=source, chain_given=chain_given)
        early, early_compiler = self._early
        self.fleet = DeviceFleet(
            self,
            entries,
            self.workspace.hosts,
            worker_command,
            early=early,
            early_compiler=early_compiler,
            compile_worker=compile_worker,
            listener=self.main,
        )
        self.bridge = self.fleet.first
        return self.main

    @property
    def built(self) -> bool:
        """Whether the main screen is there (it is from the start unless a start screen draws first)."""
        return self.start is None

    def get_default_screen(self) -> Screen[None]:
        return self.main if self.start is None else self.start

    def on_ready(self) -> None:
        if self.built:
            gc.enable()  # off while the app started (tui.__main__.main)

    async def _open_main(self) -> MainScreen | None:
        """The main screen built and shown over the start screen (None when quitting already),
        which stays beneath it, never shown again (Textual switches away from a pushed screen
        only); then the collector is on (``tui.__main__`` keeps it off through start-up)."""
        if self.closing:
            return None
        main = self._build_main()
        await self.push_screen(main)
        self.start = None
        if not gc.isenabled():  # off through start-up (tui.__main__.main): what the build made is frozen too
            gc.freeze()
            gc.enable()
        return main

    def get_line_filters(self) -> Sequence[LineFilter]:
        """Textual's filters, and on a 16-colour terminal colours it shows readably (``tui.sixteen_colours``)."""
        return with_sixteen_colours(self.console, super().get_line_filters())

    def get_driver_class(self) -> type[Driver]:
        return driver_class(self)

    # -- the commands of every screen -------------------------------------------------------------

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        titles = set()
        for command in self.main.palette_commands() if self.built else ():
            titles.add(command.title)
            yield command
        yield from (c for c in super().get_system_commands(screen) if c.title not in titles)

    def action_command_palette(self) -> None:
        """Textual's palette, with a footer of its own (``tui.screens.own_footer``)."""
        from textual.command import CommandPalette

        from tui.screens.own_footer import Palette

        if self.use_command_palette and not isinstance(self.screen, CommandPalette):
            self.push_screen(Palette(id="--command-palette"))

    async def action_interrupt(self) -> None:
        if self.built and self.session.running():
            self.main.action_stop()
            self.main.message("stopped (ctrl+c again, or ctrl+q, quits)", "yellow")
        else:
            await self.action_quit()

    # -- the workspace ----------------------------------------------------------------------------

    def schedule_save(self) -> None:
        """The workspace changed: written ``AUTOSAVE_S`` from now (unless it may not be)."""
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
            if self.built:  # before, the app is quitting: the debug log has it
                self.main.message(
                    f"could not save the workspace to {self.store.path}: {exc.strerror or exc}", "bold red"
                )
            return False
        self.unsaved = False
        return True

    # -- quitting ---------------------------------------------------------------------------------

    @property
    def closing(self) -> bool:
        """Not running (starting, quitting or exiting): the panes may not be there, nothing is drawn."""
        return self._quitting or self._exiting or not self.is_running

    def exit(self, result: int | None = None, return_code: int = 0, message: RenderableType | None = None) -> None:
        self._exiting = True
        super().exit(result, return_code, message)

    async def action_quit(self) -> None:
        if self.screen.id == "unsaved-dialog":
            self.unsaved = False  # asked to quit again while asked about the edits: quit
        if self.unsaved and not self.save_workspace() and self.autosave:
            from tui.screens.dialogs import unsaved_dialog  # dialogs: off start-up

            self.push_screen(unsaved_dialog(self.store), self._quit_answered)
            return
        self.begin_shutdown()
        self.exit(0)

    async def _quit_answered(self, answer: str | None) -> None:
        if answer == "c":
            try:
                where = self.store.save_copy()
            except OSError as exc:
                self.main.message(f"no copy could be saved: {exc.strerror or exc}", "bold red")
                return
            self.unsaved = False
            self.main.message(f"saved a copy as {where}", "green")
        if answer in ("c", "q"):
            self.unsaved = False
            await self.action_quit()

    def begin_shutdown(self) -> None:
        """Kill the workers, then save: they die while the app saves and takes itself down."""
        if self._quitting:
            return
        self._quitting = True
        if self.built:
            self.fleet.kill()
        else:  # quit on the start screen: the workers started at launch are not adopted yet
            for worker in self._early:
                if worker is not None:
                    worker.kill()
        self.save_workspace()
        self.store.release()

    async def on_unmount(self) -> None:
        """The app's last step: what is left of the short wait for the workers to be gone."""
        self.begin_shutdown()
        if self.built:
            await self.fleet.close()
