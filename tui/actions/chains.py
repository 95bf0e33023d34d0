"""Chain actions: open, add, rename, duplicate, delete, mark for compare (the chains pane's keys)."""

from __future__ import annotations

from collections.abc import Iterable

from textual.app import SystemCommand

from probes.link.safe_text import inert_line
from tui.actions.host import AppHost
from tui.widgets.chains_pane import ChainsPane, ChainsState
from tui.widgets.editor import ChainEditor


def first_line(text: str) -> str:
    return inert_line(text.splitlines()[0]) if text.strip() else "(empty)"


class ChainActions(AppHost):
    marked: int | None = None
    """The chain marked for compare (space in the chains pane)."""

    def show_chains(self) -> None:
        w = self.workspace
        self.query_one(ChainsPane).state = ChainsState(
            tuple((c.name, c.text) for c in w.chains), w.current, self.marked
        )

    def open_chain(self, index: int) -> None:
        """Make chain ``index`` the current one: its text in the editor, measured as usual."""
        self.workspace.current = index
        self.show_chains()
        editor = self.query_one(ChainEditor)
        if editor.text != self.workspace.chain.text:
            editor.set_text(self.workspace.chain.text)
        self.schedule_save()

    def on_chains_pane_chosen(self, event: ChainsPane.Chosen) -> None:
        self.open_chain(event.index)
        self.screen.set_focus(self.query_one(ChainEditor))

    def _highlighted(self) -> int:
        pane = self.query_one(ChainsPane)
        return pane.highlighted if pane.highlighted is not None else self.workspace.current

    def action_new_chain(self) -> None:
        self.open_chain(self.workspace.add(""))
        self.screen.set_focus(self.query_one(ChainEditor))
        self.message("new chain: type an expression (named after its ops when you leave the editor; f2 renames)")

    def action_duplicate_chain(self) -> None:
        self.open_chain(self.workspace.duplicate())
        self.message(f"duplicated as {self.workspace.chain.name}")

    def action_rename_chain(self) -> None:
        from tui.screens.dialogs import InputDialog  # dialogs: off start-up

        def done(value: str | None) -> None:
            if value:
                name = self.workspace.rename(value)
                self.show_chains()
                self.schedule_save()
                self.render_panes()
                self.message(f"renamed to {name}")

        self.push_screen(
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
                self.open_chain(self.workspace.current)
                self.message(f"deleted {name}")

        self.push_screen(ConfirmDialog(f"Delete the chain '{inert_line(name)}'?"), done)

    def action_mark_compare(self) -> None:
        index = self._highlighted()
        self.marked = None if self.marked == index else index
        self.show_chains()
        self.query_one(ChainsPane).highlighted = index
        if self.marked is None:
            self.message("compare mark cleared")
        else:
            self.message(f"marked {self.workspace.chains[index].name}: o compares the current chain with it")

    def chain_choices(self) -> Iterable[SystemCommand]:
        for i, chain in enumerate(self.workspace.chains):
            yield SystemCommand(
                f"Open chain: {inert_line(chain.name)}",
                first_line(chain.text),
                lambda i=i: self.open_chain(i),
                discover=False,
            )
            if i != self.workspace.current:
                yield SystemCommand(
                    f"Compare with: {inert_line(chain.name)}",
                    first_line(chain.text),
                    lambda i=i: self.compare_chains(i),
                    discover=False,
                )
