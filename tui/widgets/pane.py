"""The panes' common shape: a reactive ``state``, rendered by the pane itself at its own size."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.containers import Vertical
from textual.geometry import Region
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import Static

from probes.link import fast_paths
from tui import textual_compat
from tui.widgets.cells import text_key


class Bordered:
    """Mix into a widget, before its Textual base: ``set_border`` sets the border's title and
    subtitle where they change, and (a fast path, ``probes.link.fast_paths``) repaints only the
    border's row. Textual's own setter repaints the whole widget, its background and border under
    every child: a pane that sets its title on every draw would re-render most of the screen on
    every key and every result."""

    shown_title: str | None = None
    shown_subtitle: str | None = None

    def set_border(self, title: str | None, subtitle: str | None = None) -> None:
        """Set the title (and the subtitle, unless None) where they change."""
        assert isinstance(self, Widget)
        if title is not None and title != self.shown_title:
            self.shown_title = title
            set_border_text(self, "border_title", title)
        if subtitle is not None and subtitle != self.shown_subtitle:
            self.shown_subtitle = subtitle
            set_border_text(self, "border_subtitle", subtitle)


def set_border_text(widget: Widget, which: str, text: str) -> None:
    """Set ``widget``'s ``border_title`` or ``border_subtitle``, repainting the border's row alone
    where fast paths are on and it has been drawn (before, nothing drawn needs keeping)."""
    outer = widget.outer_size
    if not (
        outer and fast_paths.enabled("repaint_without_layout") and textual_compat.can_set_border_text_quietly(widget)
    ):
        setattr(widget, which, text)
        return
    textual_compat.set_border_text_quietly(widget, which, text)
    offset = widget.content_offset  # regions given to refresh() are relative to the content
    row = 0 if which == "border_title" else outer.height - 1  # the title tops the border
    widget.refresh(Region(-offset.x, row - offset.y, outer.width, 1))


class PaneText(Static):
    """A text of a pane, shown with ``show_text``."""

    shown: tuple[object, ...] | None = None
    """What it shows (``text_key``): most of a pane's texts are the same again after a key or a
    result, and are then left alone."""

    def show_text(self, content: Text | str) -> None:
        """``update(content)`` where the content changes; and (a fast path) a layout of the
        screen only when the widget's height changes: a new chain's rows change several texts
        of the kernel pane, most of them to as many lines as before, and each layout of the
        whole screen holds up the frame that shows them."""
        key = text_key(content)
        if key == self.shown:
            return
        self.shown = key
        size = self.content_size
        width = self.styles.width
        if not fast_paths.enabled("repaint_without_layout") or not size.width or (width is not None and width.is_auto):
            self.update(content)
            return
        self.update(content, layout=False)
        if self.get_content_height(size, size, size.width) != size.height:
            self.refresh(layout=True)


class Pane(Bordered, Vertical):
    """Renders ``state`` with ``draw()`` whenever the state is assigned or the pane is resized."""

    TITLE = ""
    state: reactive[Any] = reactive(None, always_update=True, repaint=False)
    """Assigned on every key and every result; ``draw`` updates what changed inside the pane (a
    repaint of the pane itself re-renders most of the screen: it has only a border)."""

    def on_mount(self) -> None:
        self.set_border(self.TITLE)

    def watch_state(self) -> None:
        self._redraw()

    def on_resize(self) -> None:
        self._redraw()

    def _redraw(self) -> None:
        # Not before the pane has its size: a draw at a guessed width would be laid out twice.
        if self.state is not None and self.is_mounted and self.content_size.width:
            self.draw(self.state)

    def draw(self, state: Any) -> None:
        """Render ``state`` (each pane has its own state type)."""
        raise NotImplementedError
