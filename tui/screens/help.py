"""The help screen: every key binding, where it works, and what the panes show."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from tui.screens.own_footer import OwnFooter
from tui.widgets.keys_in_order import ScreenKeysInOrder

ABOUT = (
    "Type an op chain in the editor; it is checked as you type, measured eager at once and under "
    "torch.compile right after (the next key stops a compile). Compiled rows show before their wall "
    'time ("timing…"). Results that no longer match the text or the settings are marked '
    "STALE, with why. A ratio marked host-bound (hb in the sweep) is the host's speed in this "
    "process, not the chain's: its kernels take under half of the call. "
    "Escape leaves the editor so that the single-letter keys work; e (or i) goes back. "
    "Every action is also in the command palette (ctrl+p)."
)


def binding_rows(rows: list[tuple[str, str, str]]) -> Table:
    table = Table(box=None, padding=(0, 2), show_header=True, header_style="bold")
    table.add_column("key", style="bold cyan", no_wrap=True)
    table.add_column("action")
    table.add_column("where", style="dim", no_wrap=True)
    for keys, what, where in rows:
        table.add_row(keys, what, where)
    return table


class HelpScreen(OwnFooter, ScreenKeysInOrder, ModalScreen[None]):
    BINDINGS = [Binding("escape,q,question_mark,f1", "dismiss", "Close")]

    def __init__(self, rows: list[tuple[str, str, str]]) -> None:
        super().__init__()
        self.rows = rows
        """(keys, what it does, where it works): ``tui.commands.help_rows()``."""

    def compose(self) -> ComposeResult:
        with Vertical(classes="detail"):
            yield Static(Text("kernel-tui: keys", style="bold"), classes="detail-title")
            with VerticalScroll():
                yield Static(Text(ABOUT), classes="help-about")
                yield Static(binding_rows(self.rows))
            yield Static("escape: close", classes="dialog-hint")
