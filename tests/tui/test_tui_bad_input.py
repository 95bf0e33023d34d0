"""The bad-input corpus (tests/data/bad_input_corpus.json) typed into the app, real CPU worker.

Each case: the plain-words message shows (inline for parse errors, in the kernel pane and status
bar for the rest), no traceback, the last good rows stay marked stale, and the next valid chain
profiles. Size-text cases go through the size dialog's own validation and are tested there.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from test_tui_live import headline
from tui_helpers import SEED_CHAIN, TEST_TIMING, focus_done, settled, wait_for

from probes.link.summary import parse_size
from tui.widgets.editor import ChainEditor, ChainErrorLine
from tui.widgets.status_bar import StatusBar

CORPUS = json.loads((Path(__file__).resolve().parents[1] / "data" / "bad_input_corpus.json").read_text())
CASES = [
    c
    for c in CORPUS["cases"]
    if c["stage"] in ("parse", "guard", "run")
    and not c.get("slow")
    and not c.get("needs")
    and c.get("modes", ["eager"]) == ["eager"]
]


@pytest.mark.slow
async def test_every_bad_input_is_a_plain_message_and_the_app_stays_usable(make_app) -> None:
    assert len(CASES) >= 60
    app = make_app(worker_command=None, device="cpu", modes=("eager",), focus_size=1000, timing=TEST_TIMING)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: focus_done(app), timeout=180, what="first rows")
        editor = app.query_one(ChainEditor)
        for case in CASES:
            expect = case["expect"]
            size = parse_size(case["sizes"][0])
            app.main.settings_changed(
                "N", dataclasses.replace(app.workspace.settings, focus_size=size)
            )  # as the dialog does
            editor.load_text(case["chain"])
            await wait_for(pilot, lambda case=case: app.session.text == case["chain"], what=case["name"])
            error = app.session.parse_error
            if case["stage"] == "parse" and not case["chain"].strip():
                # An empty editor shows its placeholder hint rather than an error line.
                assert error is not None and expect["message_contains"] in error.message
                shown = expect["message_contains"]
                assert "(a + b).relu()" in str(editor.placeholder)
            elif case["stage"] == "parse":
                assert error is not None, case["name"]
                await wait_for(pilot, lambda: app.query_one(ChainErrorLine).has_class("-shown"), what=case["name"])
                shown = str(app.query_one(ChainErrorLine).render())
            else:
                await wait_for(pilot, lambda: settled(app), timeout=120, what=case["name"])
                note = str(app.query_one("#mode-note-eager").render())
                shown = headline(app) + " " + note + " " + app.query_one(StatusBar).info.message
            assert expect["message_contains"] in shown, (case["name"], shown)
            assert "Traceback" not in shown, case["name"]
            # The next valid chain works, at a small size.
            back = dataclasses.replace(app.workspace.settings, focus_size=1000)
            valid = SEED_CHAIN if case["chain"] != SEED_CHAIN else "a + b"
            editor.load_text(valid)
            app.main.settings_changed("N", back)
            await wait_for(
                pilot,
                lambda valid=valid: app.session.text == valid and focus_done(app) and "STALE" not in headline(app),
                timeout=120,
                what=f"valid chain after {case['name']}",
            )
        assert app.is_running
