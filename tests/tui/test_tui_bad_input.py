"""The bad-input corpus (tests/data/bad_input_corpus.json) typed into the app, real CPU worker.

Each case: the plain-words message shows (inline for parse errors, in the kernel pane and status
bar for the rest), no traceback, the last good rows stay marked stale, and the next valid chain
profiles. Size-text cases go through the size dialog's own validation and are tested there.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_tui_live import headline
from tui_helpers import SEED_CHAIN, focus_done, wait_for

from probes.summary import parse_size
from tui.widgets.editor import ChainEditor, ChainErrorLine
from tui.widgets.status_bar import StatusBar

CORPUS = json.loads((Path(__file__).resolve().parents[1] / "data" / "bad_input_corpus.json").read_text())
CASES = [
    c for c in CORPUS["cases"]
    if c["stage"] in ("parse", "guard", "run") and not c.get("slow") and not c.get("needs")
    and c.get("modes", ["eager"]) == ["eager"]
]  # fmt: skip


@pytest.mark.slow
async def test_every_bad_input_is_a_plain_message_and_the_app_stays_usable(make_app) -> None:
    assert len(CASES) >= 60
    app = make_app(worker_command=None, device="cpu", modes="eager", focus_size=1000, debounce_s=0.05)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: focus_done(app) and bool(app.shown_focus.results), timeout=180, what="first rows")
        editor = app.query_one(ChainEditor)
        for case in CASES:
            expect = case["expect"]
            app.workspace.settings.focus_size = parse_size(case["sizes"][0])
            same_text = editor.text == case["chain"]
            editor.load_text(case["chain"])
            await pilot.pause()
            if same_text:  # only the size changed: run now, as the size dialog does
                app.start_focus_run(force=True)
            if case["stage"] == "parse" and not case["chain"].strip():
                # An empty editor shows its placeholder hint rather than an error line.
                assert app.parse_error is not None and expect["message_contains"] in app.parse_error.message
                shown = expect["message_contains"]
                assert "(a + b).relu()" in str(editor.placeholder)
            elif case["stage"] == "parse":
                assert app.parse_error is not None, case["name"]
                shown = str(app.query_one(ChainErrorLine).render())
            else:
                await wait_for(
                    pilot,
                    lambda: app.pending_focus is not None and app.pending_focus.done and app.active is None,
                    timeout=120, what=case["name"],
                )
                shown = headline(app) + " " + app.query_one(StatusBar).info.message
            assert expect["message_contains"] in shown, (case["name"], shown)
            assert "Traceback" not in shown, case["name"]
            # The next valid chain works, at a small size.
            app.workspace.settings.focus_size = 1000
            valid = SEED_CHAIN if case["chain"] != SEED_CHAIN else "a + b"
            editor.load_text(valid)
            await wait_for(
                pilot,
                lambda: focus_done(app) and app.shown_focus.text == valid and bool(app.shown_focus.results)
                and "STALE" not in headline(app),
                timeout=120, what=f"valid chain after {case['name']}",
            )
        assert app.is_running
