"""Snapshots of the roofline view, a grad result and static vs dynamic, from real recordings (the
CPU ones under tests/tui/data carry FLOPs, passes, spread and noise). Regenerate with
``pytest tests/tui/test_features_snapshots.py --snapshot-update`` and look at the SVGs."""

from __future__ import annotations

import pytest
from test_tui_snapshots import SIZES, ids, settle
from tui_helpers import focus_done, replay_command, sweep_done, wait_for

from tui.screens.roofline import RooflineScreen

MATMUL = "x: [N, 256]\nw: [256, 256]\nF.gelu(x @ w)"


@pytest.mark.parametrize("size", SIZES, ids=ids)
def test_roofline_view(snap_compare, make_app, size: tuple[int, int]) -> None:
    """A training-style matmul + gelu with grad: forward and backward mm placed, the rest listed."""
    app = make_app(chain=MATMUL, worker_command=replay_command("cpu_matmul_grad"), focus_size=1000, grad=True)

    async def run_before(pilot) -> None:
        await wait_for(pilot, lambda: focus_done(app), what="results")
        await pilot.press("escape", "f")
        await wait_for(pilot, lambda: isinstance(app.screen, RooflineScreen), what="the roofline view")
        await pilot.press("down")
        await settle(pilot)

    assert snap_compare(app, terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES, ids=ids)
def test_grad_result(snap_compare, make_app, size: tuple[int, int]) -> None:
    """(a + b).relu() forward + backward on the CPU: passes, per-pass figures, noise, fusion."""
    app = make_app(worker_command=replay_command("cpu_grad"), focus_size=100_000, grad=True)

    async def run_before(pilot) -> None:
        await wait_for(pilot, lambda: focus_done(app), what="results")
        await pilot.press("escape")
        await settle(pilot)

    assert snap_compare(app, terminal_size=size, run_before=run_before)


def test_static_vs_dynamic_sweep(snap_compare, make_app) -> None:
    app = make_app(
        worker_command=replay_command("cpu_dynamic"), modes=("compiled", "dynamic"), sizes=[10_000, 100_000, 1_000_000]
    )

    async def run_before(pilot) -> None:
        await wait_for(pilot, lambda: focus_done(app), what="results")
        await pilot.press("escape", "s")
        await wait_for(pilot, lambda: sweep_done(app), what="the sweep")
        await settle(pilot)

    assert snap_compare(app, terminal_size=(160, 50), run_before=run_before)
