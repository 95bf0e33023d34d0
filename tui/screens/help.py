"""The help screen: every key binding, where it works, and what the panes show."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

ABOUT = (
    "Type an op chain in the editor; it is checked as you type and profiled after a short pause, "
    "eager and under torch.compile. Results that no longer match the text are marked STALE. "
    "Escape leaves the editor so that the single-letter keys work; e (or i) goes back. "
    "Every action is also in the command palette (ctrl+p)."
)


def binding_rows(groups: list[tuple[str, list[Binding]]]) -> Table:
    table = Table(box=None, padding=(0, 2), show_header=True, header_style="bold")
    table.add_column("key", style="bold cyan", no_wrap=True)
    table.add_column("action")
    table.add_column("where", style="dim")
    for where, bindings in groups:
        for b in bindings:
            keys = ", ".join(k.strip() for k in b.key.split(","))
            table.add_row(keys, b.description or b.action, where)
    return table


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,question_mark,f1", "dismiss", "Close")]

    def __init__(self, groups: list[tuple[str, list[Binding]]]) -> None:
        super().__init__()
        self.groups = groups

    def compose(self) -> ComposeResult:
        with Vertical(classes="detail"):
            yield Static(Text("kernel-tui: keys", style="bold"), classes="detail-title")
            with VerticalScroll():
                yield Static(Text(ABOUT), classes="help-about")
                yield Static(binding_rows(self.groups))
            yield Static("escape: close", classes="dialog-hint")
