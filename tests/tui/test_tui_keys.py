"""Keys arriving in one burst (as SSH and tmux deliver them) are all applied, in order; a paste is
one edit; the cursor starts at the end of the chain."""

from __future__ import annotations

from textual import events
from tui_helpers import SEED_CHAIN, focus_done, wait_for

from tui.widgets.editor import ChainEditor
from tui.widgets.kernel_pane import KernelPane, KernelTable

CHARACTERS = {"space": " ", "backspace": None, "ctrl+e": None, "ctrl+a": None, "escape": None}


def burst(app, keys: list[str]) -> None:
    """Post every key at once, as the driver does when they arrive in one read."""
    for key in keys:
        character = CHARACTERS.get(key, key if len(key) == 1 else None)
        app.post_message(events.Key(key, character))


def typed(text: str) -> list[str]:
    return ["space" if ch == " " else ch for ch in text]


async def test_a_burst_of_edits_is_applied_in_order(make_app) -> None:
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: focus_done(app), what="results")
        editor = app.query_one(ChainEditor)
        assert editor.cursor_location == (0, len(SEED_CHAIN))  # the cursor starts at the end
        burst(app, ["ctrl+e", *["backspace"] * 6, *typed("sigmoid() * 2")])
        await wait_for(pilot, lambda: editor.text == "(a + b).sigmoid() * 2", what=f"every key (got {editor.text!r})")
        burst(app, ["ctrl+a", *typed("torch."), "ctrl+e", *typed(" + c")])
        await wait_for(pilot, lambda: editor.text == "torch.(a + b).sigmoid() * 2 + c", what="keys around moves")


async def test_keys_after_escape_in_the_same_burst_act_outside_the_editor(make_app) -> None:
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: focus_done(app), what="results")
        editor = app.query_one(ChainEditor)
        burst(app, ["escape", "s"])  # escape, then s: a sweep, not an "s" typed in the chain
        await wait_for(pilot, lambda: app.session.sweep is not None, what="the sweep")
        assert editor.text == SEED_CHAIN and isinstance(app.focused, KernelTable)
        app.screen.set_focus(editor)
        await wait_for(pilot, lambda: app.focused is editor, what="the editor")
        app.post_message(events.Key("alt+m", "m"))  # escape and m in one read reach us as alt+m
        await wait_for(pilot, lambda: app.workspace.toggle == "eager", what="the mode key")
        assert editor.text == SEED_CHAIN


async def test_a_paste_is_one_edit(make_app) -> None:
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: focus_done(app), what="results")
        edits: list[str] = []
        original = app.session.edit

        def spy(text: str, now: float, **kwargs: object):
            edits.append(text)
            return original(text, now, **kwargs)

        app.session.edit = spy
        editor = app.query_one(ChainEditor)
        editor.select_all()
        app.post_message(events.Paste("x: [N, 4]\nx.sum(dim=1)"))  # a bracketed paste, as the driver posts it
        await wait_for(pilot, lambda: editor.text == "x: [N, 4]\nx.sum(dim=1)", what="the paste")
        assert edits == ["x: [N, 4]\nx.sum(dim=1)"]


async def test_keys_after_a_key_that_moves_the_focus_go_where_the_focus_went(make_app) -> None:
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: focus_done(app), what="results")
        editor = app.query_one(ChainEditor)
        app.query_one(KernelPane).focus_table()
        await wait_for(pilot, lambda: isinstance(app.focused, KernelTable), what="the kernel table")
        burst(app, ["e", *typed(" * 2")])  # back to the editor, then text, in one read
        await wait_for(
            pilot, lambda: editor.text == SEED_CHAIN + " * 2", what=f"the text after e (got {editor.text!r})"
        )
        burst(app, ["escape", "tab", "e", *typed(" + 1")])  # through another pane and back
        await wait_for(
            pilot, lambda: editor.text == SEED_CHAIN + " * 2 + 1", what=f"the text after tab, e (got {editor.text!r})"
        )


async def test_a_burst_in_a_dialog_input_is_applied_in_order(make_app) -> None:
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: focus_done(app), what="results")
        app.query_one(KernelPane).focus_table()
        await wait_for(pilot, lambda: isinstance(app.focused, KernelTable), what="the kernel table")
        burst(app, ["n"])
        await wait_for(pilot, lambda: app.screen.id == "size-dialog" and app.focused is not None, what="the N dialog")
        burst(app, ["ctrl+u", *typed("1e4"), "enter"])  # clear, type, apply: as one read
        await wait_for(
            pilot,
            lambda: app.workspace.settings.focus_size == 10_000,
            what=f"N set to 1e4 (N is {app.workspace.settings.focus_size})",
        )
        burst(app, ["n", "ctrl+u", *typed("1e5"), "enter"])  # the dialog's key and its answer in one read
        await wait_for(
            pilot,
            lambda: app.workspace.settings.focus_size == 100_000 and app.screen.id != "size-dialog",
            what=f"N set to 1e5 (N is {app.workspace.settings.focus_size})",
        )
        assert isinstance(app.focused, KernelTable)  # the focus is back where it was


async def test_a_paste_from_a_terminal_keeps_its_line_breaks(make_app) -> None:
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: focus_done(app), what="results")
        editor = app.query_one(ChainEditor)
        editor.select_all()
        app.post_message(events.Paste("x: [N, 4]\rx.sum(dim=1)"))  # tmux and xterm send a pasted newline as CR
        await wait_for(pilot, lambda: editor.text == "x: [N, 4]\nx.sum(dim=1)", what=f"two lines (got {editor.text!r})")


async def test_escape_and_a_key_read_together_on_a_dialog_close_it_and_then_act(make_app) -> None:
    """Escape and o typed fast (or in one SSH packet) reach the app as alt+o: on the compare
    screen, that is escape (close it), then o (open it again), not a key dropped on the dialog."""
    from tui.screens.compare import CompareScreen

    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: focus_done(app), what="results")
        await pilot.press("escape", "o")
        await wait_for(pilot, lambda: isinstance(app.screen, CompareScreen), what="the compare screen")
        first = app.screen
        app.post_message(events.Key("alt+o", "o"))
        await wait_for(
            pilot,
            lambda: isinstance(app.screen, CompareScreen) and app.screen is not first,
            what="the compare screen closed and opened again",
        )
        assert len(app.screen_stack) == 2
        app.post_message(events.Key("alt+q", "q"))  # escape closes it, q quits
        await wait_for(pilot, lambda: not app.is_running, what="the app to quit")


def test_escape_and_tab_read_together_are_escape_then_tab() -> None:
    """Escape then tab typed fast (one SSH packet) must move the focus on, out of the editor:
    Textual reads ESC TAB as shift+tab, which moved it backwards. A real shift+tab (ESC [ Z) is
    still shift+tab."""
    from textual._xterm_parser import XTermParser

    from tui.driver import ESCAPE_THEN_TAB, read_escape_then_tab

    read_escape_then_tab()
    assert [event.key for event in XTermParser().feed(ESCAPE_THEN_TAB)] == ["escape", "tab"]
    assert [event.key for event in XTermParser().feed("\x1b[Z")] == ["shift+tab"]
