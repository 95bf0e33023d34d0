"""The op-chain editor: a TextArea with Python highlighting, and the inline error line under it.

Highlighting needs tree-sitter and its Python grammar (``textual[syntax]``); without them the
editor works the same, uncoloured. Escape leaves the editor for the result panes, where the
single-letter keys work.
"""

from __future__ import annotations

from rich.text import Text
from textual.binding import Binding
from textual.widgets import Static, TextArea

from probes.protocol import ChainErrorInfo


def python_highlighting_available() -> bool:
    try:
        from textual._tree_sitter import get_language  # noqa: PLC0415 (optional dependency)

        return get_language("python") is not None
    except Exception:  # noqa: BLE001 (any failure: no highlighting, never a crash)
        return False


class ChainEditor(TextArea):
    """Where the chain is typed. Posts TextArea.Changed on every edit (the app debounces)."""

    BINDINGS = [
        Binding("escape", "app.leave_editor", "Results", tooltip="Leave the editor for the result panes"),
        Binding("ctrl+r", "app.run_now", "Run now", tooltip="Profile the chain now, without waiting"),
        Binding("f1", "app.help", "Help", tooltip="Every key binding"),
    ]

    def __init__(self, text: str = "", *, highlight: bool | None = None, id: str | None = None) -> None:
        super().__init__(
            text,
            theme="css",
            soft_wrap=False,
            tab_behavior="focus",
            show_line_numbers=True,
            id=id,
            placeholder="type an op chain, e.g. (a + b).relu()",
        )
        self._highlight = highlight
        self.highlighted = False
        self.border_title = "chain"

    def on_mount(self) -> None:
        if self._highlight is not False:
            # Loading the grammar takes tens of ms: after the first frame, not before it.
            self.call_after_refresh(self._start_highlighting)

    def _start_highlighting(self) -> None:
        if python_highlighting_available():
            self.language = "python"
            self.theme = "monokai"
            self.highlighted = True

    def set_text(self, text: str) -> None:
        """Replace the text (switching chains) keeping undo sane and the cursor at the end."""
        self.load_text(text)
        last = self.document.line_count - 1
        self.move_cursor((last, len(self.document.get_line(last))))


class ChainErrorLine(Static):
    """One line under the editor: the parse/validation error, in plain words, with where."""

    DEFAULT_CSS = """
    ChainErrorLine {
        height: auto;
        max-height: 2;
        padding: 0 1;
        color: $text-error;
        background: $error 15%;
        display: none;
    }
    ChainErrorLine.-shown { display: block; }
    """

    def show_error(self, info: ChainErrorInfo | None, where: str = "") -> None:
        if info is None:
            self.remove_class("-shown")
            self.update("")
            return
        text = Text()
        text.append("✗ ", style="bold")
        text.append(f"{where}{info.located()}")
        self.update(text)
        self.add_class("-shown")
