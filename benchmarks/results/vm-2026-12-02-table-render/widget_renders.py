"""Per widget: render_lines time in the frames of a compiled result (pilot, replay, 120x40)."""
import asyncio, os, sys, tempfile, time, collections
from pathlib import Path
ROOT = Path(__file__).resolve().parents[3]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "tui")]
os.environ.setdefault("KERNEL_TUI_STATE_DIR", tempfile.mkdtemp(prefix="kt-prof-"))
from textual.app import App
from textual.widget import Widget
from textual.screen import Screen
from tui_helpers import TEST_TIMING, replay_command, settled, wait_for
from tui.app import KernelTuiApp
from tui.session import LiveSession
from tui.widgets.editor import ChainEditor
MODE = sys.argv[1] if len(sys.argv) > 1 else "compiled"
CHAINS = ("(a * b).sum()", "(a + b).relu()")
st = {"on": 0, "armed": False}
acc = collections.defaultdict(lambda: [0, 0.0, 0])
orig_event = LiveSession.on_event
def on_event(self, event, now):
    m = getattr(event, "measurement", None)
    if m is not None and m.mode == MODE and st["armed"]:
        st.update(on=1, armed=False)
    return orig_event(self, event, now)
LiveSession.on_event = on_event
orig_display = App._display
def _display(self, *a, **k):
    r = orig_display(self, *a, **k)
    if st["on"]:
        st["on"] += 1
        if st["on"] > 2: st["on"] = 0
    return r
App._display = _display
orig_rl = Widget.render_lines
def render_lines(self, crop):
    t = time.perf_counter(); r = orig_rl(self, crop)
    if st["on"]:
        a = acc[f"{type(self).__name__}#{self.id}"]; a[0] += 1; a[1] += time.perf_counter() - t; a[2] += crop.height
    return r
Widget.render_lines = render_lines
for name in ("_refresh_layout",):
    pass
async def main(edits):
    app = KernelTuiApp(chain=CHAINS[1], worker_command=replay_command("modes", "mul_sum", delay=0.05),
                       workspace_path=Path(tempfile.mktemp(suffix=".json")), timing=TEST_TIMING)
    async with app.run_test(size=(int(os.environ.get("W", 120)), int(os.environ.get("H", 40)))) as pilot:
        await wait_for(pilot, lambda: settled(app), 60)
        for i in range(edits):
            app.session.book.cache.clear()
            st["armed"] = True
            app.query_one(ChainEditor).text = CHAINS[i % 2]
            await wait_for(pilot, lambda: settled(app), 60)
            await pilot.pause(0.2)
    tot = sum(v[1] for v in acc.values())
    print(f"total render_lines {1000*tot/edits:.1f} ms per edit (2 frames after the {MODE} result)")
    for k, v in sorted(acc.items(), key=lambda kv: -kv[1][1])[:25]:
        print(f"{k:40} calls/edit {v[0]/edits:4.1f} lines/edit {v[2]/edits:5.1f} ms/edit {1000*v[1]/edits:6.2f}")
asyncio.run(main(12))
