"""Pilot tests of the worker link and of sweeps cut short, against the replay worker: the status
bar says what the link is doing, why it is down (once) and what to do; a sweep that did not
finish says which sizes are missing and draws no verdict from the rest."""

from __future__ import annotations

import html
import re
import sys
from pathlib import Path

import pytest
from tui_helpers import focus_done, recording, replay_command, sweep_done, wait_for

from tui.widgets.status_bar import StatusBar

REFUSED = "ssh: connect to host x port 22: Connection refused"


def crossover_line(app) -> str:
    return str(app.query_one("#crossover").render())


def chart_text(app) -> str:
    return str(app.query_one("#sweep-chart").render())


def screen_text(app) -> str:
    """The text on screen (the screenshot's, without its markup)."""
    parts = re.findall(r"<text[^>]*>(.*?)</text>", app.export_screenshot())
    return "".join(html.unescape(part) for part in parts).replace("\xa0", " ")


async def sweeping(pilot, app, rows: int) -> None:
    """Start a sweep (from outside the editor) and wait for ``rows`` of its rows."""
    await wait_for(pilot, lambda: focus_done(app), what="first results")
    await pilot.press("escape", "s")
    await wait_for(
        pilot, lambda: app.session.sweep is not None and len(app.session.sweep.results) >= rows, what="sweep rows"
    )


async def test_a_sweep_stopped_with_ctrl_c_says_what_is_missing_and_gives_no_verdict(make_app) -> None:
    app = make_app(worker_command=replay_command(delay=0.3))
    async with app.run_test(size=(160, 50)) as pilot:
        await sweeping(pilot, app, 2)
        await pilot.press("ctrl+c")
        await wait_for(pilot, lambda: sweep_done(app), what="the sweep's end")
        await wait_for(pilot, lambda: "incomplete" in crossover_line(app), what="the sweep said incomplete")
        line = crossover_line(app)
        assert "of 5 sizes" in line and "missing (stopped" in line and "1e8" in line
        assert "per call" not in line and "crossover" not in chart_text(app)


async def test_a_sweep_whose_worker_died_says_what_is_missing_once_and_gives_no_verdict(make_app) -> None:
    app = make_app(worker_command=replay_command(delay=0.3))
    async with app.run_test(size=(160, 50)) as pilot:
        await sweeping(pilot, app, 2)
        await app.bridge.workers.primary.kill_worker()
        await wait_for(pilot, lambda: sweep_done(app), what="the sweep's end")
        await wait_for(pilot, lambda: "incomplete" in crossover_line(app), what="the sweep said incomplete")
        line = crossover_line(app)
        assert "of 5 sizes" in line and "1e8" in line and "missing" in line
        assert "per call" not in line and "crossover" not in chart_text(app)
        assert "killed by signal 9" in line  # said in the sweep pane, and nowhere else
        await wait_for(pilot, lambda: app.main.link.state.phase == "ready", what="a new worker")
        assert "killed by signal 9" not in str(app.query_one("#headline").render())
        assert "killed by signal 9" not in str(app.query_one(StatusBar).render())


@pytest.mark.slow
async def test_a_link_that_refuses_says_why_once_counts_down_and_comes_back_by_itself(make_app, tmp_path: Path) -> None:
    """The link refuses twice (as ssh does, exit 255), then lets the replay worker through: the
    status bar says the current attempt's reason once, keeps the settings, and the rows come
    without a key pressed."""
    tries = tmp_path / "tries"
    script = (
        "import pathlib, runpy, sys\n"
        f"tries = pathlib.Path({str(tries)!r})\n"
        "count = len(tries.read_text()) if tries.exists() else 0\n"
        "tries.write_text('x' * (count + 1))\n"
        f"if count < 2:\n    print({REFUSED!r}, file=sys.stderr); sys.exit(255)\n"
        f"sys.argv = ['replay', {str(recording())!r}]\n"
        "runpy.run_module('probes.link.replay', run_name='__main__')\n"
    )
    app = make_app(worker_command=[sys.executable, "-c", script])
    async with app.run_test(size=(120, 40)) as pilot:
        bar = app.query_one(StatusBar)
        await wait_for(pilot, lambda: "start 2 failed" in bar.info.worker_why, timeout=30, what="two failed starts")
        rendered = str(bar.render()).splitlines()
        assert len(rendered) == 2 and "retry in" in rendered[0] and "ctrl+r" in rendered[0]
        assert "N=1e6" in rendered[0]  # the settings keep their place
        assert rendered[1] == f" ✗ start 2 failed: the connection failed (ssh exit 255): {REFUSED}"
        assert screen_text(app).count("Connection refused") == 1
        await wait_for(pilot, lambda: focus_done(app), timeout=30, what="the rows, once the link is back")
        assert bar.info.worker_state == "ready" and bar.info.worker_why == ""
        assert "the worker is back" in [text for text, _ in app.main.status.said]
