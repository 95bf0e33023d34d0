"""In turns, in one run: a new chain's result -> its frame drawn, with the tables drawn a cell per row
(as now) and a DataTable cell per column (as before). Pilot, replayed H200 results, 120x40."""
import asyncio, os, statistics, sys, tempfile, time
from pathlib import Path
ROOT = Path(__file__).resolve().parents[3]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "tui")]
os.environ.setdefault("TEXTUAL_FPS", "240")  # as the app runs (tui/__main__.py)
os.environ.setdefault("KERNEL_TUI_STATE_DIR", tempfile.mkdtemp(prefix="kt-ab-"))
from rich.text import Text
from textual.app import App
from textual.widgets import DataTable
from tui_helpers import TEST_TIMING, replay_command, settled, wait_for
from tui.app import KernelTuiApp
from tui.session import LiveSession
from tui.widgets.editor import ChainEditor
from tui.widgets.tables import RowsTable, column_widths
from tui.widgets.cells import text_key

def fill_by_column(self, columns, rows):
    labels = [c if isinstance(c, Text) else Text(c) for c in columns]
    cells = [[c if isinstance(c, Text) else Text(str(c)) for c in row[: len(labels)]] for row in rows]
    cells = [row + [Text("")] * (len(labels) - len(row)) for row in cells]
    signature = (tuple(label.plain for label in labels), tuple(tuple(map(text_key, row)) for row in cells))
    if self._signature == signature:
        return False
    self._signature = signature
    self.labels, self.cell_rows, self.widths = labels, cells, column_widths(labels, cells)
    cursor = self.cursor_row
    self.clear(columns=True)
    for label, width in zip(labels, self.widths):
        self.add_column(label, width=width)
    for row in cells:
        self.add_row(*row)
    if 0 <= cursor < self.row_count:
        self.move_cursor(row=cursor, animate=False, scroll=False)
    return True

ONE_CELL = RowsTable.fill
VARIANTS = {"a cell per row (now)": ONE_CELL, "a cell per column (before)": fill_by_column}
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
            RowsTable.fill = VARIANTS[name]
            app.session.book.cache.clear()
            variant[0] = name
            app.query_one(ChainEditor).text = CHAINS[i % 2]
            await wait_for(pilot, lambda: settled(app), 60)
            await pilot.pause(0.2)
            variant[0] = None
    for (v, m), ms in got.items():
        print(f"{v:28} {m:9} result -> frame drawn: median {statistics.median(ms):5.1f} ms (p25-p75 "
              f"{statistics.quantiles(ms, n=4)[0]:.1f}-{statistics.quantiles(ms, n=4)[2]:.1f}), n={len(ms)}")
asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 40))
