"""The main grid: chains, editor, op chain, kernels and sweep, laid out for the terminal's size.

Wide (>= 120x34): everything at once; the kernel row is as tall as its rows need, and an empty
sweep pane (no sweep yet) takes three lines, leaving the spare height to the kernel pane, where
results appear and grow (grad doubles the rows), rather than to an editor of one line. Compact:
the editor and one pane below it (``view``: kernels, op chain or sweep), the chains pane only
when asked for. The layout follows every resize. It owns which pane is shown and where the focus
goes between them (``cycle_view``, ``toggle_chains``, ``leave_editor``: the main screen's keys).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.containers import Container, Vertical
from textual.reactive import reactive

from tui.widgets.chains_pane import ChainsPane
from tui.widgets.editor import ChainEditor, ChainErrorLine
from tui.widgets.grid import VIEWS, grid_classes, is_compact
from tui.widgets.kernel_pane import KernelPane
from tui.widgets.op_chain_pane import OpChainPane
from tui.widgets.sweep_pane import SweepPane

if TYPE_CHECKING:
    from tui.presenter import Panes
    from tui.workspace import Workspace

EDITOR_ROWS = 10
EMPTY_SWEEP_ROWS = 3


class Workbench(Container):
    view: reactive[str] = reactive("kernels", init=False)
    """The pane shown under the editor on a compact screen."""
    chains_shown: reactive[bool | None] = reactive(None, init=False)
    """None: shown on wide screens, hidden on compact ones."""

    def __init__(self, workspace: Workspace, *, highlight: bool | None, compact: bool) -> None:
        super().__init__(id="main")
        self.compact = compact
        self.workspace = workspace
        self._highlight = highlight
        self.set_classes(self.layout_classes())

    def compose(self) -> ComposeResult:
        yield ChainsPane(self.workspace, id="chains")
        with Vertical(id="editor-box"):
            yield ChainEditor(self.workspace.chain.text, highlight=self._highlight, id="editor")
            yield ChainErrorLine(id="chain-error")
        yield OpChainPane(id="ops")
        yield KernelPane(id="kernels")
        yield SweepPane(id="sweep")

    def show(self, panes: Panes) -> None:
        """Every pane's state for one draw (each renders itself)."""
        kernels = self.query_one(KernelPane)
        kernels.baseline = panes.baseline
        kernels.state = panes.focus
        self.query_one(OpChainPane).state = panes.focus
        self.query_one(SweepPane).state = panes.sweep
        self.query_one(ChainEditor).status = panes.editor
        self.query_one(ChainErrorLine).error = panes.error

    def cycle_view(self) -> None:
        """The next pane under the editor (a compact screen has one at a time)."""
        self.show_view(VIEWS[(VIEWS.index(self.view) + 1) % len(VIEWS)])

    def show_view(self, view: str) -> None:
        """Show ``view`` (on a compact screen the only pane under the editor) and focus it."""
        self.view = view
        if view == "kernels":
            self.query_one(KernelPane).focus_table()
        else:
            self.screen.set_focus(self.query_one("#ops-table" if view == "ops" else "#sweep-table"))

    def toggle_chains(self) -> None:
        self.chains_shown = not self.chains_visible
        if self.chains_shown:
            self.screen.set_focus(self.query_one(ChainsPane))

    def leave_editor(self) -> None:
        """Escape in the editor: to the pane shown under it (the kernels' table on a wide screen)."""
        if self.compact and self.view != "kernels":
            self.show_view(self.view)
        else:
            self.query_one(KernelPane).focus_table()

    @property
    def chains_visible(self) -> bool:
        return not self.compact if self.chains_shown is None else self.chains_shown

    def layout_classes(self) -> str:
        return grid_classes(compact=self.compact, chains_visible=self.chains_visible, view=self.view)

    def on_resize(self) -> None:
        size = self.app.size
        compact = is_compact(size.width, size.height)
        if compact != self.compact:
            self.compact = compact
            self.app.refresh_bindings()  # the footer shows "v View" only on a compact screen
        self.relayout()

    def on_kernel_pane_height_changed(self, event: KernelPane.HeightChanged) -> None:
        event.stop()
        self.relayout()

    def watch_view(self) -> None:
        self.relayout()

    def watch_chains_shown(self) -> None:
        self.relayout()

    def relayout(self) -> None:
        """Classes for the current size and view; the wide grid's rows sized from the panes' needs."""
        classes = self.layout_classes()
        if " ".join(sorted(self.classes)) != " ".join(sorted(classes.split())):
            self.set_classes(classes)  # one restyle, not one per class
        if self.compact:
            self.styles.grid_rows = None
            return
        if self.query_one(SweepPane).empty:
            rows = f"{EDITOR_ROWS} 1fr {EMPTY_SWEEP_ROWS}"
        else:
            height = self.size.height or self.app.size.height
            kernels = self.query_one(KernelPane).desired_height()
            rows = f"{EDITOR_ROWS} {min(kernels, max(8, height // 2 - 4))} 1fr"
        if str(self.styles.grid_rows) != rows:
            self.styles.grid_rows = rows
