"""The first frame: the main screen's grid drawn from the workspace alone, while the rest of the
app is imported and built.

Most of the app's own start-up is importing its modules (the session, the panes, the worker
link): drawn after them, the first frame waits for all of it. This screen needs only Textual and
the workspace, so it is drawn first, with the chain in the editor's place, the chains listed and
every pane where the main screen puts it (the workspace's text inert, as the panes show it).
Right after that frame the app builds the main screen and shows it; the build runs in the app's
own message loop, so keys read meanwhile wait in the app's queue and reach the main screen's
editor in the order they were typed. The few keys read before it, while this screen is up, are
kept here and handed to the editor first.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.containers import Container, Vertical
from textual.screen import Screen
from textual.widgets import Footer, Static

from probes.link.safe_text import inert_line
from tui.widgets.chain_labels import ChainsState, chain_label
from tui.widgets.grid import grid_classes, is_compact

if TYPE_CHECKING:
    from tui.screens.main import MainScreen
    from tui.workspace import Workspace

STARTING = "● starting"


class StartScreen(Screen[None]):
    """The main screen's grid, its panes empty, until ``open_main`` has put the main screen in its
    place (the app's ``_open_main``: None when the app is quitting)."""

    def __init__(self, workspace: Workspace, open_main: Callable[[], Awaitable[MainScreen | None]]) -> None:
        super().__init__()
        self.workspace = workspace
        self.open_main = open_main
        self.keys: list[tuple[str, str | None]] = []
        """(key, character) of each key read while this screen is up, in order."""

    def compose(self) -> ComposeResult:
        compact = is_compact(self.app.size.width, self.app.size.height)
        chain = self.workspace.chain
        with Container(id="main", classes=grid_classes(compact=compact, chains_visible=not compact, view="kernels")):
            yield _pane("chains", f"chains ({len(self.workspace.chains)})", self._chains())
            with Vertical(id="editor-box"):
                yield _pane("editor", f"chain · {chain.name}", self._editor_text())
            yield _pane("ops", "op chain")
            yield _pane("kernels", "kernels")
            yield _pane("sweep", "sweep")
        yield Static(Text(STARTING, style="bold"), id="status")
        yield Footer(compact=True)

    def _chains(self) -> Text:
        """The chains as the chains pane lists them."""
        w = self.workspace
        state = ChainsState(tuple((c.name, c.text) for c in w.chains), w.current)
        return Text("\n").join(chain_label(state, i) for i in range(len(w.chains)))

    def _editor_text(self) -> Text:
        """The chain's lines, numbered as the editor numbers them."""
        lines = self.workspace.chain.text.splitlines() or [""]
        width = len(str(len(lines)))
        numbered = (f" {i:>{width}}  {inert_line(line)}" for i, line in enumerate(lines, 1))
        return Text("\n".join(numbered), no_wrap=True)

    def on_mount(self) -> None:
        self.call_after_refresh(self._after_first_frame)

    def _after_first_frame(self) -> None:
        # On the app's loop, not this screen's: the app reads no key while it builds and switches.
        self.app.call_later(self._hand_over)

    async def _hand_over(self) -> None:
        main = await self.open_main()
        if main is not None:
            main.take_keys(self.keys)

    def on_key(self, event: events.Key) -> None:
        event.stop()
        event.prevent_default()
        self.keys.append((event.key, event.character))


def _pane(pane_id: str, title: str, content: Text | str = "") -> Static:
    """A pane's place: its border and title (outside text: the title is inert and never markup)."""
    pane = Static(content, id=pane_id)
    pane.border_title = Text(inert_line(title))
    return pane
