"""The settings the main screen's keys change: modes, compile mode, dtype, device, grad, sizes, N,
reps and the chart.

Every change that alters what a measurement means goes through ``MainScreen.settings_changed``:
the session re-measures what no longer matches (the rows on screen are marked stale meanwhile).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import TYPE_CHECKING

from textual.app import SystemCommand

from probes.chain.dtype_names import DTYPES
from probes.link.settings import Settings, parse_reps
from probes.link.summary import format_size, parse_size, parse_sizes
from tui import presenter
from tui import workspace as ws
from tui.widgets.grid import VIEWS
from tui.widgets.workbench import Workbench

if TYPE_CHECKING:
    from tui.screens.main import MainScreen


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


class SettingKeys:
    """The workspace's settings as the main screen's keys, dialogs and palette change them."""

    def __init__(self, screen: MainScreen) -> None:
        self.screen = screen
        self.session = screen.live.session

    @property
    def workspace(self) -> ws.Workspace:
        return self.screen.live.workspace

    @property
    def settings(self) -> Settings:
        return self.workspace.settings

    def cycle_modes(self) -> None:
        self.set_modes(next_in(ws.MODE_CHOICES, self.workspace.toggle))

    def set_modes(self, toggle: str) -> None:
        settings = self.workspace.toggled(toggle)
        self.screen.settings_changed(f"modes: {ws.describe_modes(settings)}", settings)

    def cycle_compile_mode(self) -> None:
        self.set_compile_mode(next_in(ws.COMPILE_MODES, self.workspace.compile_mode))

    def set_compile_mode(self, mode: str) -> None:
        self.workspace.compile_mode = mode
        self.screen.settings_changed(f"compile mode: {mode}", self.workspace.toggled(self.workspace.toggle))

    def cycle_dtype(self) -> None:
        self.set_dtype(next_in(DTYPES, self.settings.dtype))

    def set_dtype(self, dtype: str) -> None:
        self.screen.settings_changed(f"dtype: {dtype}", replace(self.settings, dtype=dtype))

    def cycle_device(self) -> None:
        names = presenter.device_names(self.session)
        if not names:
            self.screen.message("the worker is still starting: devices are not known yet", "yellow")
            return
        if len(names) == 1:
            self.screen.message(f"{names[0]} is the only device this worker has", "")
            return
        self.set_device(next_in(names, self.session.device or ""))

    def set_device(self, name: str) -> None:
        self.screen.settings_changed(f"device: {name}", replace(self.settings, device=name))
        self.screen.status.set(device=presenter.device_label(self.session))

    def toggle_grad(self) -> None:
        """Measure forward + backward, or the forward pass alone: a setting like the dtype (the
        session keys its cache by it, so switching back shows the earlier rows at once)."""
        self.set_grad(not self.settings.grad)

    def set_grad(self, on: bool) -> None:
        what = "grad: forward + backward" if on else "grad: forward only"
        self.screen.settings_changed(what, replace(self.settings, grad=on))

    def cycle_chart(self) -> None:
        self.workspace.chart = next_in(ws.CHART_VIEWS, self.workspace.chart)
        self.screen.live.schedule_save()
        self.screen.loop.render_panes()

    def ask_sizes(self) -> None:
        s = self.settings

        def done(value: str | None) -> None:
            if value:
                sizes = tuple(parse_sizes(value))
                what = "sweep sizes: " + ", ".join(format_size(n) for n in sizes)
                self.screen.settings_changed(what, replace(self.settings, sizes=sizes))

        self._ask(
            "Sweep sizes",
            "Comma-separated sizes N (1e6, 1_000_000 and 1M all work):",
            ",".join(format_size(n) for n in s.sizes),
            parse_check(parse_sizes),
            "sizes-dialog",
            done,
        )

    def ask_focus_size(self) -> None:
        s = self.settings

        def done(value: str | None) -> None:
            if value:
                size = parse_size(value)
                self.screen.settings_changed(f"N: {format_size(size)}", replace(self.settings, focus_size=size))

        self._ask(
            "Size N",
            "The size measured on every edit:",
            format_size(s.focus_size),
            parse_check(parse_size),
            "size-dialog",
            done,
        )

    def ask_reps(self) -> None:
        s = self.settings

        def done(value: str | None) -> None:
            if value is not None:
                reps = parse_reps(value)
                what = f"reps: {'auto' if reps is None else reps}"
                self.screen.settings_changed(what, replace(self.settings, reps=reps))

        self._ask(
            "Reps",
            "Timing reps per measurement (auto: sized to the kernel time):",
            "auto" if s.reps is None else str(s.reps),
            check_reps,
            "reps-dialog",
            done,
        )

    def _ask(
        self,
        title: str,
        prompt: str,
        value: str,
        check: Callable[[str], str | None],
        dialog_id: str,
        done: Callable[[str | None], None],
    ) -> None:
        from tui.screens.dialogs import InputDialog  # dialogs: off start-up

        self.screen.app.push_screen(InputDialog(title, prompt, value, check, id=dialog_id), done)

    def choices(self) -> Iterable[SystemCommand]:
        """The palette's entries for each choice of each setting, and each pane (narrow screens)."""
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
                f"default inputs in {dtype} (now {self.settings.dtype})",
                lambda d=dtype: self.set_dtype(d),
                discover=False,
            )
        for name in presenter.device_names(self.session):
            yield SystemCommand(
                f"Device: {name}", f"measure on {name}", lambda n=name: self.set_device(n), discover=False
            )
        bench = self.screen.query_one(Workbench)
        for view in VIEWS:
            yield SystemCommand(
                f"View: {view}",
                f"show the {view} pane (narrow screens)",
                lambda v=view: bench.show_view(v),
                discover=False,
            )
