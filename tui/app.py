"""The kernel-tui app: edit an op chain, see its kernels eager vs compiled, live.

The app is composition and wiring: the panes (``tui.widgets``) render their own state, the live
loop's rules live in ``tui.session.LiveSession`` and what the panes are given is derived from it by
``tui.presenter`` (both without textual or torch), and the worker is reached through
``tui.bridge.WorkerBridge``. Messages flow up: ``ChainEditor.Edited``, ``WorkerEvent``,
``WorkerStateChanged``, ``ChainsPane.Chosen``, ``KernelPane.KernelChosen``; each is handed to the
session, whose effects (send, cancel, wake up, say) are carried out, then the panes get their new
state. The actions live in mixins by job (``tui.actions``), typed against ``tui.actions.host``
rather than this module. The commands (keys, footer, help, palette) come from one table,
``tui.commands``. See ARCHITECTURE.md for one edit's way from key press to rows on screen.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from textual import events, on
from textual.app import App, ComposeResult, SystemCommand
from textual.filter import LineFilter
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Footer, Input, TextArea

from probes.link import fast_paths
from probes.link.protocol import ProfileRequest, Progress, SourceRef
from probes.link.safe_text import inert
from probes.link.settings import Settings
from probes.link.state_files import UnusableDir, user_cache_dir, user_state_dir
from probes.link.worker_process import EarlyWorker
from tui import commands, presenter
from tui.actions.baseline import BaselineActions
from tui.actions.chains import ChainActions
from tui.actions.compare import CompareActions
from tui.actions.exports import ExportActions
from tui.actions.grad import GradActions
from tui.actions.lifecycle import LifecycleActions
from tui.actions.roofline import RooflineActions
from tui.actions.running import RunActions
from tui.actions.settings import SettingsActions
from tui.actions.source import SourceActions
from tui.bridge import CompileWorkerStateChanged, WorkerBridge, WorkerEvent
from tui.debug_log import log_error
from tui.runs import normalize
from tui.session import Cancel, Effect, LiveSession, Notice, Send, Timing, WakeAt
from tui.sixteen_colours import with_sixteen_colours
from tui.trust import TrustedChains
from tui.widgets.editor import ChainEditor, ChainErrorLine
from tui.widgets.kernel_pane import KernelPane
from tui.widgets.op_chain_pane import OpChainPane
from tui.widgets.status_bar import StatusBar
from tui.widgets.sweep_pane import SweepPane
from tui.widgets.workbench import Workbench, is_compact
from tui.workspace_file import WorkspaceFile, open_workspace

UNCONFIRMED = "this chain comes from the workspace file and has not run here yet: ctrl+r runs it"


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


class KernelTuiApp(
    LifecycleActions,
    RunActions,
    SettingsActions,
    ChainActions,
    CompareActions,
    ExportActions,
    GradActions,
    BaselineActions,
    RooflineActions,
    SourceActions,
    App[int],
):
    """The live kernel profiler."""

    CSS_PATH = "app.tcss"
    TITLE = "kernel-tui"
    ENABLE_COMMAND_PALETTE = True
    BINDINGS = commands.bindings("anywhere") + commands.bindings("outside the editor")

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
        export_dir: Path | None = None,
        frozen: bool = False,
        highlight: bool | None = None,
        timing: Timing | None = None,
        autosave: bool = True,
    ) -> None:
        super().__init__()
        self.store = open_workspace(workspace_path)  # WorkspaceRefused: the caller says why and exits
        self.store.notices += _folder_notices(self.store)
        self.workspace = self.store.workspace
        self.trust = TrustedChains()
        if chain is not None:
            self.workspace.select_text(chain)
            self.trust.add(chain)  # given on the command line: confirmed
        self.workspace.take(settings or {})  # given on the command line: checked values by name
        self.export_dir = export_dir or Path.cwd()
        self.frozen = frozen
        """Tests and snapshots: no clock in the status bar, no cursor blink, no elapsed times."""
        self.highlight = highlight
        self.autosave = autosave
        self.session = LiveSession(self.workspace.settings, inert(self.workspace.chain.text), timing=timing)
        if source is not None:
            self.session.hold(f"opening {inert(source.label)}")  # the chain waits: the file is what was asked for
        elif not self.trust.knows(self.workspace.chain.text):
            self.session.hold(UNCONFIRMED)
        self.bridge = WorkerBridge(
            self, worker_command, early=early_worker, early_compiler=early_compiler, compile_worker=compile_worker
        )
        self.messages: list[tuple[str, str]] = []
        """Every status-bar message (the newest last), for the record and for tests."""
        self.message_of_text = False
        """The status bar's message is about the text as it was (see ``message``)."""
        self.unsaved = False
        """Edits not written to the workspace file yet (read-only, a failed save, or not yet due)."""
        self.given_source = source
        """A file named on the command line: confirmed by being named, run at once."""
        self.chain_given = chain is not None
        """A chain named on the command line: the workspace's file is not offered over it."""
        self._wake: Timer | None = None
        self._pending_draw: Timer | None = None
        """Draws the panes a moment after a run was sent or made progress, unless something else
        draws first (see ``draw_soon``)."""

    def get_line_filters(self) -> Sequence[LineFilter]:
        """Textual's filters, and on a 16-colour terminal colours it shows readably (``tui.sixteen_colours``)."""
        return with_sixteen_colours(self.console, super().get_line_filters())

    # -- composition -----------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        compact = is_compact(self.size.width, self.size.height)
        yield Workbench(self.workspace.chain.text, highlight=self.highlight, compact=compact)
        yield StatusBar(id="status")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.bridge.start()  # adopts the worker started at launch (tui.__main__), or starts one
        editor = self.query_one(ChainEditor)
        if self.frozen:
            editor.cursor_blink = False
        editor.focus()
        self.show_chains()
        self.set_interval(0.1, self._tick_clock)
        if fast_paths.enabled():
            self.call_after_refresh(self._first_frame)  # the panes' first state: after the first frame
        else:
            self._first_frame()

    def _first_frame(self) -> None:
        for notice in self.store.notices:
            self.message(notice, "yellow")
            self.notify(notice, severity="warning", timeout=10, markup=False)
        if self.session.held:
            self.message(self.session.held, "yellow")
        self.render_panes()
        if self.given_source is not None:
            self.open_source(self.given_source, confirmed=True)
        elif self.workspace.source is not None and not self.chain_given:
            self.action_open_workspace_source()  # remembered, never run without a yes

    # -- events in, effects out -------------------------------------------------------------------

    def apply(self, effects: list[Effect]) -> None:
        """Carry out what the session asks for, then show its new state: at once, or where it
        sent a run, a moment later unless the run's rows come first (``draw_soon``)."""
        if self.closing:
            return
        run_sent = False
        for effect in effects:
            if isinstance(effect, Send):
                if isinstance(effect.request, ProfileRequest):
                    self.trust.add(effect.request.chain)  # it ran here: next time it runs by itself
                    run_sent = True
                self.bridge.send(effect.request)
            elif isinstance(effect, Cancel):
                self.bridge.cancel(effect.request_id)
            elif isinstance(effect, WakeAt):
                if self._wake is not None:
                    self._wake.stop()
                # Never a 0 s timer: Textual divides by the interval when the loop runs late.
                self._wake = self.set_timer(max(0.001, effect.when - time.monotonic()), self._woken)
            elif isinstance(effect, Notice):
                took = f" in {effect.elapsed_s:.1f} s" if effect.elapsed_s is not None and not self.frozen else ""
                self.message(effect.text + took, effect.style, of_text=effect.of_text)
        if run_sent:
            self.draw_soon()
        else:
            self.render_panes()

    def draw_soon(self) -> None:
        """Draw the panes ``Timing.progress_delay_s`` from now unless something draws first (a
        fast path; at once where fast paths are off). A new run and a run's progress are drawn
        so: an edit's eager rows usually come within that moment, and a frame drawn for the edit
        alone would hold them up behind its layout; they show the run's state anyway."""
        if not fast_paths.enabled():
            self.render_panes()
        elif self._pending_draw is None:
            self._pending_draw = self.set_timer(self.session.timing.progress_delay_s, self._draw_pending)

    def _woken(self) -> None:
        self._wake = None
        self.apply(self.session.tick(time.monotonic()))

    @on(ChainEditor.Edited)
    def _edited(self, event: ChainEditor.Edited) -> None:
        if self.session.source is not None:
            if event.loaded and event.text == self.source_text:
                return  # the source shown: the file's saves are measured, not the editor's text
            self.leave_source()
        chain = self.workspace.chain
        hold = None
        if event.loaded:  # another chain opened: its text as read, unless it is not confirmed yet
            hold = None if self.trust.knows(chain.text) else UNCONFIRMED
        elif event.text != chain.text:
            if normalize(event.text) != normalize(chain.text):
                self.forget_text_message()  # a failure of another chain: the editor says what is wrong now
            chain.text = event.text
            self.schedule_save()
            self.show_chains()
        self.apply(self.session.edit(event.text, time.monotonic(), hold=hold))
        if hold:
            self.message(hold, "yellow")

    @on(WorkerEvent)
    def _worker_event(self, event: WorkerEvent) -> None:
        effects = self.session.on_event(event.event, time.monotonic())
        if isinstance(event.event, Progress) and not effects:
            self.draw_soon()
            return
        self.apply(effects)

    def _draw_pending(self) -> None:
        self._pending_draw = None
        self.render_panes()

    @on(CompileWorkerStateChanged)
    def _compile_worker_state(self, event: CompileWorkerStateChanged) -> None:
        self.compile_worker_state_changed(event)

    def settings_changed(self, what: str, settings: Settings) -> None:
        """The settings are now ``settings``: saved with the workspace, measured by the session."""
        self.workspace.settings = settings
        self.schedule_save()
        self.message(what)
        self.apply(self.session.settings_changed(settings, what.split(":")[0], time.monotonic()))

    # -- state out --------------------------------------------------------------------------------

    def render_panes(self) -> None:
        """Give every pane its state from the session (each renders itself). A bug in a pane is
        logged and said on screen; the app and what was typed survive it."""
        if self._pending_draw is not None:
            self._pending_draw.stop()
            self._pending_draw = None
        if self.closing:
            return
        try:
            self._render_panes()
        except Exception as exc:  # logged and shown, never silent
            where = log_error(self, "internal error drawing the panes", exc)
            self.message(
                f"internal error drawing the panes: {exc!r}" + (f" (details in {where})" if where else ""), "bold red"
            )

    def _render_panes(self) -> None:
        panes = presenter.panes(
            self.session,
            name=self.source_label() or self.workspace.chain.name,
            pinned=self.pinned(),
            now=time.monotonic(),
            in_editor=isinstance(self.focused, TextArea),
            chart=self.workspace.chart,
            read_only=self.store.read_only is not None,
        )
        kernels = self.query_one(KernelPane)
        kernels.baseline = panes.baseline
        kernels.state = panes.focus
        self.query_one(OpChainPane).state = panes.focus
        self.query_one(SweepPane).state = panes.sweep
        self.follow_roofline()
        self.query_one(ChainEditor).status = panes.editor
        self.query_one(ChainErrorLine).error = panes.error
        self.query_one(StatusBar).set(settings=panes.settings)
        self._tick_clock(spin=False)
        self.query_one(Workbench).relayout()

    def on_descendant_focus(self) -> None:
        self.render_panes()  # the hints say which keys work where the focus is now

    def on_descendant_blur(self, event: events.DescendantBlur) -> None:
        """Leaving the editor names a new chain after its text, once (``Workspace.name_once``)."""
        if isinstance(event.widget, ChainEditor) and self.session.source is None and self.workspace.name_once():
            self.schedule_save()
            self.show_chains()
            self.render_panes()

    def _tick_clock(self, *, spin: bool = True) -> None:
        """What runs now, with its elapsed time (a ticking clock and a spinner while it runs)."""
        if self.closing:
            return
        activity, elapsed = presenter.activity_status(self.session, time.monotonic(), frozen=self.frozen)
        bar = self.query_one(StatusBar)
        bar.set(activity=activity, elapsed=elapsed, spin=bar.info.spin + (spin and bool(elapsed)))

    def message(self, text: str, style: str = "", *, of_text: bool = False) -> None:
        """Say ``text`` in the status bar (and keep it in the log); ``of_text``: it is about the
        chain as typed now, and goes when the text changes."""
        self.messages.append((text, style))
        del self.messages[:-50]
        self.message_of_text = of_text
        if not self.closing:
            self.query_one(StatusBar).set(message=text, message_style=style)

    def forget_text_message(self) -> None:
        """The text measured changed (typed, or its file saved): the status bar's message about
        the text as it was (its error) goes, so that no error outlives its cause."""
        if self.message_of_text:
            self.message_of_text = False
            self.query_one(StatusBar).set(message="")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in commands.MAIN_SCREEN_ACTIONS and len(self.screen_stack) > 1:
            return False  # a screen over the main one has its own keys, and its own footer
        if action in commands.LETTER_ACTIONS and isinstance(self.focused, (TextArea, Input)):
            return False  # typed as text there
        if action == "cycle_view":  # every pane is on screen but on a compact one
            bench = self.screen_stack[0].query_one_optional(Workbench) if self.screen_stack else None
            return bench is not None and bench.compact
        return True

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        titles = set()
        for command in [*commands.palette(self), *self.setting_choices(), *self.chain_choices()]:
            titles.add(command.title)
            yield command
        yield from (c for c in super().get_system_commands(screen) if c.title not in titles)

    @on(KernelPane.KernelChosen)
    def _kernel_chosen(self, event: KernelPane.KernelChosen) -> None:
        from tui.screens.kernel_detail import KernelDetail  # rich.syntax: kept off start-up

        self.push_screen(KernelDetail(event.measurement, event.row))
