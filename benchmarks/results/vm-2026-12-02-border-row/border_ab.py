"""In turns, in one run: a new chain's result -> its frame drawn, with a pane's border marks repainting their row
only (as now) or the whole pane (as before). Pilot, replayed H200 results, 120x40."""
import asyncio, os, statistics, sys, tempfile, time
from pathlib import Path
ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "tui")]
os.environ.setdefault("TEXTUAL_FPS", "240")  # as the app runs (tui/__main__.py)
os.environ.setdefault("KERNEL_TUI_STATE_DIR", tempfile.mkdtemp(prefix="kt-ab-"))
from textual.app import App
from tui_helpers import TEST_TIMING, replay_command, settled, wait_for
from tui.app import KernelTuiApp
from tui.session import LiveSession
from tui.widgets.editor import ChainEditor

import tui.widgets.pane as pane_module
import tui.widgets.kernel_pane, tui.widgets.op_chain_pane, tui.widgets.sweep_pane, tui.widgets.chains_pane, tui.widgets.editor

def set_border_whole(widget, title, subtitle=None):
    """Before: Textual's own setters, which repaint the whole widget."""
    if title is not None and getattr(widget, "_kt_border_title", None) != title:
        widget._kt_border_title = title
        widget.border_title = title
    if subtitle is not None and getattr(widget, "_kt_border_subtitle", None) != subtitle:
        widget._kt_border_subtitle = subtitle
        widget.border_subtitle = subtitle

VARIANTS = {"border row only (now)": pane_module.set_border, "whole pane (before)": set_border_whole}
MODULES = [pane_module, tui.widgets.kernel_pane, tui.widgets.op_chain_pane, tui.widgets.sweep_pane, tui.widgets.chains_pane, tui.widgets.editor]
CHAINS = ("(a * b).sum()", "(a + b).relu()")
st = {"t0": None, "mode": None}
got = {(v, m): [] for v in VARIANTS for m in ("eager", "compiled")}
variant = [None]
orig_event = LiveSession.on_event
def on_event(self, event, now):
    m = getattr(event, "measurement", None)
    if m is not None and m.wall_time_us is None and st["t0"] is None and variant[0]:
        st.update(t0=time.perf_counter(), mode=m.mode)
    return orig_event(self, event, now)
LiveSession.on_event = on_event
orig_display = App._display
def _display(self, *a, **k):
    r = orig_display(self, *a, **k)
    if st["t0"] is not None:
        got[(variant[0], st["mode"])].append(1000 * (time.perf_counter() - st["t0"])); st["t0"] = None
    return r
App._display = _display

async def main(edits):
    app = KernelTuiApp(chain=CHAINS[1], worker_command=replay_command("modes", "mul_sum", delay=0.15),
                       workspace_path=Path(tempfile.mktemp(suffix=".json")), timing=TEST_TIMING)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: settled(app), 60)
        for i in range(edits):
            name = list(VARIANTS)[(i // 2) % 2]
            for module in MODULES:
                module.set_border = VARIANTS[name]
            app.session.book.cache.clear()
            variant[0] = name
            app.query_one(ChainEditor).text = CHAINS[i % 2]
            await wait_for(pilot, lambda: settled(app), 60)
            await pilot.pause(0.2)
            variant[0] = None
    for (v, m), ms in got.items():
        print(f"{v:24} {m:9} result -> frame drawn: median {statistics.median(ms):5.1f} ms (p25-p75 "
              f"{statistics.quantiles(ms, n=4)[0]:.1f}-{statistics.quantiles(ms, n=4)[2]:.1f}), n={len(ms)}")
asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 40))
