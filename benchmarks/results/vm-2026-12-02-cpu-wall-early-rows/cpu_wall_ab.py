"""In the app (pilot, the real CPU worker at N=1e6): eager and compiled wall-time spread with early
rows (the app draws the rows while the wall-time reps run) against without, in turns."""
import asyncio, sys, os, tempfile, pathlib, statistics, time
sys.path[:0] = ["/work/main", "/work/main/tests/tui"]
os.environ["KERNEL_TUI_STATE_DIR"] = tempfile.mkdtemp()
from dataclasses import replace
from tui_helpers import TEST_TIMING, focus_done, wait_for
from tui.app import KernelTuiApp
from tui.session import LiveSession
from tui.widgets.editor import ChainEditor

OPS = ["sin", "cos", "exp", "tanh", "sigmoid", "neg", "abs", "sqrt", "log1p", "expm1", "sinh", "cosh"]
orig = LiveSession._request
arm = {"early": True}
def request(self, sizes, modes, *, early_rows=False):
    return orig(self, sizes, modes, early_rows=early_rows and arm["early"])
LiveSession._request = request

async def main():
    tmp = pathlib.Path(tempfile.mkdtemp())
    app = KernelTuiApp(chain="(a + b).relu()", worker_command=None, device="cpu", focus_size=10**6, frozen=True, highlight=True,
                       export_dir=tmp / "x", workspace_path=tmp / "w.json", timing=replace(TEST_TIMING, eager_delay_s=0.0))
    spread = {True: {"eager": [], "compiled": []}, False: {"eager": [], "compiled": []}}
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: focus_done(app), timeout=300, what="first")
        for i, op in enumerate(OPS * 2):
            arm["early"] = i % 2 == 0
            text = f"(a + b).{op}()" if i < len(OPS) else f"(a - b).{op}()"
            app.query_one(ChainEditor).load_text(text)
            await wait_for(pilot, lambda: app.session.text == text and focus_done(app), timeout=300, what=text)
            for mode in ("eager", "compiled"):
                m = app.session.focus_view(time.monotonic()).mode(mode).measurement
                half = 50 * (m.wall_time_us_iqr[1] - m.wall_time_us_iqr[0]) / m.wall_time_us
                spread[arm["early"]][mode].append(half)
            print(text, "early" if arm["early"] else "whole", [round(x, 1) for x in (spread[arm["early"]]["eager"][-1], spread[arm["early"]]["compiled"][-1])], flush=True)
    for early in (True, False):
        print("early rows" if early else "rows with their wall time", {m: f"median ±{statistics.median(v):.1f}% (max {max(v):.0f}%)" for m, v in spread[early].items()})
asyncio.run(main())
