"""Typing into the real app in a real terminal: no key lost, whatever the arrival rate.

Each ``press``/``type``/``paste`` below is one tmux command: its keys reach the app in one burst,
as a fast SSH link delivers them. The CPU worker measures what was typed, so the rows on screen
say which chain the app really got.
"""

from __future__ import annotations

from pathlib import Path

from app_terminal import (
    REPLAY_S,
    SCREEN_S,
    STARTUP_S,
    AppTerminal,
    cpu_args,
    editor_empty,
    editor_lines,
    measured_ops,
    replay_args,
    status_text,
)


def measured(*ops: str):  # a wait_for condition
    """The worker's rows, fresh (not stale), are of a chain of exactly ``ops``."""

    def check(screen: str) -> bool:
        return measured_ops(screen) == list(ops) and "STALE" not in screen and "done" in status_text(screen)

    return check


def test_a_key_burst_with_moves_and_deletes_is_applied_in_order(tmp_path: Path) -> None:
    with AppTerminal(tmp_path, ["", *cpu_args()]) as app:
        app.wait_for(editor_empty, timeout=SCREEN_S * 3, what="the empty editor")
        app.press("(a + b).relu()", "C-e", *["BSpace"] * 6, "sigmoid() * 2")
        screen = app.wait_for(
            measured("add", "sigmoid", "mul"), timeout=STARTUP_S, what="the rows of (a + b).sigmoid() * 2"
        )
        assert editor_lines(screen) == ["(a + b).sigmoid() * 2"]


def test_at_first_start_typed_text_goes_at_the_end_of_the_chain(tmp_path: Path) -> None:
    with AppTerminal(tmp_path, replay_args()) as app:
        app.wait_for(lambda s: editor_lines(s) == ["(a + b).relu()"], timeout=REPLAY_S, what="the seed chain")
        app.type(" * 2")
        app.wait_for(
            lambda s: editor_lines(s) == ["(a + b).relu() * 2"], timeout=SCREEN_S, what="the keys after the chain"
        )


def test_a_bracketed_paste_of_a_multi_line_chain_is_one_edit(tmp_path: Path) -> None:
    chain = "x: [N, 4]\nx.sum(dim=1)"
    with AppTerminal(tmp_path, ["", *cpu_args()]) as app:
        app.wait_for(editor_empty, timeout=SCREEN_S * 3, what="the empty editor")
        app.paste(chain)
        screen = app.wait_for(measured("sum"), timeout=STARTUP_S, what="the rows of the pasted chain")
        assert editor_lines(screen) == chain.splitlines()  # as pasted: no key of it read as a command
        app.press("C-z")  # one undo takes back one edit: the whole paste
        app.wait_for(editor_empty, timeout=SCREEN_S, what="the paste undone at once")


def test_text_typed_right_after_e_reaches_the_editor(tmp_path: Path) -> None:
    with AppTerminal(tmp_path, replay_args()) as app:
        app.wait_for(lambda s: "profile done" in status_text(s), timeout=REPLAY_S, what="the replayed rows")
        app.press("Escape")
        app.wait_for_focus("kernels")
        app.press("e", " * 2")
        app.wait_for(
            lambda s: editor_lines(s) == ["(a + b).relu() * 2"], timeout=SCREEN_S, what="the keys typed after e"
        )
