"""Running and stopping what the session measures, moving between the editor and the tables, and
help: the actions every screen of the app has."""

from __future__ import annotations

import time

from probes.link.protocol import Measurement
from tui import commands
from tui.actions.host import AppHost
from tui.widgets.editor import ChainEditor
from tui.widgets.kernel_pane import KernelPane
from tui.widgets.workbench import Workbench


class RunActions(AppHost):
    def action_run_now(self) -> None:
        if self.session.ready is None:
            self.retry_link()
            self.session.held = None
            return
        self.apply(self.session.run_now(time.monotonic()))

    def action_sweep(self) -> None:
        if self.query_one(Workbench).compact:
            self.show_view("sweep")
        self.apply(self.session.start_sweep(time.monotonic()))

    def action_stop(self) -> None:
        self.apply(self.session.stop())

    async def action_interrupt(self) -> None:
        if self.session.running():
            self.action_stop()
            self.message("stopped (ctrl+c again, or ctrl+q, quits)", "yellow")
        else:
            await self.action_quit()

    def action_edit(self) -> None:
        self.screen.set_focus(self.query_one(ChainEditor))

    def action_leave_editor(self) -> None:
        bench = self.query_one(Workbench)
        if bench.compact and bench.view != "kernels":
            self.show_view(bench.view)
        else:
            self.query_one(KernelPane).focus_table()

    def action_help(self) -> None:
        from tui.screens.help import HelpScreen

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(commands.help_rows()))

    def action_help_key(self) -> None:
        self.action_help()

    def action_command_palette(self) -> None:
        """Textual's palette, with a footer of its own (``tui.screens.own_footer``)."""
        from textual.command import CommandPalette

        from tui.screens.own_footer import Palette

        if self.use_command_palette and not isinstance(self.screen, CommandPalette):
            self.push_screen(Palette(id="--command-palette"))

    def still_timing(self, results: list[Measurement], then: str) -> bool:
        """Whether any of ``results`` still has its wall time being timed (said, with what to do
        ``then``): what keeps or writes figures for good waits the moment it takes."""
        timing = [m.mode for m in results if m.wall_pending]
        if timing:
            self.message(f"{', '.join(timing)}: its wall time is being timed; {then} in a moment", "yellow")
        return bool(timing)
