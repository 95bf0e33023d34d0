"""Snapshots of the main screen (pytest-textual-snapshot), from replayed GPU recordings.

Deterministic: the results are recorded, the clock in the status bar is frozen, the cursor does
not blink, and the editor is uncoloured (tree-sitter may or may not be installed). Regenerate
with ``pytest tests/tui/test_tui_snapshots.py --snapshot-update`` and look at the SVGs.
"""

from __future__ import annotations

import pytest
from tui_helpers import focus_done, kernel_tables_drawn, settle, sweep_done, wait_for

from tui import workspace as ws

SIZES = [(80, 24), (160, 50)]


def ids(size: tuple[int, int]) -> str:
    return f"{size[0]}x{size[1]}"


@pytest.mark.parametrize("size", SIZES, ids=ids)
@pytest.mark.parametrize("modes", ["both", "eager", "compiled"])
def test_main_screen(snap_compare, make_app, modes: str, size: tuple[int, int]) -> None:
    app = make_app(modes=ws.toggle_modes(modes, "compiled"))

    async def run_before(pilot) -> None:
        await wait_for(pilot, lambda: focus_done(app), what="results")
        await pilot.press("escape")
        await wait_for(pilot, lambda: kernel_tables_drawn(app), what="the kernel tables")
        await settle(pilot)

    assert snap_compare(app, terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES, ids=ids)
def test_sweep_view(snap_compare, make_app, size: tuple[int, int]) -> None:
    app = make_app()

    async def run_before(pilot) -> None:
        await wait_for(pilot, lambda: focus_done(app), what="results")
        await pilot.press("escape", "s")
        await wait_for(pilot, lambda: sweep_done(app), what="sweep")
        await settle(pilot)

    assert snap_compare(app, terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES, ids=ids)
def test_error_and_stale(snap_compare, make_app, size: tuple[int, int]) -> None:
    """A broken chain: the inline error, the last good results kept and marked STALE."""
    app = make_app()

    async def run_before(pilot) -> None:
        await wait_for(pilot, lambda: focus_done(app), what="results")
        await pilot.press("end", "backspace")  # "(a + b).relu(": never closed
        await wait_for(
            pilot,
            lambda: (
                app.session.parse_error is not None
                and app.query_one("#chain-error").has_class("-shown")
                and "STALE" in str(app.query_one("#headline").render())
            ),
            what="inline error and stale mark",
        )
        await wait_for(pilot, lambda: kernel_tables_drawn(app), what="the kernel tables")
        await settle(pilot)

    assert snap_compare(app, terminal_size=size, run_before=run_before)
