"""Small modal dialogs: a one-line input with validation (sizes, reps, rename), a yes/no, running a
file of the user's (its path in full), a choice."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Static

from probes.link.protocol import SourceRef
from probes.link.safe_text import inert_line
from tui.screens.own_footer import OwnFooter
from tui.widgets.keys_in_order import KeysInOrder, ScreenKeysInOrder

if TYPE_CHECKING:
    from tui.workspace_file import WorkspaceFile


class DialogInput(KeysInOrder, Input):
    """The dialog's one-line input: typed text and its keys (backspace, ctrl+u, enter) in order."""

    def types(self, event: events.Key) -> bool:
        return event.is_printable


class InputDialog(OwnFooter, ScreenKeysInOrder, ModalScreen[str | None]):
    """Ask for one value; ``check`` returns an error message (kept open) or None (accepted)."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(
        self,
        title: str,
        prompt: str,
        value: str = "",
        check: Callable[[str], str | None] | None = None,
        *,
        id: str | None = None,
    ) -> None:
        super().__init__(id=id)
        self.title_text = title
        self.prompt = prompt
        self.value = value
        self.check = check

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(self.title_text, classes="dialog-title")
            yield Static(self.prompt, classes="dialog-prompt")
            yield DialogInput(self.value, id="dialog-input", select_on_focus=True)
            yield Static("", id="dialog-error", classes="dialog-error")
            yield Static("enter: apply · escape: cancel", classes="dialog-hint")

    @on(Input.Submitted)
    def _submit(self, event: Input.Submitted) -> None:
        event.stop()
        value = event.value.strip()
        problem = self.check(value) if self.check else None
        if problem:
            self.query_one("#dialog-error", Static).update(f"✗ {problem}")
            return
        self.dismiss(value)

    def action_cancel(self) -> None:
        self.dismiss(None)


class ConfirmDialog(OwnFooter, ScreenKeysInOrder, ModalScreen[bool]):
    BINDINGS = [
        Binding("escape,n", "answer(False)", "No"),
        Binding("y", "answer(True)", "Yes"),
    ]

    def __init__(self, question: str) -> None:
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(Text(self.question), classes="dialog-prompt")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Yes (y)", id="yes", variant="error")
                yield Button("No (n)", id="no", variant="primary")

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)


class RunFileDialog(ConfirmDialog):
    """Run a function of the user's own file? Its path in full: the file's code runs (in the
    worker) only once the user has read where it is and said yes."""

    def __init__(self, ref: SourceRef) -> None:
        super().__init__(
            f"Run {ref.name} from this file?\n\n{inert_line(ref.path)}\n\n"
            "Its Python code runs in the worker process. Run it only if you trust the file."
        )
        self.ref = ref


class ChoiceDialog(OwnFooter, ScreenKeysInOrder, ModalScreen[str | None]):
    """A question with a few answers, each a button with its own key; escape answers None."""

    BINDINGS = [Binding("escape", "answer(None)", "Cancel")]

    def __init__(self, question: str, choices: list[tuple[str, str]], *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.question = question
        self.choices = choices
        """(key, label): the key answers it."""

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(Text(self.question), classes="dialog-prompt")
            with Horizontal(classes="dialog-buttons"):
                for key, label in self.choices:
                    yield Button(f"{label} ({key})", id=f"choice-{key}")

    def on_mount(self) -> None:
        self.query_one(Button).focus()

    async def on_key(self, event: events.Key) -> None:
        if any(event.key == key for key, _ in self.choices):
            event.stop()
            event.prevent_default()  # taken here: not passed on once the dialog is gone
            self.dismiss(event.key)

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.dismiss((event.button.id or "").removeprefix("choice-"))

    def action_answer(self, answer: str | None) -> None:
        self.dismiss(answer)


def unsaved_dialog(store: WorkspaceFile) -> ChoiceDialog:
    """Quitting with edits that cannot be saved: a copy, no save, or stay."""
    why = store.read_only or "the last save failed"
    return ChoiceDialog(
        f"Your edits cannot be saved to {inert_line(str(store.path))} ({inert_line(why)}).",
        [("c", "Save a copy and quit"), ("q", "Quit without saving"), ("escape", "Stay")],
        id="unsaved-dialog",
    )
