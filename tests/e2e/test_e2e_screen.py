"""What the screen shows follows what changed: a setting change re-measures (the rows say STALE
until then), the layout follows the terminal's size at once, and no word of a message or a kernel
name is cut at a pane's edge, at 80x24 or at 200x60."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from app_terminal import (
    RECORDING,
    REPLAY_S,
    SCREEN_S,
    STARTUP_S,
    AppTerminal,
    cpu_args,
    delayed_replay_args,
    editor_lines,
    pane,
    pane_text,
    replay_args,
    status_text,
    words,
)

from probes.chain.expr import ChainError, parse_chain

SEED = "(a + b).relu()"


def done(screen: str) -> bool:
    return "profile done" in status_text(screen)


def kernels_title(screen: str) -> str:
    found = re.search(r"╭─ (kernels · [^─]*)", screen)
    return found.group(1).strip() if found else ""


def change_reps(app: AppTerminal, reps: str) -> None:
    app.press("r")
    app.wait_for("Timing reps", timeout=SCREEN_S, what="the reps dialog")
    app.press("C-u", reps, "Enter")


def test_a_reps_change_marks_the_rows_stale_until_they_are_measured_again(tmp_path: Path) -> None:
    with AppTerminal(tmp_path, delayed_replay_args(0.5)) as app:
        app.wait_for(done, timeout=REPLAY_S, what="the first rows")
        app.press("Escape")
        change_reps(app, "50")
        app.wait_for(lambda s: "STALE: reps changed" in s, timeout=SCREEN_S, what="the rows marked stale")
        screen = app.wait_for(lambda s: "STALE" not in s and done(s), timeout=REPLAY_S, what="the rows measured again")
        assert "reps 50" in status_text(screen)


def test_a_dtype_change_measures_again_in_the_new_dtype(tmp_path: Path) -> None:
    with AppTerminal(tmp_path, cpu_args()) as app:
        screen = app.wait_for(done, timeout=STARTUP_S, what="the first rows")
        assert "· fp32 ·" in kernels_title(screen)
        app.press("Escape")
        app.press("t")  # fp32 -> bf16
        screen = app.wait_for(
            lambda s: "· bf16 ·" in kernels_title(s) and "STALE" not in s and done(s),
            timeout=STARTUP_S,
            what="the rows measured in bf16",
        )
        assert "bf16" in status_text(screen)


WIDE_PANES = ("chains", "chain", "op chain", "kernels", "sweep")


def panes_shown(screen: str) -> set[str]:
    return {title for title in WIDE_PANES if re.search(rf"╭─ {re.escape(title)}(?=[ ─])", screen)}


def laid_out_for(screen: str, width: int) -> bool:
    """The app has drawn its panes for ``width`` columns: the rightmost pane closes at the last one
    (tmux cuts a wider, older frame at the edge, so that alone says nothing)."""
    tops = [line for line in screen.splitlines() if line.startswith("╭")]
    return bool(tops) and all(line.rstrip().endswith("╮") and len(line.rstrip()) == width for line in tops)


def test_the_layout_follows_a_resize_both_ways(tmp_path: Path) -> None:
    with AppTerminal(tmp_path, replay_args(), width=80, height=24) as app:
        screen = app.wait_for(done, timeout=REPLAY_S, what="the first rows")
        assert panes_shown(screen) == {"chain", "kernels"}  # narrow: one results view at a time
        app.resize(220, 60)
        app.wait_for(
            lambda s: panes_shown(s) == set(WIDE_PANES) and laid_out_for(s, 220),
            timeout=SCREEN_S,
            what="every pane at 220x60, without ctrl+r",
        )
        app.resize(80, 24)
        screen = app.wait_for(
            lambda s: panes_shown(s) == {"chain", "kernels"} and laid_out_for(s, 80),
            timeout=SCREEN_S,
            what="the narrow layout again",
        )
        assert editor_lines(screen) == [SEED]


# -- cut words -----------------------------------------------------------------------------------
#
# The check: (1) every kernel name of the recording appears in the kernel pane whole, or, where
# the pane has no room for it, elided in the middle with its distinctive tail kept (``…<add>``,
# ``…_add_relu_0``), never cut at the pane's edge; at 200 columns they all appear whole. (2) each
# message (the headline, the noise note, a chain's error) reads at 200 columns on one line that
# ends before the pane's edge, and at 80 columns the same words, in order, wrapped at spaces.

TAILS = {
    "vectorized_elementwise_kernel<add>": "<add>",
    "vectorized_elementwise_kernel<clamp_scalar>": "<clamp_scalar>",
    "triton_poi_fused_add_relu_0": "add_relu_0",
}


def recorded_kernels(size: int) -> set[str]:
    report = json.loads(RECORDING.read_text())
    return {k["short_name"] for r in report["results"] if r["size"] == size for k in r["kernels"]}


def shown_whole_or_tail_kept(name: str, text: str) -> bool:
    if name in text:
        return True
    for found in re.finditer(r"(\S+)…(\S+)", text):
        head, tail = found.groups()
        if name.startswith(head) and name.endswith(tail) and tail.endswith(TAILS[name]):
            return True
    return False


ERROR = re.compile(r"✗ line \d+, col \d+: .+?(?=\s{2,}|[│╰╭]|$)")


def chain_error(chain: str) -> str:
    """The error the app shows under the editor for ``chain`` (the same parser says it)."""
    try:
        parse_chain(chain)
    except ChainError as exc:
        return f"✗ {exc.info.located()}"
    raise AssertionError(f"{chain!r} parses")


def facts_in_order(text: str) -> str:
    """``text``'s words in order, a line break (wrapped text) and the `` · `` between two facts
    (dropped where a line breaks between them) alike read as one space."""
    return words(text).replace(" · ", " ")


def message_lines(screen: str) -> list[str]:
    """The kernel pane's headline and note, and a chain's error line: each on one line of a wide screen."""
    kernels = [line.strip() for line in pane(screen, "kernels")[:2]]
    return [line for line in kernels if line] + [found.group(0) for found in ERROR.finditer(screen)]


@pytest.mark.parametrize("chain", [SEED, SEED + " + q.sum("], ids=["rows", "an error"])
def test_no_word_is_cut_at_80x24_or_at_200x60(tmp_path: Path, chain: str) -> None:
    names = recorded_kernels(1_000_000)
    assert names <= set(TAILS)

    def rows_drawn(screen: str) -> bool:
        """Done, laid out at 200 columns, and the kernel tables painted (a loaded machine can take
        a picture between the pane's titles and its tables' first paint)."""
        kernels = pane_text(screen, "kernels")
        return done(screen) and laid_out_for(screen, 200) and all(name in kernels for name in names)

    with AppTerminal(tmp_path, replay_args(), width=200, height=60) as app:
        app.wait_for(rows_drawn, timeout=REPLAY_S, what="the first rows")
        if chain != SEED:
            app.type(chain.removeprefix(SEED))
            error = chain_error(chain)  # not an error of the chain half typed, which may show first
            app.wait_for(
                lambda s: error in [found.group(0) for found in ERROR.finditer(s)],
                timeout=SCREEN_S,
                what=f"the chain's error: {error}",
            )
        wide = app.wait_for(rows_drawn, timeout=SCREEN_S, what="the kernel rows beside the error")
        messages = message_lines(wide)
        assert len(messages) == (2 if chain == SEED else 3), messages
        for line in wide.splitlines():  # on the wide screen every message ends before its pane's edge
            for message in messages:
                if message in line:
                    rest = line[line.index(message) + len(message) :]
                    assert rest.startswith("  ") or rest.strip() == "", line

        app.resize(80, 24)

        def nothing_cut(narrow: str) -> bool:
            if not laid_out_for(narrow, 80):
                return False
            kernels = pane_text(narrow, "kernels")
            outside = "\n".join(line for line in narrow.splitlines() if not line.startswith(("│", "╭", "╰")))
            flowing = facts_in_order(f"{kernels} {outside}")
            return all(shown_whole_or_tail_kept(name, kernels) for name in names) and all(
                facts_in_order(message) in flowing for message in messages
            )

        # the first frames after a resize may still hold the old layout: the one that settles counts
        app.wait_for(nothing_cut, timeout=SCREEN_S, what=f"{sorted(names)} and {messages} whole at 80x24")
