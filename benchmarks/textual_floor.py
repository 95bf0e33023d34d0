"""The floor under kernel-tui's first frame: a minimal Textual app (the chain as text, a footer).

    python benchmarks/textual_floor.py "(a + b).relu()"

``tui_latency.py``'s frame round launches it beside the real app, so that the app's first frame is
read against what Textual itself takes on the same machine, in the same run.
"""

from __future__ import annotations

import sys

from textual.app import App, ComposeResult
from textual.widgets import Footer, Static


class FloorApp(App[None]):
    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text

    def compose(self) -> ComposeResult:
        yield Static(self.text)
        yield Footer()


if __name__ == "__main__":
    FloorApp(sys.argv[1] if len(sys.argv) > 1 else "(a + b).relu()").run()
