"""The private Textual names the app uses (tui.textual_compat) are there, do what Textual's own code
does, and fall back on the public path where they are gone; with the fast paths off the app draws
the same screen by the plain paths."""

from __future__ import annotations

import sys
from types import SimpleNamespace

import pytest
from textual.app import App, ComposeResult
from textual.widgets import Static
from tui_helpers import focus_done, settle, wait_for

from probes.link import fast_paths
from tui import textual_compat
from tui.driver import driver_class
from tui.widgets.pane import Bordered


class Boxed(Bordered, Static):
    DEFAULT_CSS = "Boxed { border: round white; height: 5; }"


class BoxApp(App[None]):
    def compose(self) -> ComposeResult:
        yield Boxed("inside", id="quiet")
        yield Static("inside", id="public")


def test_every_private_name_is_there_in_this_textual() -> None:
    """A Textual upgrade that moved one fails here (the app would still run, by the plain path)."""
    assert textual_compat.ansi_sequence_keys() is not None
    assert textual_compat.can_set_border_text_quietly(Static())
    assert hasattr(App, "_background_screens")  # textual_compat.whole_screen's (with Screen._compositor)
    if sys.platform != "win32":
        assert textual_compat.quick_exit_driver(App()) is not None


async def test_a_border_set_quietly_reads_as_textuals_own_setter_sets_it() -> None:
    app = BoxApp()
    async with app.run_test(size=(40, 12)) as pilot:
        quiet, public = app.query_one("#quiet", Boxed), app.query_one("#public", Static)
        for title, subtitle in (("kernels · N=1e6", "STALE: edited"), ("chain · add", "")):
            quiet.set_border(title, subtitle)
            public.border_title, public.border_subtitle = title, subtitle
            await pilot.pause()
            assert (quiet.border_title, quiet.border_subtitle) == (public.border_title, public.border_subtitle)
        assert "chain&#160;·&#160;add" in app.export_screenshot()  # its row was repainted


def test_without_the_private_name_the_public_setter_is_used() -> None:
    widget = SimpleNamespace(border_title=None)
    assert not textual_compat.set_border_text_quietly(widget, "border_title", "chain")  # type: ignore[arg-type]
    assert widget.border_title == "chain"
    with pytest.raises(ValueError):
        textual_compat.set_border_text_quietly(widget, "title", "chain")  # type: ignore[arg-type]


def test_without_the_sequence_table_keys_are_read_as_textual_reads_them(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(textual_compat, "ansi_sequence_keys", lambda: None)
    assert not textual_compat.read_sequence_as_keys("\x1b\t")


def test_the_quick_exit_driver_is_a_fast_path(monkeypatch: pytest.MonkeyPatch) -> None:
    app = App()
    monkeypatch.setenv(fast_paths.ENV, "0")
    assert driver_class(app) is App.get_driver_class(app)
    monkeypatch.setenv(fast_paths.ENV, "1")
    assert driver_class(app).__name__ == ("QuickExitDriver" if sys.platform != "win32" else "WindowsDriver")


async def test_with_the_fast_paths_off_the_app_draws_the_same_screen(make_app, monkeypatch: pytest.MonkeyPatch) -> None:
    screens = []
    for switch in ("1", "0"):
        monkeypatch.setenv(fast_paths.ENV, switch)
        app = make_app()
        async with app.run_test(size=(160, 50)) as pilot:
            await wait_for(pilot, lambda app=app: focus_done(app), what="the first rows")
            await settle(pilot)
            screens.append(app.export_screenshot())
    assert screens[0] == screens[1]
