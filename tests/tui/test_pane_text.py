"""A pane's texts: a new text of as many lines is repainted without laying the screen out again
(each layout of the whole app holds up the frame of a result), and a text that takes more lines
still grows its widget, so nothing below it is covered and nothing of it is cut. The same for a
pane's border: a new title or mark repaints the border's row alone."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from rich.text import Text
from textual.app import App, ComposeResult
from textual.containers import Vertical
from textual.geometry import Region
from textual.pilot import Pilot
from textual.widgets import Static
from tui_helpers import wait_for

from tui.widgets.pane import Bordered, PaneText


def shown(widget: Static) -> str:
    """What the widget paints at its size now."""
    return "\n".join(strip.text.rstrip() for strip in widget.render_lines(Region(0, 0, *widget.size)))


class TwoTexts(App[None]):
    def compose(self) -> ComposeResult:
        with Vertical():
            yield PaneText(id="text")
            yield Static("the line below", id="below")


@contextlib.asynccontextmanager
async def showing(first: str) -> AsyncIterator[tuple[Pilot, PaneText, Static]]:
    """The app at 40x8 with ``first`` shown (and laid out) in its text: (pilot, text, the line below)."""
    app = TwoTexts()
    async with app.run_test(size=(40, 8)) as pilot:
        text = app.query_one("#text", PaneText)
        text.show_text(Text(first))
        await pilot.pause()
        yield pilot, text, app.query_one("#below", Static)


async def test_a_text_of_as_many_lines_is_repainted_without_a_layout() -> None:
    async with showing("first result") as (pilot, text, _):
        text.show_text(Text("second result"))
        assert not text._layout_required  # a repaint only
        await pilot.pause()
        assert shown(text) == "second result"


async def test_a_text_that_takes_more_lines_grows_its_widget() -> None:
    async with showing("one line") as (pilot, text, below):
        assert below.region.y == text.region.y + 1
        text.show_text(Text("a result long enough to wrap onto a second line of forty cells and then onto a third one"))
        await pilot.pause()
        assert text.size.height == 3 and below.region.y == text.region.y + 3
        assert shown(text).endswith("third one") and shown(below) == "the line below"


async def test_the_same_text_again_changes_nothing() -> None:
    async with showing("a result") as (_, text, _below):
        text._repaint_required = False
        text.show_text(Text("a result"))
        assert not text._repaint_required and not text._layout_required


class BorderedBox(Bordered, Vertical):
    pass


class BorderedPane(App[None]):
    """A pane with a border around a text, as the app's panes are."""

    CSS = "#pane { border: round white; height: 6; }"

    def compose(self) -> ComposeResult:
        with BorderedBox(id="pane"):
            yield Static("the pane's rows", id="inside")


async def test_a_border_mark_coming_and_going_repaints_its_row_only_and_reaches_the_terminal() -> None:
    """A STALE mark in a pane's border comes and goes with every new chain; Textual's own setter
    repainted the pane's whole area, its background under every child, in every frame that a new
    chain's rows or its compiled rows drew. Only the border's row is repainted, and the terminal
    is sent the new mark."""
    app = BorderedPane()
    async with app.run_test(size=(40, 8)) as pilot:
        pane = app.query_one("#pane", BorderedBox)
        pane.set_border("kernels", "")
        await pilot.pause()
        sent: list[str] = []  # what a terminal would be sent (a headless app writes nothing)
        display = app._display
        app._display = lambda screen, update: (
            sent.append(update.render_segments(app.console)),
            display(screen, update),
        )[1]
        painted: list[int] = []  # the pane's own lines (border, background) drawn again
        styles_cache = pane._styles_cache
        render_line = styles_cache.render_line
        styles_cache.render_line = lambda styles, y, *rest: (painted.append(y), render_line(styles, y, *rest))[1]
        for mark in ("STALE: chain edited", ""):
            sent.clear()
            pane.set_border(None, mark)
            await wait_for(pilot, lambda: bool(sent), what="the frame")
            bottom = pane.outer_size.height - 1
            assert painted == [bottom]
            assert ("STALE: chain edited" in "".join(sent)) == bool(mark)
            drawn = [strip.text for strip in pane.render_lines(Region(0, 0, *pane.outer_size))]
            assert [i for i, line in enumerate(drawn) if "STALE" in line] == ([bottom] if mark else [])
            painted.clear()
        sent.clear()
        pane.set_border("kernels · N=1e6")
        await wait_for(pilot, lambda: bool(sent), what="the frame")
        assert painted == [0] and "kernels · N=1e6" in "".join(sent)
        assert shown(app.query_one("#inside", Static)) == "the pane's rows"
