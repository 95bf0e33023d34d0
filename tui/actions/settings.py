"""Settings actions: modes, compile mode, dtype, device, sizes, N, reps, chart, views.

Every change that alters what a measurement means goes through ``settings_changed()``: the session
re-measures what no longer matches (the rows on screen are marked stale meanwhile).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace

from textual.app import SystemCommand

from probes.chain.dtype_names import DTYPES
from probes.link.settings import parse_reps
from probes.link.summary import format_size, parse_size, parse_sizes
from tui import presenter
from tui import workspace as ws
from tui.actions.host import AppHost
from tui.widgets.chains_pane import ChainsPane
from tui.widgets.kernel_pane import KernelPane
from tui.widgets.status_bar import StatusBar
from tui.widgets.workbench import VIEWS, Workbench


def check_reps(value: str) -> str | None:
    return parse_check(parse_reps)(value)


def parse_check(parse: Callable[[str], object]) -> Callable[[str], str | None]:
    """A dialog check from a parser: its ValueError's message, or None when the text parses."""

    def check(value: str) -> str | None:
        try:
            parse(value)
        except ValueError as exc:
            return str(exc)
        return None

    return check


def next_in(choices: tuple[str, ...] | list[str], current: str) -> str:
    return choices[(choices.index(current) + 1) % len(choices)] if current in choices else choices[0]


class SettingsActions(AppHost):
    def action_cycle_modes(self) -> None:
        self.set_modes(next_in(ws.MODE_CHOICES, self.workspace.toggle))

    def set_modes(self, toggle: str) -> None:
        settings = self.workspace.toggled(toggle)
        self.settings_changed(f"modes: {ws.describe_modes(settings)}", settings)

    def action_cycle_compile_mode(self) -> None:
        self.set_compile_mode(next_in(ws.COMPILE_MODES, self.workspace.compile_mode))

    def set_compile_mode(self, mode: str) -> None:
        self.workspace.compile_mode = mode
        self.settings_changed(f"compile mode: {mode}", self.workspace.toggled(self.workspace.toggle))

    def action_cycle_dtype(self) -> None:
        self.set_dtype(next_in(DTYPES, self.workspace.settings.dtype))

    def set_dtype(self, dtype: str) -> None:
        self.settings_changed(f"dtype: {dtype}", replace(self.workspace.settings, dtype=dtype))

    def action_cycle_device(self) -> None:
        names = presenter.device_names(self.session)
        if not names:
            self.message("the worker is still starting: devices are not known yet", "yellow")
            return
        if len(names) == 1:
            self.message(f"{names[0]} is the only device this worker has", "")
            return
        self.set_device(next_in(names, self.session.device or ""))

    def set_device(self, name: str) -> None:
        self.settings_changed(f"device: {name}", replace(self.workspace.settings, device=name))
        self.query_one(StatusBar).set(device=presenter.device_label(self.session))

    def action_set_sizes(self) -> None:
        from tui.screens.dialogs import InputDialog  # dialogs: off start-up

        s = self.workspace.settings

        def done(value: str | None) -> None:
            if value:
                sizes = tuple(parse_sizes(value))
                what = "sweep sizes: " + ", ".join(format_size(n) for n in sizes)
                self.settings_changed(what, replace(self.workspace.settings, sizes=sizes))

        self.push_screen(
            InputDialog(
                "Sweep sizes",
                "Comma-separated sizes N (1e6, 1_000_000 and 1M all work):",
                ",".join(format_size(n) for n in s.sizes),
                parse_check(parse_sizes),
                id="sizes-dialog",
            ),
            done,
        )

    def action_set_focus_size(self) -> None:
        from tui.screens.dialogs import InputDialog

        s = self.workspace.settings

        def done(value: str | None) -> None:
            if value:
                size = parse_size(value)
                self.settings_changed(f"N: {format_size(size)}", replace(self.workspace.settings, focus_size=size))

        self.push_screen(
            InputDialog(
                "Size N",
                "The size measured on every edit:",
                format_size(s.focus_size),
                parse_check(parse_size),
                id="size-dialog",
            ),
            done,
        )

    def action_set_reps(self) -> None:
        from tui.screens.dialogs import InputDialog

        s = self.workspace.settings

        def done(value: str | None) -> None:
            if value is not None:
                reps = parse_reps(value)
                what = f"reps: {'auto' if reps is None else reps}"
                self.settings_changed(what, replace(self.workspace.settings, reps=reps))

        self.push_screen(
            InputDialog(
                "Reps",
                "Timing reps per measurement (auto: sized to the kernel time):",
                "auto" if s.reps is None else str(s.reps),
                check_reps,
                id="reps-dialog",
            ),
            done,
        )

    def action_cycle_chart(self) -> None:
        self.workspace.chart = next_in(ws.CHART_VIEWS, self.workspace.chart)
        self.schedule_save()
        self.render_panes()

    def action_cycle_view(self) -> None:
        bench = self.query_one(Workbench)
        if not bench.compact:
            self.message("every pane is on screen at this size: v switches panes below 120x34", "")
            return
        self.show_view(next_in(VIEWS, bench.view))

    def show_view(self, view: str) -> None:
        bench = self.query_one(Workbench)
        bench.view = view
        if view == "kernels":
            self.query_one(KernelPane).focus_table()
        else:
            self.screen.set_focus(self.query_one("#ops-table" if view == "ops" else "#sweep-table"))

    def action_toggle_chains(self) -> None:
        bench = self.query_one(Workbench)
        bench.chains_shown = not bench.chains_visible
        if bench.chains_shown:
            self.screen.set_focus(self.query_one(ChainsPane))

    def setting_choices(self) -> Iterable[SystemCommand]:
        s = self.workspace.settings
        for choice in ws.MODE_CHOICES:
            yield SystemCommand(
                f"Mode: {choice}", f"measure {choice}", lambda c=choice: self.set_modes(c), discover=False
            )
        for mode in ws.COMPILE_MODES:
            yield SystemCommand(
                f"Compile mode: {mode}",
                f"torch.compile mode {mode}",
                lambda m=mode: self.set_compile_mode(m),
                discover=False,
            )
        for dtype in DTYPES:
            yield SystemCommand(
                f"Dtype: {dtype}",
                f"default inputs in {dtype} (now {s.dtype})",
                lambda d=dtype: self.set_dtype(d),
                discover=False,
            )
        for name in presenter.device_names(self.session):
            yield SystemCommand(
                f"Device: {name}", f"measure on {name}", lambda n=name: self.set_device(n), discover=False
            )
        for view in VIEWS:
            yield SystemCommand(
                f"View: {view}",
                f"show the {view} pane (narrow screens)",
                lambda v=view: self.show_view(v),
                discover=False,
            )
