"""The status bar: worker state, device and torch version, settings, and what is running.

One line. Left: a coloured dot and the worker state (starting while torch imports, ready, busy,
restarting, stopped), the device and torch version. Middle: the settings (modes, dtype, size,
reps). Right: the activity (the worker's progress message, step/total and elapsed time) or the
last message (errors in plain words). When narrow, the least important parts go first, and a
message too long for the line gets lines of its own: nothing of it is cut.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from probes.link import fast_paths
from tui.widgets.cells import plain

MESSAGE_GAP = 2
"""Cells kept free between the device (or the settings) and the message on the right."""
SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
STATE_STYLES = {
    "starting": "yellow",
    "ready": "green",
    "busy": "cyan",
    "restarting": "yellow",
    "lost": "yellow",
    "stopped": "red",
    "failed": "red",
}


@dataclass(frozen=True)
class StatusInfo:
    worker_state: str = "starting"
    worker_detail: str = "importing torch"
    device: str = ""
    torch: str = ""
    settings: str = ""
    activity: str = ""
    """What is running now (empty when idle)."""
    elapsed: str = ""
    spin: int = 0
    message: str = ""
    message_style: str = ""


class StatusBar(Widget):
    DEFAULT_CSS = """
    StatusBar {
        height: auto;
        max-height: 4;
        background: $panel;
        color: $text;
    }
    """

    info: reactive[StatusInfo] = reactive(StatusInfo)

    def set(self, **changes: object) -> None:
        """Repaint the bar; and (a fast path) lay the screen out again only when the bar's height
        changes (a message that takes lines of its own): while anything runs its clock and spinner
        change ten times a second, and a result arriving meanwhile waits for each layout of the
        whole screen."""
        info = replace(self.info, **changes)  # type: ignore[arg-type]
        if info == self.info:
            return
        self.info = info
        if not fast_paths.enabled() or len(self.render().split("\n")) != self.size.height:
            self.refresh(layout=True)

    def render(self) -> Text:
        info = self.info
        # The bar spans the screen. Its own size, asked for while the screen is laid out, would lay
        # the whole screen out once more (nested) to find where the bar is.
        width = self.app.size.width or 80
        style = STATE_STYLES.get(info.worker_state, "white")
        state = info.worker_state
        if state == "starting" and info.worker_detail:
            state = f"starting worker ({info.worker_detail})"
        elif state in ("restarting", "lost", "stopped", "failed") and info.worker_detail:
            state = f"{state}: {info.worker_detail}"
        left = Text()
        left.append(" ● ", style=style)
        left.append_text(plain(state, f"bold {style}"))
        if info.device:
            left.append_text(plain(f"  {info.device}"))
        if info.torch:
            left.append(f" · torch {info.torch}", style="dim")
        middle = Text(f"  │ {info.settings}") if info.settings else Text()
        right = Text()
        if info.activity:
            right.append(f"{SPINNER[info.spin % len(SPINNER)]} ", style="cyan")
            right.append_text(plain(info.activity, "cyan"))
            if info.elapsed:
                right.append(f" {info.elapsed}", style="bold cyan")
        elif info.message:
            right.append_text(plain(info.message, info.message_style))
        right.append(" ")
        # The least important parts go first when there is no room: the torch version, then the
        # settings; the message is never cut: it takes a line of its own (wrapped) instead. The
        # message keeps a gap from the device ("CPU (2 cores)N=1e10: ..." where it just fitted).
        room = width - MESSAGE_GAP
        if left.cell_len + middle.cell_len + right.cell_len > room and info.torch:
            left = Text()
            left.append(" ● ", style=style)
            left.append_text(plain(state, f"bold {style}"))
            if info.device:
                left.append_text(plain(f" {info.device}"))
        if left.cell_len + middle.cell_len + right.cell_len > room:
            middle = Text()
        line = Text(no_wrap=True, overflow="ellipsis")
        line.append_text(left)
        line.append_text(middle)
        if left.cell_len + middle.cell_len + right.cell_len <= room:
            line.append(" " * (width - left.cell_len - middle.cell_len - right.cell_len))
            line.append_text(right)
            return line
        message = Text(" ")
        message.append_text(right)
        return Text("\n").join([line, *message.wrap(self.app.console, width)])
