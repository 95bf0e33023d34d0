"""The panes' common shape: a reactive ``state``, rendered by the pane itself at its own size."""

from __future__ import annotations

from typing import Any

from textual.containers import Vertical
from textual.reactive import reactive


class Pane(Vertical):
    """Renders ``state`` with ``draw()`` whenever the state is assigned or the pane is resized."""

    TITLE = ""
    state: reactive[Any] = reactive(None, always_update=True)

    def on_mount(self) -> None:
        self.border_title = self.TITLE

    def watch_state(self) -> None:
        self._redraw()

    def on_resize(self) -> None:
        self._redraw()

    def _redraw(self) -> None:
        # Not before the pane has its size: a draw at a guessed width would be laid out twice.
        if self.state is not None and self.is_mounted and self.content_size.width:
            self.draw(self.state)

    def draw(self, state: Any) -> None:  # noqa: ANN401 (each pane has its own state type)
        raise NotImplementedError
