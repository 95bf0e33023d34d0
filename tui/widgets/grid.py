"""The main grid's shape for the terminal's size: wide (>= 120x34), every pane at once; compact,
the editor and one pane below it (the chains pane only when asked for). Light (no panes), so that
the start screen lays its first frame out as the workbench will (``tui.app.tcss`` styles both by
these classes)."""

from __future__ import annotations

COMPACT_WIDTH = 120
COMPACT_HEIGHT = 34
VIEWS = ("kernels", "ops", "sweep")


def is_compact(width: int, height: int) -> bool:
    return width < COMPACT_WIDTH or height < COMPACT_HEIGHT


def grid_classes(*, compact: bool, chains_visible: bool, view: str) -> str:
    """The grid container's classes: whether the chains pane shows, the pane under the editor on
    a compact screen, and compactness."""
    classes = ["-show-chains" if chains_visible else "-hide-chains", f"-view-{view}"]
    if compact:
        classes.append("-compact")
    return " ".join(classes)
