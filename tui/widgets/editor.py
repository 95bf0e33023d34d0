"""The op-chain editor: a TextArea with Python highlighting, and the inline error line under it.

Every key is applied in the order it was typed, however fast keys arrive (over SSH or from tmux
they come in bursts), and escape read together with a key (as alt+key) is both: see
``tui.widgets.keys_in_order``.

Highlighting needs tree-sitter and its Python grammar (the ``syntax`` extra, which ``make``
installs); without them the editor works the same, uncoloured. A paste is one edit; the cursor
starts at the end of the text. Control characters (from a workspace file or a paste) show as
escapes: the terminal never gets them.
"""

from __future__ import annotations

from rich.text import Text
from textual import events, on
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import Static, TextArea
from textual.widgets.text_area import LanguageDoesNotExist

from probes.link import fast_paths
from probes.link.protocol import ChainErrorInfo
from probes.link.safe_text import inert
from tui.commands import bindings
from tui.views import EditorStatus
from tui.widgets.cells import plain
from tui.widgets.keys_in_order import KeysInOrder
from tui.widgets.pane import Bordered

LETTERS_HINT = "esc: letter keys"
"""Said under the editor while it has the focus: single letters type into the chain there."""


class ChainEditor(KeysInOrder, Bordered, TextArea):
    """Where the chain is typed. Posts ``Edited`` (up to its screen) on every change of the text."""

    BINDINGS = bindings("editor")

    status: reactive[EditorStatus | None] = reactive(None)

    class TypedReadOnly(Message):
        """A key typed into the editor while it shows text that is edited elsewhere (a file's)."""

    class Edited(Message):
        """The chain's text changed; ``loaded`` when the app replaced it (another chain opened)."""

        def __init__(self, text: str, loaded: bool) -> None:
            super().__init__()
            self.text = text
            self.loaded = loaded

    def __init__(self, text: str = "", *, highlight: bool | None = None, id: str | None = None) -> None:
        super().__init__(
            inert(text),
            theme="css",
            soft_wrap=False,
            tab_behavior="focus",
            show_line_numbers=True,
            id=id,
            placeholder="type an op chain, e.g. (a + b).relu()",
        )
        self._highlight = highlight
        self._loading: str | None = None
        self.highlighted = False
        self.set_border("chain")

    def on_mount(self) -> None:
        self.move_to_end()
        if self._highlight is False:
            return
        if fast_paths.enabled("after_first_frame"):
            # Loading the grammar takes tens of ms: after the first frame, not before it.
            self.call_after_refresh(self._start_highlighting)
        else:
            self._start_highlighting()

    def _start_highlighting(self) -> None:
        selection = self.selection  # setting the language reloads the document: keep the cursor
        try:
            self.language = "python"
        except LanguageDoesNotExist:  # tree-sitter without its Python grammar
            self.language = None
        self.highlighted = self.is_syntax_aware  # without tree-sitter Textual keeps the text plain
        if self.highlighted:
            self.theme = "monokai"
        self.selection = selection

    def move_to_end(self) -> None:
        last = self.document.line_count - 1
        self.move_cursor((last, len(self.document.get_line(last))))

    def set_text(self, text: str) -> None:
        """Replace the text (another chain opened), the cursor at the end; control characters are
        shown as escapes (``\\x1b``), never sent to the terminal."""
        self._loading = inert(text)
        self.load_text(self._loading)
        self.move_to_end()

    def on_paste(self, event: events.Paste) -> None:
        # Terminals send a pasted line break as CR (tmux, xterm): it is a line break, not a control
        # character. TextArea inserts the text next, as one edit.
        event.text = inert(event.text.replace("\r\n", "\n").replace("\r", "\n"))

    def watch_status(self, status: EditorStatus | None) -> None:
        self.show_status(status, focused=self.has_focus)

    def show_status(self, status: EditorStatus | None, *, focused: bool) -> None:
        """The chain's name, the text's state, and while the editor has the focus (as it has at
        start) that letters type here: the single-letter keys are one escape away."""
        if status is not None:
            hint = f" · {LETTERS_HINT}" if focused else ""
            self.set_border(f"chain · {plain(status.name).plain}", status.status + hint)

    def on_focus(self) -> None:
        self.show_status(self.status, focused=True)

    def on_blur(self) -> None:
        self.show_status(self.status, focused=False)  # called before has_focus is cleared

    @on(TextArea.Changed)
    def _changed(self, event: TextArea.Changed) -> None:
        event.stop()
        loaded = self._loading is not None and self.text == self._loading
        self._loading = None
        self.post_message(self.Edited(self.text, loaded))

    def types(self, event: events.Key) -> bool:
        typed = event.is_printable or event.key == "enter"
        if typed and self.read_only:
            self.post_message(self.TypedReadOnly())
        return typed


class ChainErrorLine(Static):
    """Under the editor: the parse/validation error in plain words, with where (wrapped, never cut)."""

    DEFAULT_CSS = """
    ChainErrorLine {
        height: auto;
        padding: 0 1;
        color: $text-error;
        background: $error 15%;
        display: none;
    }
    ChainErrorLine.-shown { display: block; }
    """

    error: reactive[ChainErrorInfo | None] = reactive(None)

    def watch_error(self, info: ChainErrorInfo | None) -> None:
        self.set_class(info is not None, "-shown")
        if info is None:
            self.update("")
            return
        text = Text()
        text.append("✗ ", style="bold")
        text.append_text(plain(info.located(), one_line=False))
        self.update(text)
