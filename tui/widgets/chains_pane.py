"""The workspace's op chains: pick one to edit and profile; add, rename, delete, duplicate."""

from __future__ import annotations

from rich.text import Text
from textual.binding import Binding
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from tui.workspace import Chain


class ChainsPane(OptionList):
    """A list of chains; Enter (or a click) opens the highlighted one in the editor."""

    BINDINGS = [
        Binding("n", "app.new_chain", "New", tooltip="Add an empty chain"),
        Binding("r", "app.rename_chain", "Rename", tooltip="Rename the current chain"),
        Binding("y", "app.duplicate_chain", "Duplicate", tooltip="Duplicate the current chain"),
        Binding("x,delete", "app.delete_chain", "Delete", tooltip="Delete the current chain"),
        Binding("space", "app.mark_compare", "Mark", tooltip="Mark the highlighted chain to compare with (o)"),
    ]

    marked: int | None = None
    """The chain marked for compare (space), shown with a ◆."""

    def show_chains(self, chains: list[Chain], current: int) -> None:
        self.clear_options()
        options = []
        for i, chain in enumerate(chains):
            label = Text(no_wrap=True, overflow="ellipsis")
            label.append(chain.name, style="bold" if i == current else "")
            if i == self.marked:
                label.append(" ◆", style="bold magenta")
            first = next((line.strip() for line in chain.text.splitlines() if line.strip()), "(empty)")
            label.append("\n")
            label.append(first, style="dim")
            options.append(Option(label, id=f"chain-{i}"))
        self.add_options(options)
        if chains:
            self.highlighted = max(0, min(current, len(chains) - 1))
        self.border_title = f"chains ({len(chains)})"
