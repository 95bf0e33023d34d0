"""On a 16-colour terminal (``TERM=xterm``, no ``COLORTERM``) every text the app shows reads at
4.5:1 or more on its background in xterm's palette, on the real rendered screens; ``NO_COLOR``
turns every colour grey."""

from __future__ import annotations

import io

import pytest
from rich.color import ColorType
from rich.console import Console
from tui_helpers import focus_done, replay_command, settle, wait_for

from tui import textual_compat
from tui.screens.kernel_detail import KernelDetail
from tui.screens.roofline import RooflineScreen
from tui.sixteen_colours import MIN_CONTRAST, XTERM_COLOURS, contrast
from tui.widgets.kernel_pane import KernelPane

MATMUL = "x: [N, 256]\nw: [256, 256]\nF.gelu(x @ w)"
GREYS = {0, 7, 8, 15}


def shown_pairs(app) -> dict[tuple[int, int], str]:
    """(text, background) ANSI numbers of every non-blank run of text on screen, with an example."""
    console = Console(width=app.size.width, height=app.size.height, file=io.StringIO(), force_terminal=True)
    pairs: dict[tuple[int, int], str] = {}
    for segment in console.render(textual_compat.whole_screen(app)):
        style = segment.style
        if segment.control or style is None or not segment.text.strip():
            continue
        for color in (style.color, style.bgcolor):  # the terminal's own palette colours, nothing Rich downgrades
            assert color is not None and color.type == ColorType.STANDARD, (segment.text, style)
        assert not style.dim and not style.reverse, (segment.text, style)
        pairs.setdefault((style.color.number, style.bgcolor.number), segment.text)
    return pairs


async def every_screen(pilot, app) -> list[dict[tuple[int, int], str]]:
    """The main screen (kernel table focused, its cursor row), help, the palette, a kernel detail."""
    found = []
    await wait_for(pilot, lambda: focus_done(app), what="results")
    await pilot.press("escape")
    app.query_one(KernelPane).focus_table()
    await pilot.pause()
    found.append(shown_pairs(app))
    main = app.screen
    await pilot.press("f1")
    await wait_for(pilot, lambda: app.screen is not main, what="the help screen")
    await settle(pilot)
    found.append(shown_pairs(app))
    help_screen = app.screen
    await pilot.press("escape", "ctrl+p")
    await wait_for(pilot, lambda: app.screen not in (main, help_screen), what="the palette")
    await settle(pilot)
    found.append(shown_pairs(app))
    await pilot.press("escape")
    await wait_for(pilot, lambda: app.screen is main, what="the main screen again")
    app.query_one(KernelPane).focus_table()
    await pilot.press("enter")
    await wait_for(pilot, lambda: isinstance(app.screen, KernelDetail), what="the kernel detail")
    found.append(shown_pairs(app))
    return found


@pytest.fixture
def sixteen_colours(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TERM", "xterm")
    monkeypatch.delenv("COLORTERM", raising=False)


@pytest.mark.parametrize("size", [(120, 40), (80, 24)], ids=["120x40", "80x24"])
async def test_every_text_reads_at_4_5_to_1_on_a_16_colour_terminal(make_app, sixteen_colours, size) -> None:
    app = make_app()
    async with app.run_test(size=size) as pilot:
        assert app.console.color_system == "standard"
        for pairs in await every_screen(pilot, app):
            assert pairs
            for (fg, bg), text in pairs.items():
                assert contrast(XTERM_COLOURS[fg], XTERM_COLOURS[bg]) >= MIN_CONTRAST, (fg, bg, text)


async def test_the_roofline_reads_at_4_5_to_1_on_a_16_colour_terminal(make_app, sixteen_colours) -> None:
    app = make_app(chain=MATMUL, worker_command=replay_command("cpu_matmul_grad"), focus_size=1000, grad=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: focus_done(app), what="results")
        await pilot.press("escape", "f")
        await wait_for(pilot, lambda: isinstance(app.screen, RooflineScreen), what="the roofline view")
        await pilot.pause()
        for (fg, bg), text in shown_pairs(app).items():
            assert contrast(XTERM_COLOURS[fg], XTERM_COLOURS[bg]) >= MIN_CONTRAST, (fg, bg, text)


async def test_no_color_is_honoured_on_a_16_colour_terminal(make_app, sixteen_colours, monkeypatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: focus_done(app), what="results")
        pairs = shown_pairs(app)
        assert pairs and all({fg, bg} <= GREYS for fg, bg in pairs), pairs
        assert all(contrast(XTERM_COLOURS[fg], XTERM_COLOURS[bg]) >= MIN_CONTRAST for fg, bg in pairs)


def test_the_main_screen_in_16_colours(snap_compare, make_app, sixteen_colours) -> None:
    app = make_app()

    async def run_before(pilot) -> None:
        await wait_for(pilot, lambda: focus_done(app), what="results")
        await pilot.press("escape")
        app.query_one(KernelPane).focus_table()
        await pilot.pause()

    assert snap_compare(app, terminal_size=(120, 40), run_before=run_before)
