"""The main screen: the panes, the status bar and the keys that work on them.

It carries the live loop: messages come up (``ChainEditor.Edited``, ``WorkerEvent``,
``WorkerStateChanged``, ``ChainsPane.Changed``, ``KernelPane.KernelChosen``); each is handed to
the pure session (``tui.session.LiveSession``), whose effects (send, cancel, wake up, say) are
carried out here, and then the panes get their new state (``tui.presenter``). Each job of its keys
lives with what it acts on: the settings (``tui.screens.setting_keys``), the user's file
(``tui.screens.source_follow``), the worker link (``tui.screens.link_watch``), pins
(``tui.screens.pins``), compare and exports (``tui.screens.compare_open``,
``tui.screens.exports``); the chains pane and the grid own theirs (``tui.widgets``). Its keys are
off while a screen is over it: that screen has keys and a footer of its own.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from textual import events, on
from textual.app import ComposeResult, SystemCommand
from textual.binding import ActiveBinding
from textual.screen import Screen
from textual.widgets import Footer, Input, TextArea

from probes.chain.matching import normalize
from probes.link import fast_paths
from probes.link.protocol import SourceRef
from tui import commands
from tui.bridge import CompileWorkerStateChanged, WorkerEvent, WorkerStateChanged
from tui.screens.compare_open import Comparisons
from tui.screens.exports import export
from tui.screens.link_watch import LinkWatch
from tui.screens.live_loop import LiveLoop
from tui.screens.pins import Pins
from tui.screens.setting_keys import SettingKeys
from tui.screens.source_follow import SourceFollow
from tui.widgets.chains_pane import ChainsPane
from tui.widgets.editor import ChainEditor
from tui.widgets.grid import is_compact
from tui.widgets.kernel_pane import KernelPane
from tui.widgets.keys_in_order import to_focus
from tui.widgets.status_bar import StatusBar
from tui.widgets.workbench import Workbench

if TYPE_CHECKING:
    from probes.link.settings import Settings
    from tui.app import KernelTuiApp

UNCONFIRMED = "this chain comes from the workspace file and has not run here yet: ctrl+r runs it"
CLOCK_S = 0.1
"""How often the status bar's clock and spinner move while something runs."""


class MainScreen(Screen[None]):
    """The workbench of panes under the status bar and the footer."""

    BINDINGS = commands.screen_bindings()
    AUTO_FOCUS = "#editor"
    """The editor has the focus as soon as the screen is composed: keys that reach the screen
    as it is shown (those typed over the start screen, ``take_keys``) go to the editor."""

    def __init__(self, live: KernelTuiApp, *, highlight: bool | None, source: SourceRef | None, chain_given: bool):
        super().__init__()
        self.live = live
        self.session = live.session
        self.workspace = live.workspace
        self.highlight = highlight
        self.given_source = source
        """A file named on the command line: confirmed by being named, run at once."""
        self.chain_given = chain_given
        """A chain named on the command line: the workspace's file is not offered over it."""
        self.status = StatusBar(id="status")
        self.last_export: Path | None = None
        """The file the last export wrote."""
        self.settings = SettingKeys(self)
        self.source = SourceFollow(self)
        self.link = LinkWatch(self)
        self.pins = Pins(self)
        self.comparisons = Comparisons(self)
        self.loop = LiveLoop(self)
        self.panes_drawn = False
        """Whether the panes have their first state (``_first_frame``): a focus change before it
        has nothing to redraw."""

    # -- composition -----------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        compact = is_compact(self.app.size.width, self.app.size.height)
        yield Workbench(self.workspace, highlight=self.highlight, compact=compact)
        yield self.status
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.live.fleet.start()  # adopts the worker started at launch (tui.__main__), or starts one
        editor = self.query_one(ChainEditor)
        if self.live.frozen:
            editor.cursor_blink = False
        editor.focus()
        self.query_one(ChainsPane).show()
        self.set_interval(CLOCK_S, self.loop.tick_clock)
        self.link.watch()
        if fast_paths.enabled("after_first_frame"):
            self.call_after_refresh(self._first_frame)  # the panes' first state: after the first frame
        else:
            self._first_frame()

    def take_keys(self, keys: Iterable[tuple[str, str | None]]) -> None:
        """Keys read before this screen was shown (over ``tui.screens.start``), handed on in
        order to where the focus is (the editor)."""
        for key, character in keys:
            to_focus(self, key, character)

    def _first_frame(self) -> None:
        for notice in self.live.store.notices:
            self.message(notice, "yellow")
            self.notify(notice, severity="warning", timeout=10, markup=False)
        if self.session.held:
            self.message(self.session.held, "yellow")
        self.panes_drawn = True
        self.loop.render_panes()
        if self.given_source is not None:
            self.source.open(self.given_source, confirmed=True)
        elif self.workspace.source is not None and not self.chain_given:
            self.source.open_remembered()  # remembered, never run without a yes

    # -- events in --------------------------------------------------------------------------------

    @on(ChainEditor.Edited)
    def _edited(self, event: ChainEditor.Edited) -> None:
        if self.session.source is not None:
            if event.loaded and event.text == self.source.text:
                return  # the source shown: the file's saves are measured, not the editor's text
            self.source.leave()
        chain = self.workspace.chain
        hold = None
        if event.loaded:  # another chain opened: its text as read, unless it is not confirmed yet
            hold = None if self.live.trust.knows(chain.text) else UNCONFIRMED
        elif event.text != chain.text:
            if normalize(event.text) != normalize(chain.text):
                self.status.forget_text_message()  # a failure of another chain: the editor says what is wrong now
            chain.text = event.text
            self.live.schedule_save()
            self.query_one(ChainsPane).show()
        self.loop.apply(self.session.edit(event.text, time.monotonic(), hold=hold))
        if hold:
            self.message(hold, "yellow")

    @on(WorkerEvent)
    def _worker_event(self, event: WorkerEvent) -> None:
        kept = event.entry != self.session.lead  # another device's: kept, and drawn
        effects = self.session.on_event(event.event, time.monotonic(), event.entry)
        if kept and not effects:
            self.loop.render_panes()
            return
        self.loop.apply(effects)

    @on(WorkerStateChanged)
    def _worker_state(self, event: WorkerStateChanged) -> None:
        self.link.worker_state(event)

    @on(CompileWorkerStateChanged)
    def _compile_worker_state(self, event: CompileWorkerStateChanged) -> None:
        if event.entry == self.session.lead:  # another device's compile worker: its own worker takes its compiles
            self.link.compile_worker_state(event)

    @on(ChainsPane.Changed)
    def _chains_changed(self, event: ChainsPane.Changed) -> None:
        if event.opened is not None:
            self.open_chain(event.opened)
        elif event.saved:
            self.live.schedule_save()
            self.loop.render_panes()
        if event.to_editor:
            self.set_focus(self.query_one(ChainEditor))
        if event.said:
            self.message(event.said)

    @on(ChainEditor.TypedReadOnly)
    def _typed_read_only(self) -> None:
        self.source.typed_read_only()

    @on(KernelPane.KernelChosen)
    def _kernel_chosen(self, event: KernelPane.KernelChosen) -> None:
        from tui.screens.kernel_detail import KernelDetail  # rich.syntax: kept off start-up

        self.app.push_screen(KernelDetail(event.measurement, event.row))

    def settings_changed(self, what: str, settings: Settings) -> None:
        """The settings are now ``settings``: saved with the workspace, measured by the session."""
        self.workspace.settings = settings
        self.live.schedule_save()
        self.message(what)
        self.loop.apply(self.session.settings_changed(settings, what.split(":")[0], time.monotonic()))

    def open_chain(self, index: int) -> None:
        """Make chain ``index`` the current one: its text in the editor, measured as usual."""
        self.workspace.current = index
        self.query_one(ChainsPane).show()
        editor = self.query_one(ChainEditor)
        if editor.text != self.workspace.chain.text:
            editor.set_text(self.workspace.chain.text)
        self.live.schedule_save()

    def on_descendant_focus(self) -> None:
        if self.panes_drawn:  # the editor's first focus comes before the first frame
            self.loop.render_panes()  # the hints say which keys work where the focus is now

    def on_descendant_blur(self, event: events.DescendantBlur) -> None:
        """Leaving the editor names a new chain after its text, once (``Workspace.name_once``)."""
        if isinstance(event.widget, ChainEditor) and self.session.source is None and self.workspace.name_once():
            self.live.schedule_save()
            self.query_one(ChainsPane).show()
            self.loop.render_panes()

    def message(self, text: str, style: str = "", *, of_text: bool = False) -> None:
        """Say ``text`` in the status bar (``StatusBar.say``)."""
        self.status.say(text, style, of_text=of_text, show=not self.live.closing)

    # -- keys -------------------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in commands.LETTER_ACTIONS and isinstance(self.focused, (TextArea, Input)):
            return False  # typed as text there
        if action == "cycle_view":  # every pane is on screen but on a compact one
            return self.query_one(Workbench).compact
        return True

    @property
    def active_bindings(self) -> dict[str, ActiveBinding]:
        """Textual's, with ``d`` in the footer where it moves the panes between several devices."""
        found = super().active_bindings
        active = found.get("d")
        if active is not None and active.binding.action == "cycle_device" and self.live.fleet.several:
            shown = dataclasses.replace(active.binding, show=True)
            found["d"] = ActiveBinding(active.node, shown, active.enabled, active.tooltip)
        return found

    def palette_commands(self) -> Iterable[SystemCommand]:
        """Every command by name (``tui.commands``), then each setting's and each chain's choices."""
        chains = self.query_one(ChainsPane)
        yield from commands.palette((self.live, self, chains))
        yield from self.settings.choices()
        yield from chains.choices(self.comparisons.compare_chains)

    def action_help(self) -> None:
        from tui.screens.help import HelpScreen

        if not isinstance(self.app.screen, HelpScreen):
            self.app.push_screen(HelpScreen(commands.help_rows()))

    def action_help_key(self) -> None:
        self.action_help()

    async def action_quit_key(self) -> None:
        await self.live.action_quit()

    def action_run_now(self) -> None:
        self.link.retry()  # every device whose worker is down starts again (with several, the lead may answer)
        if self.session.ready is None:
            self.session.held = None
            return
        self.loop.apply(self.session.run_now(time.monotonic()))

    def action_sweep(self) -> None:
        bench = self.query_one(Workbench)
        if bench.compact:
            bench.show_view("sweep")
        self.loop.apply(self.session.start_sweep(time.monotonic()))

    def action_stop(self) -> None:
        self.loop.apply(self.session.stop())

    def action_edit(self) -> None:
        self.set_focus(self.query_one(ChainEditor))

    def action_leave_editor(self) -> None:
        self.query_one(Workbench).leave_editor()

    def action_cycle_view(self) -> None:
        bench = self.query_one(Workbench)
        if bench.compact:
            bench.cycle_view()
        else:
            self.message("every pane is on screen at this size: v switches panes below 120x34", "")

    def action_toggle_chains(self) -> None:
        self.query_one(Workbench).toggle_chains()

    def action_open_workspace_source(self) -> None:
        self.source.open_remembered()

    def action_compare(self) -> None:
        self.comparisons.compare(self.query_one(ChainsPane).marked)

    def action_roofline(self) -> None:
        self.comparisons.roofline()

    def action_pin(self) -> None:
        self.pins.pin()

    def action_unpin(self) -> None:
        self.pins.unpin()

    def action_compare_pin(self) -> None:
        self.pins.compare()

    def action_export_json(self) -> None:
        export(self, "json")

    def action_export_csv(self) -> None:
        export(self, "csv")

    def action_export_trace(self) -> None:
        export(self, "trace")

    def action_export_svg(self) -> None:
        export(self, "svg")

    def action_cycle_modes(self) -> None:
        self.settings.cycle_modes()

    def action_cycle_compile_mode(self) -> None:
        self.settings.cycle_compile_mode()

    def action_cycle_dtype(self) -> None:
        self.settings.cycle_dtype()

    def action_cycle_device(self) -> None:
        """The next device: of the setting, or with several (``--device``), the one the panes follow."""
        if not self.live.fleet.several:
            self.settings.cycle_device()
            return
        name = self.session.follow_next()
        self.message(f"the kernel and sweep panes follow {name}")
        self.loop.render_panes()

    def action_toggle_grad(self) -> None:
        self.settings.toggle_grad()

    def action_set_sizes(self) -> None:
        self.settings.ask_sizes()

    def action_set_focus_size(self) -> None:
        self.settings.ask_focus_size()

    def action_set_reps(self) -> None:
        self.settings.ask_reps()

    def action_cycle_chart(self) -> None:
        self.settings.cycle_chart()
