"""The status bar: the worker link's state, device and torch version, settings, and what is running.

One line. Left: a coloured dot and the link's words (``tui.link_state``: starting while torch
imports, ready, busy, restarting, no worker with its countdown and what ctrl+r does), the device
and torch version (while a worker answers). Middle: the settings (modes, dtype, size, reps).
Right: the activity (the worker's progress message, step/total and elapsed time) or the last
message (errors in plain words). While the link is down, why (one attempt's reason) has a line of
its own, cut to it. When narrow, the least important parts go first (the torch version, then the
settings, unless the link is down); a message too long for the line gets lines of its own,
nothing of it cut, and the settings stay on the first line. The bar keeps the messages it said
(``said``), and forgets one about a text that changed (``forget_text_message``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from probes.link import fast_paths
from tui.link_state import STYLES
from tui.widgets.cells import plain

KEPT_MESSAGES = 50
MESSAGE_GAP = 2
"""Cells kept free between the device (or the settings) and the message on the right."""
SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
STATE_STYLES: dict[str, str] = {str(phase): style for phase, style in STYLES.items()}
NO_DEVICE = ("restarting", "failed", "retrying", "stopped")
"""Link phases without a worker that answers: no device or torch version is shown for it."""


@dataclass(frozen=True)
class StatusInfo:
    worker_state: str = "starting"
    """The link's phase (``tui.link_state.Phase``): the dot's colour."""
    worker_words: str = "starting worker (importing torch)"
    worker_short: str = ""
    """The words where the line has no room for them beside the settings (none: the same)."""
    worker_why: str = ""
    """Why the link is down (the current attempt's reason), on a line of its own."""
    entries_down: tuple[str, ...] = ()
    """Another device whose link is down, named, with why: a line of its own each."""
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

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.said: list[tuple[str, str]] = []
        """Every message (the newest last), for the record and for tests."""
        self.of_text = False
        """The message is about the text as it was (see ``say``)."""

    def say(self, text: str, style: str = "", *, of_text: bool = False, show: bool = True) -> None:
        """Say ``text`` (and keep it in the record; ``show``: on the bar too, unless the app is
        going); ``of_text``: it is about the chain as typed now, and goes when the text changes."""
        self.said.append((text, style))
        del self.said[:-KEPT_MESSAGES]
        self.of_text = of_text
        if show:
            self.set(message=text, message_style=style)

    def forget_text_message(self) -> None:
        """The text measured changed (typed, or its file saved): the message about the text as it
        was (its error) goes, so that no error outlives its cause."""
        if self.of_text:
            self.of_text = False
            self.set(message="")

    def set(self, **changes: object) -> None:
        """Repaint the bar; and (a fast path) lay the screen out again only when the bar's height
        changes (a message that takes lines of its own): while anything runs its clock and spinner
        change ten times a second, and a result arriving meanwhile waits for each layout of the
        whole screen."""
        info = replace(self.info, **changes)  # type: ignore[arg-type]
        if info == self.info:
            return
        self.info = info
        if not fast_paths.enabled("repaint_without_layout") or len(self.render().split("\n")) != self.size.height:
            self.refresh(layout=True)

    def render(self) -> Text:
        info = self.info
        # The bar spans the screen. Its own size, asked for while the screen is laid out, would lay
        # the whole screen out once more (nested) to find where the bar is.
        width = self.app.size.width or 80
        style = STATE_STYLES.get(info.worker_state, "white")
        device = info.device if info.worker_state not in NO_DEVICE else ""
        torch = info.torch if device else ""
        middle = Text(f"  │ {info.settings}") if info.settings else Text()
        words = info.worker_words
        if info.worker_short and 3 + Text(words).cell_len + middle.cell_len > width:
            words = info.worker_short  # the settings keep their place
        left = Text()
        left.append(" ● ", style=style)
        left.append_text(plain(words, f"bold {style}"))
        if device:
            left.append_text(plain(f"  {device}"))
        if torch:
            left.append(f" · torch {torch}", style="dim")
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
        # settings (kept while the link is down: the bar then has a fixed height); the message is
        # never cut: it takes lines of its own (wrapped) instead, beside which the settings stay.
        # The message keeps a gap from the device ("CPU (2 cores)N=1e10: ..." where it just fitted).
        room = width - MESSAGE_GAP
        if left.cell_len + middle.cell_len + right.cell_len > room and torch:
            left = Text()
            left.append(" ● ", style=style)
            left.append_text(plain(words, f"bold {style}"))
            if device:
                left.append_text(plain(f" {device}"))
        fits = left.cell_len + middle.cell_len + right.cell_len <= room
        if not fits and not info.worker_why and left.cell_len + right.cell_len <= room:
            middle, fits = Text(), True  # the settings make room for the message
        line = Text(no_wrap=True, overflow="ellipsis")
        line.append_text(left)
        line.append_text(middle)
        if fits:
            line.append(" " * (width - left.cell_len - middle.cell_len - right.cell_len))
            line.append_text(right)
        lines = [line]
        if info.worker_why:  # one line, whatever its length: the bar keeps its height
            why = Text(" ✗ ", style="bold red", no_wrap=True, overflow="ellipsis")
            why.append_text(plain(info.worker_why, "red"))
            why.truncate(width, overflow="ellipsis")
            lines.append(why)
        for down in info.entries_down:  # one line each, like the link's own why
            entry = Text(" ✗ ", style="bold red", no_wrap=True, overflow="ellipsis")
            entry.append_text(plain(down, "red"))
            entry.truncate(width, overflow="ellipsis")
            lines.append(entry)
        if not fits and (info.activity or info.message):  # on lines of its own, the settings kept on the first
            message = Text(" ")
            message.append_text(right)
            lines += message.wrap(self.app.console, width)
        if len(lines) == 1:
            return line
        bar = Text("\n").join(lines)
        bar.no_wrap, bar.overflow = True, "ellipsis"  # each line laid out above, cut at the edge
        return bar
