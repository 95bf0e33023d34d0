"""The app's grad, roofline and static-vs-dynamic views with the real worker on CUDA (the GPU box).

Run there with: ``python -m pytest -q -p no:cacheprovider -m gpu tests/tui/test_features_gpu.py``.
"""

from __future__ import annotations

import pytest
from tui_helpers import focus_done, shown, sweep_done, wait_for

from tui.screens.roofline import RooflineScreen

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")]

TRAIN = "x: [N, 4096] bf16\nw: [4096, 4096] bf16\nF.gelu(x @ w)"
TIMEOUT = 300.0


def headline(app) -> str:
    return str(app.query_one("#headline").render())


async def test_training_step_passes_and_roofline_on_cuda(make_app) -> None:
    app = make_app(chain=TRAIN, worker_command=None, device="cuda", focus_size=4096)
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_for(pilot, lambda: focus_done(app), timeout=TIMEOUT, what="forward results")
        await pilot.press("escape", "b")
        await wait_for(pilot, lambda: focus_done(app), timeout=TIMEOUT, what="forward + backward")
        eager, compiled = shown(app, "eager"), shown(app, "compiled")
        assert eager.grad and compiled.grad and compiled.ran_compiled
        assert {r.pass_ for r in compiled.kernels} == {"forward", "backward"}
        assert "forward " in headline(app) and "backward " in headline(app)
        mm = [r for r in eager.kernels if r.flops == 2 * 4096 * 4096 * 4096]
        assert mm and eager.compute_peak_tflops  # [N, K] @ [K, M] counts 2*N*K*M, against a measured peak
        assert "backward" in str(app.query_one("#compile-info").render())
        await pilot.press("f")
        await wait_for(pilot, lambda: isinstance(app.screen, RooflineScreen), what="the roofline view")
        placed = [e for e in app.screen.entries if e.placed]
        assert {e.mode for e in placed} >= {"eager"} and any(e.row.pass_ == "backward" for e in placed)
        out_of_bounds = [
            (e.mode, e.row.pass_, e.row.short_name, e.tflops)
            for e in placed
            if not 0 < e.tflops <= 2 * eager.compute_peak_tflops
        ]
        assert not out_of_bounds, (out_of_bounds, eager.compute_peak_tflops)


async def test_static_and_dynamic_sweep_on_cuda(make_app) -> None:
    sizes = [10**6, 10**7, 10**8]
    app = make_app(worker_command=None, device="cuda", modes=("compiled", "dynamic"), sizes=sizes)
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_for(pilot, lambda: focus_done(app), timeout=TIMEOUT, what="static and dynamic results")
        assert shown(app, "dynamic").ran_compiled and "dynamic vs compiled: device " in headline(app)
        await pilot.press("escape", "s")
        await wait_for(pilot, lambda: sweep_done(app), timeout=TIMEOUT, what="the sweep")
        line = str(app.query_one("#crossover").render())
        assert line.startswith("N = 1e8: dynamic vs compiled")
        results = app.session.sweep.measurements()
        assert len(results) == 2 * len(sizes) and all(m.ran_compiled for m in results)
