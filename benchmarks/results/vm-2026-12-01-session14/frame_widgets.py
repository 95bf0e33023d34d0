"""Per widget class: time in render_lines per chain swap (no profiler), and frame times."""
import asyncio, sys, time, collections
sys.path.insert(0, "tests/tui")
from pathlib import Path
import tempfile
from tui_helpers import replay_command, TEST_TIMING
from tui.app import KernelTuiApp
from textual.widgets import TextArea
from textual.widget import Widget
from textual.screen import Screen

CHAINS = ["(a + b).relu()", "c = a + b", "(a * b).sum()"]
spent = collections.Counter(); calls = collections.Counter()
orig_rl = Widget.render_lines
def rl(self, crop):
    b = time.perf_counter(); r = orig_rl(self, crop); spent[type(self).__name__ + ("#" + self.id if self.id else "")] += time.perf_counter() - b; calls[type(self).__name__ + ("#" + self.id if self.id else "")] += 1; return r
Widget.render_lines = rl
frames = []
orig_layout = Screen._refresh_layout
def lay(self, *a, **k):
    b = time.perf_counter(); r = orig_layout(self, *a, **k); frames.append((time.perf_counter() - b, k.get("size"), a)); return r
Screen._refresh_layout = lay

async def main():
    tmp = Path(tempfile.mkdtemp())
    app = KernelTuiApp(chain=CHAINS[0], worker_command=replay_command(), frozen=True, highlight=False,
                       export_dir=tmp / "x", workspace_path=tmp / "w.json", timing=TEST_TIMING)
    async with app.run_test(size=(int(sys.argv[1]), int(sys.argv[2]))) as pilot:
        editor = app.query_one(TextArea)
        async def show(text):
            editor.text = text
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline:
                await pilot.pause(0.01)
                if all(app.session.cached(text, m) is not None for m in app.session.modes()):
                    break
            await pilot.pause(0.1)
        for t in CHAINS:
            await show(t)
        spent.clear(); calls.clear(); frames.clear()
        n = 30
        for i in range(n):
            await show(CHAINS[i % 3])
        ft = sorted(f[0] for f in frames)
        print(f"frames {len(frames)} per swap {len(frames)/n:.1f}; median {1000*ft[len(ft)//2]:.1f} p90 {1000*ft[int(.9*len(ft))]:.1f} max {1000*ft[-1]:.1f}; per swap {1000*sum(ft)/n:.1f} ms")
        print("first frames:", [round(1000*f[0],1) for f in frames[:12]])
        for name, s in spent.most_common(25):
            print(f"{1000*s/n:7.2f} ms/swap {calls[name]/n:6.1f} calls/swap  {name}")

asyncio.run(main())
