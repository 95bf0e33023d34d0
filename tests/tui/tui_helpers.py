"""Helpers for the app's tests: recordings to replay, waiting for results.

Recordings are picked by name through ``recording()``: switching every test to another file is
one line in ``RECORDINGS``.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tui.session import Timing

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
    # recorded on the CPU machine with `python -m tui profile ... --json` (tests/tui/data)
    "cpu_grad": "cpu_add_relu_grad.json",  # (a + b).relu() with grad at 1e5, eager + compiled
    "cpu_matmul": "cpu_matmul_gelu.json",  # F.gelu(x @ w) at 1e3: eager, compiled, dynamic; FLOPs
    "cpu_matmul_grad": "cpu_matmul_gelu_grad.json",  # the same with grad, eager + compiled
    "cpu_dynamic": "cpu_add_relu_dynamic.json",  # (a + b).relu() at 1e4..1e6, compiled + dynamic
    "cpu_long": "cpu_long_chain.json",  # LONG_CHAIN at 1e4: 12 eager kernels (a table that scrolls)
    "cpu_source": "cpu_bias_gelu_source.json",  # mlp_block.py:bias_gelu at 1e6 (the demo's own-code step)
}
DEFAULT_REPLAY = (*(name for name, filename in RECORDINGS.items() if filename.startswith("h200_")), "cpu_source")
"""The GPU recordings (the other CPU ones overlap them: a replay serves one result per chain x
size), and the demo's function of a file, which only the CPU recording has."""
SEED_CHAIN = "(a + b).relu()"
LONG_CHAIN = "a.sin().cos().exp().tanh().sigmoid().abs().neg().sqrt().log1p().expm1().relu().square()"
TEST_TIMING = Timing(eager_delay_s=0.03, compile_delay_s=0.2, stale_grace_s=0.0)
"""Compiled rows follow an edit quickly; stale rows are marked at once (tests check the marks)."""


def recording(name: str = "sweep") -> Path:
    """The path of a recorded report (``kernel-tui profile --json``) to replay."""
    filename = RECORDINGS[name]
    for folder in (DATA, LOCAL_DATA):
        if (folder / filename).is_file():
            return folder / filename
    pytest.skip(f"recording {filename} is not in tests/data")


def replay_command(
    *names: str, delay: float = 0.0, hold_wall_time: Path | None = None, hold_compiled: Path | None = None
) -> list[str]:
    """The replay worker over the named recordings; ``hold_wall_time``: each request's last result
    (the wall time that follows its rows) waits until that file exists; ``hold_compiled``: each
    request's first compiled result does."""
    paths = [str(recording(n)) for n in (names or DEFAULT_REPLAY)]
    extra = ["--delay", str(delay)] if delay else []
    if hold_wall_time is not None:
        extra += ["--hold-wall-time", str(hold_wall_time)]
    if hold_compiled is not None:
        extra += ["--hold-compiled", str(hold_compiled)]
    return [sys.executable, "-m", "probes.link.replay", *paths, *extra]


async def wait_for(pilot, predicate: Callable[[], bool], timeout: float = 20.0, what: str = "") -> None:
    """Let the app run until ``predicate()`` holds (results arrive asynchronously)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        if loop.time() > deadline:
            raise AssertionError(f"timed out waiting for {what or predicate}")
        await pilot.pause(0.05)
    await pilot.pause()


async def settle(pilot, timeout: float = 10.0) -> None:
    """Wait until the screen stops changing (two pictures in a row the same): the last re-layout
    and re-render after the final event have landed."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    await pilot.pause()
    last = pilot.app.export_screenshot()
    while loop.time() < deadline:
        await pilot.pause(0.05)
        now = pilot.app.export_screenshot()
        if now == last:
            return
        last = now
    raise AssertionError("the screen kept changing")


def focus_view(app):
    return app.session.focus_view(time.monotonic())


def focus_done(app) -> bool:
    """Every selected mode has fresh rows for the text and settings now, and nothing runs."""
    view = focus_view(app)
    return not app.session.running() and all(v.fresh for v in view.modes)


def kernel_tables_drawn(app) -> bool:
    """Every kernel table on screen holds its rows and has been laid out (a loaded machine can
    take a picture between the rows arriving and the table's first layout)."""
    from tui.widgets.kernel_pane import KernelTable

    shown = [t for t in app.query(KernelTable) if t.display and t.parent is not None and t.parent.display]
    return bool(shown) and all(t.row_count > 0 and t.size.height > 0 for t in shown)


def settled(app) -> bool:
    """Nothing runs and nothing is due: every mode has fresh rows or a failure."""
    view = focus_view(app)
    return not app.session.running() and all(v.fresh or v.failure is not None for v in view.modes)


def sweep_done(app) -> bool:
    sweep = app.session.sweep
    return sweep is not None and sweep.run.done and not app.session.running()


def shown(app, mode: str):
    """The measurement the kernel pane shows for ``mode``."""
    view = focus_view(app).mode(mode)
    return view.measurement if view else None


def recorded(name: str = "sweep"):
    """The recorded report itself (to compute what the screen should say)."""
    from probes.link.protocol import ProfileReport

    return ProfileReport.from_json(recording(name).read_text())
