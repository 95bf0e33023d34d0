"""The workspace's op chains: pick one to edit and profile; add, rename, delete, duplicate, mark.

Its keys are its own (no global command uses them): a key pressed here means the same as anywhere
else outside the editor, or it acts on the chains. It changes the workspace's list of chains and
says so with ``Changed`` (the screen opens the chain, saves, and says what happened); the chain
marked for compare is its own state.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from textual import on
from textual.app import SystemCommand
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from probes.link import fast_paths
from probes.link.safe_text import inert_line
from tui.commands import bindings
from tui.widgets.chain_labels import ChainsState, chain_label, first_line
from tui.widgets.keys_in_order import KeysInOrder
from tui.widgets.pane import Bordered
from tui.workspace import Workspace


class ChainsPane(KeysInOrder, Bordered, OptionList):
    """A list of chains; Enter (or a click) opens one in the editor."""

    BINDINGS = bindings("chains pane")

    state: reactive[ChainsState | None] = reactive(None)

    class Changed(Message):
        """The chains changed: ``opened``, the chain to open (in the editor, measured); ``saved``,
        the workspace changed; ``to_editor``, the focus goes to the editor; ``said``, the words."""

        def __init__(
            self, said: str = "", *, opened: int | None = None, saved: bool = True, to_editor: bool = False
        ) -> None:
            super().__init__()
            self.said = said
            self.opened = opened
            self.saved = saved
            self.to_editor = to_editor

    def __init__(self, workspace: Workspace, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.workspace = workspace
        self.marked: int | None = None
        """The chain marked for compare (space)."""

    def show(self) -> None:
        """The workspace's chains as they are now."""
        w = self.workspace
        self.state = ChainsState(tuple((c.name, c.text) for c in w.chains), w.current, self.marked)

    def watch_state(self, state: ChainsState | None) -> None:
        if state is None:
            return
        labels = [chain_label(state, i) for i in range(len(state.chains))]
        if len(labels) == self.option_count and fast_paths.enabled("repaint_without_layout"):
            # Each key in the editor changes one chain's text: its prompt is replaced in place
            # (a repaint of the list); rebuilding the list lays the whole screen out again.
            for i, label in enumerate(labels):
                if label != self.get_option_at_index(i).prompt:
                    self.replace_option_prompt_at_index(i, label)
        else:
            self.clear_options()
            self.add_options([Option(label, id=f"chain-{i}") for i, label in enumerate(labels)])
        if state.chains:
            self.highlighted = max(0, min(state.current, len(state.chains) - 1))
        self.set_border(f"chains ({len(state.chains)})")

    @on(OptionList.OptionSelected)
    def _selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.post_message(self.Changed(opened=event.option_index, to_editor=True))

    def _highlighted(self) -> int:
        return self.highlighted if self.highlighted is not None else self.workspace.current

    def action_new_chain(self) -> None:
        said = "new chain: type an expression (named after its ops when you leave the editor; f2 renames)"
        self.post_message(self.Changed(said, opened=self.workspace.add(""), to_editor=True))

    def action_duplicate_chain(self) -> None:
        opened = self.workspace.duplicate()
        self.post_message(self.Changed(f"duplicated as {self.workspace.chain.name}", opened=opened))

    def action_rename_chain(self) -> None:
        from tui.screens.dialogs import InputDialog  # dialogs: off start-up

        def done(value: str | None) -> None:
            if value:
                name = self.workspace.rename(value)
                self.show()
                self.post_message(self.Changed(f"renamed to {name}"))

        self.app.push_screen(
            InputDialog(
                "Rename chain",
                "A name for this chain:",
                inert_line(self.workspace.chain.name),
                lambda v: None if v.strip() else "the name cannot be empty",
                id="rename-dialog",
            ),
            done,
        )

    def action_delete_chain(self) -> None:
        from tui.screens.dialogs import ConfirmDialog  # dialogs: off start-up

        name = self.workspace.chain.name

        def done(yes: bool | None) -> None:
            if yes:
                self.workspace.delete()
                self.marked = None
                self.post_message(self.Changed(f"deleted {name}", opened=self.workspace.current))

        self.app.push_screen(ConfirmDialog(f"Delete the chain '{inert_line(name)}'?"), done)

    def action_mark_compare(self) -> None:
        index = self._highlighted()
        self.marked = None if self.marked == index else index
        self.show()
        self.highlighted = index
        if self.marked is None:
            said = "compare mark cleared"
        else:
            said = f"marked {self.workspace.chains[index].name}: o compares the current chain with it"
        self.post_message(self.Changed(said, saved=False))

    def choices(self, compare: Callable[[int], object]) -> Iterable[SystemCommand]:
        """The palette's entries to open each chain, and to ``compare`` the current one with it."""
        for i, chain in enumerate(self.workspace.chains):
            yield SystemCommand(
                f"Open chain: {inert_line(chain.name)}",
                first_line(chain.text),
                lambda i=i: self.post_message(self.Changed(opened=i)),
                discover=False,
            )
            if i != self.workspace.current:
                yield SystemCommand(
                    f"Compare with: {inert_line(chain.name)}",
                    first_line(chain.text),
                    lambda i=i: compare(i),
                    discover=False,
                )
