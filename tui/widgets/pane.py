"""The panes' common shape: a reactive ``state``, rendered by the pane itself at its own size."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.containers import Vertical
from textual.geometry import Region
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import Static

from tui.widgets.cells import text_key


def set_border(widget: Widget, title: str | None, subtitle: str | None = None) -> None:
    """Set ``widget``'s border title (and subtitle, unless None) where they change, repainting only
    the border's row. Textual's own setter repaints the whole widget, its background and border
    under every child: a pane that set its title on every draw made each compile-cache hit re-render
    ~70% of the screen, and with the kernel and op chain panes losing their STALE mark a compiled
    result's frame took 14.0 against 12.1 ms on the 2-core machine (vm-2026-12-02-border-row)."""
    if title is not None and getattr(widget, "_kt_border_title", None) != title:
        widget._kt_border_title = title  # type: ignore[attr-defined]
        _set_border_text(widget, "border_title", title)
    if subtitle is not None and getattr(widget, "_kt_border_subtitle", None) != subtitle:
        widget._kt_border_subtitle = subtitle  # type: ignore[attr-defined]
        _set_border_text(widget, "border_subtitle", subtitle)


def _set_border_text(widget: Widget, name: str, text: str) -> None:
    outer = widget.outer_size
    if not outer:  # not laid out yet: nothing drawn to keep
        setattr(widget, name, text)
        return
    # What Textual's setter stores (widget._border_title / _border_subtitle), without its repaint.
    setattr(widget, f"_{name}", widget.render_str(text).expand_tabs(4).split()[0])
    offset = widget.content_offset  # regions given to refresh() are relative to the content
    row = 0 if name == "border_title" else outer.height - 1  # the title tops the border
    widget.refresh(Region(-offset.x, row - offset.y, outer.width, 1))


def show_text(static: Static, content: Text | str) -> None:
    """``static.update(content)`` where the content changes (most of a pane's texts are the same
    again after a key or a result), and a layout of the screen only when the widget's size
    changes: a layout took ~10 ms of the event loop on the 2-core machine, and a new chain's rows
    changed five texts of the kernel pane, most of them to as many lines as before."""
    key = text_key(content)
    if getattr(static, "_kt_content", None) == key:
        return
    static._kt_content = key  # type: ignore[attr-defined]
    size = static.content_size
    width = static.styles.width
    if not size.width or (width is not None and width.is_auto):
        static.update(content)
        return
    static.update(content, layout=False)
    if static.get_content_height(size, size, size.width) != size.height:
        static.refresh(layout=True)


class Pane(Vertical):
    """Renders ``state`` with ``draw()`` whenever the state is assigned or the pane is resized."""

    TITLE = ""
    state: reactive[Any] = reactive(None, always_update=True, repaint=False)
    """Assigned on every key and every result; ``draw`` updates what changed inside the pane (a
    repaint of the pane itself re-rendered ~70% of the screen each time: it has only a border)."""

    def on_mount(self) -> None:
        set_border(self, self.TITLE)

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
