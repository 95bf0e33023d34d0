"""One meaning per key outside the editor, wherever the focus is (tui/commands.py): ``x`` stops
what runs, ``n`` sets N, ``r`` sets the reps, in the kernel table, the op chain table, the sweep
table, the chains pane and after a dialog closes; the chains pane's own keys act only there; in
the editor the same letters are text. The replay worker answers slowly enough that a sweep is
still running when ``x`` arrives."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from app_terminal import (
    REPLAY_S,
    SCREEN_S,
    AppTerminal,
    delayed_replay_args,
    editor_lines,
    pane_text,
    status_text,
    words,
)

SEED = "(a + b).relu()"


def chain_count(screen: str) -> int | None:
    found = re.search(r"╭─ chains \((\d+)\)", screen)
    return int(found.group(1)) if found else None


def asks_to_delete(screen: str) -> bool:
    return "Delete the chain" in screen


def sweeping(screen: str) -> bool:
    return "measuring" in pane_text(screen, "sweep")


def dialog_open(screen: str, title: str) -> bool:
    return re.search(rf"│\s+{re.escape(title)}\s+│", screen) is not None


def start_with_results(app: AppTerminal) -> str:
    return app.wait_for(lambda s: "profile done" in status_text(s), timeout=REPLAY_S, what="the replayed rows")


def swept(screen: str) -> bool:
    sweep = words(pane_text(screen, "sweep"))
    return "faster" in sweep and "measuring" not in sweep and "cancelled" not in sweep


def focus(app: AppTerminal, where: str) -> None:
    """Put the focus in ``where`` as a user would: escape, tab, or a dialog opened and closed."""
    app.press("Escape")
    app.wait_for_focus("kernels")
    if where == "after a dialog":
        app.press("F1")
        app.wait_for(
            lambda s: "every key" in s.lower() or "where it works" in s.lower(),
            timeout=SCREEN_S,
            what="the help screen",
        )
        app.press("Escape")
        app.wait_for(
            lambda s: "╭─ kernels" in s and app.focused_pane() is not None,
            timeout=SCREEN_S,
            what="the main screen again",
        )
        return
    if where == "sweep":
        app.press("s")
        app.wait_for(swept, timeout=REPLAY_S, what="a finished sweep (its table is focusable then)")
    app.tab_to(where)


@pytest.mark.parametrize("where", ["kernels", "op chain", "sweep", "chains", "after a dialog"])
def test_x_n_r_mean_stop_size_reps_in_every_focus(tmp_path: Path, where: str) -> None:
    with AppTerminal(tmp_path, delayed_replay_args(0.2, "--sizes", "1e2,1e3,1e5,1e6,1e7,1e8")) as app:
        start_with_results(app)
        focus(app, where)
        held = app.settled_focus()
        chains = chain_count(app.screen())
        assert chains is not None

        app.press("s")
        app.wait_for(sweeping, timeout=SCREEN_S, what="the sweep running")
        app.press("x")  # stops the sweep: never "delete this chain?"
        screen = app.wait_for(
            lambda s: "stopped" in pane_text(s, "sweep"), timeout=SCREEN_S, what="the sweep stopped by x"
        )
        assert chain_count(screen) == chains and not asks_to_delete(screen)

        app.press("n")  # sets N: never a new chain
        app.wait_for(lambda s: dialog_open(s, "Size N"), timeout=SCREEN_S, what="the N dialog")
        app.press("C-u", "1e4", "Enter")
        # after a stop nothing runs by itself: the rows say they are not of this N
        screen = app.wait_for(
            lambda s: "kernels · N=1e4" in s and "STALE" in s,
            timeout=SCREEN_S,
            what="N set to 1e4, the rows marked stale",
        )
        assert chain_count(screen) == chains

        app.press("r")  # sets the reps: never a rename
        app.wait_for(lambda s: dialog_open(s, "Reps"), timeout=SCREEN_S, what="the reps dialog")
        app.press("Escape")
        app.wait_for(lambda s: not dialog_open(s, "Reps"), timeout=SCREEN_S, what="the reps dialog closed")
        app.wait_for_focus(held)  # the focus came back where it was

        assert editor_lines(app.screen()) == [SEED]  # no key of these typed into the chain


def test_the_chains_pane_keys_act_there_and_nowhere_else(tmp_path: Path) -> None:
    with AppTerminal(tmp_path, delayed_replay_args(0.05)) as app:
        screen = start_with_results(app)
        chains = chain_count(screen)
        assert chains is not None
        app.press("Escape")
        app.wait_for_focus("kernels")
        app.press("a", "y", "Delete")  # the chains pane's keys, in the kernel table: nothing happens to chains
        app.press("F1")  # a marker: once the help is drawn, the keys before it were handled
        app.wait_for(lambda s: "where it works" in s.lower(), timeout=SCREEN_S, what="the help screen")
        app.press("Escape")
        screen = app.wait_for(lambda s: "where it works" not in s.lower(), timeout=SCREEN_S, what="the main screen")
        assert chain_count(screen) == chains and not asks_to_delete(screen)

        app.tab_to("chains")
        app.press("a")  # add: an empty chain, opened in the editor
        app.wait_for(lambda s: chain_count(s) == chains + 1, timeout=SCREEN_S, what="a chain added by a")
        app.tab_to("chains")
        app.press("Delete")  # delete asks first
        app.wait_for(asks_to_delete, timeout=SCREEN_S, what="the delete question")
        app.press("Escape")
        app.wait_for(
            lambda s: chain_count(s) == chains + 1 and not asks_to_delete(s),
            timeout=SCREEN_S,
            what="nothing deleted when the question is dismissed",
        )


def test_in_the_editor_the_letters_are_text(tmp_path: Path) -> None:
    with AppTerminal(tmp_path, delayed_replay_args(0.05, "")) as app:
        app.wait_for(lambda s: "ready" in status_text(s), timeout=REPLAY_S, what="the worker ready")
        app.press("xnrs")
        screen = app.wait_for(lambda s: editor_lines(s) == ["xnrs"], timeout=SCREEN_S, what="the letters typed")
        assert not any(dialog_open(screen, title) for title in ("Size N", "Reps"))
        assert "measuring" not in pane_text(screen, "sweep")
