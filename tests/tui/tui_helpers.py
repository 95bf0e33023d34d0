"""Helpers for the app's tests: recordings to replay, waiting for results.

Recordings are picked by name through ``recording()``: switching every test to another file is
one line in ``RECORDINGS``.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[1] / "data"
LOCAL_DATA = Path(__file__).resolve().parent / "data"

RECORDINGS = {
    # name -> file under tests/data (recorded for real on the GPU box; where and when are inside)
    "modes": "h200_add_relu_modes.json",  # (a + b).relu() at 1e6 in every mode
    "add": "h200_add.json",  # c = a + b at 8 and 1e6
    "mul_sum": "h200_mul_sum.json",  # (a * b).sum(): a reduction, two compiled kernels
    "matmul_gelu": "h200_matmul_gelu.json",  # bf16 matmul + gelu, declared inputs
    "fallback": "h200_nonzero_fallback.json",  # torch.nonzero: graph breaks
    "sweep": "h200_add_relu_sweep.json",  # (a + b).relu() over 1e2..1e8 (last: it wins overlaps)
}
DEFAULT_REPLAY = tuple(RECORDINGS)
SEED_CHAIN = "(a + b).relu()"


def recording(name: str = "sweep") -> Path:
    """The path of a recorded report (``kernel-tui profile --json``) to replay."""
    filename = RECORDINGS[name]
    for folder in (DATA, LOCAL_DATA):
        if (folder / filename).is_file():
            return folder / filename
    pytest.skip(f"recording {filename} is not in tests/data")


def replay_command(*names: str, delay: float = 0.0) -> list[str]:
    paths = [str(recording(n)) for n in (names or DEFAULT_REPLAY)]
    extra = ["--delay", str(delay)] if delay else []
    return [sys.executable, "-m", "probes.replay", *paths, *extra]


async def wait_for(pilot, predicate: Callable[[], bool], timeout: float = 20.0, what: str = "") -> None:  # noqa: ANN001
    """Let the app run until ``predicate()`` holds (results arrive asynchronously)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        if loop.time() > deadline:
            raise AssertionError(f"timed out waiting for {what or predicate}")
        await pilot.pause(0.05)
    await pilot.pause()


def focus_done(app) -> bool:  # noqa: ANN001
    rs = app.shown_focus
    return rs is not None and rs.done and app.active is None


def sweep_done(app) -> bool:  # noqa: ANN001
    rs = app.shown_sweep
    return rs is not None and rs.done and app.active is None


def recorded(name: str = "sweep"):  # noqa: ANN201
    """The recorded report itself (to compute what the screen should say)."""
    from probes.protocol import ProfileReport

    return ProfileReport.from_json(recording(name).read_text())
