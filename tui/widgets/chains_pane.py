"""The workspace's op chains: pick one to edit and profile; add, rename, delete, duplicate.

Its keys are its own (no global command uses them): a key pressed here means the same as anywhere
else outside the editor, or it acts on the chains.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual import on
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from probes.link import fast_paths
from tui.commands import bindings
from tui.widgets.cells import plain
from tui.widgets.keys_in_order import KeysInOrder
from tui.widgets.pane import Bordered


@dataclass(frozen=True)
class ChainsState:
    chains: tuple[tuple[str, str], ...]
    """(name, text) of every chain."""
    current: int
    marked: int | None = None
    """The chain marked for compare (space), shown with a ◆."""


def chain_label(state: ChainsState, index: int) -> Text:
    """Chain ``index``'s two lines: its name (bold where current, ◆ where marked), its text's first line."""
    name, text = state.chains[index]
    label = Text(no_wrap=True, overflow="ellipsis")
    label.append_text(plain(name, "bold" if index == state.current else ""))
    if index == state.marked:
        label.append(" ◆", style="bold magenta")
    first = next((line.strip() for line in text.splitlines() if line.strip()), "(empty)")
    label.append("\n")
    label.append_text(plain(first, "dim"))
    return label


class ChainsPane(KeysInOrder, Bordered, OptionList):
    """A list of chains; Enter (or a click) posts ``Chosen``."""

    BINDINGS = bindings("chains pane")

    state: reactive[ChainsState | None] = reactive(None)

    class Chosen(Message):
        def __init__(self, index: int) -> None:
            super().__init__()
            self.index = index

    def watch_state(self, state: ChainsState | None) -> None:
        if state is None:
            return
        labels = [chain_label(state, i) for i in range(len(state.chains))]
        if len(labels) == self.option_count and fast_paths.enabled():
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
        self.post_message(self.Chosen(event.option_index))
