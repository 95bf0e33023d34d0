"""A results table's lines rendered two ways: DataTable (fresh caches) against Text -> Strip per row
(the line API), same 8 rows x 8 Text cells, same widths."""
import asyncio, time, statistics
from rich.text import Text
from rich.segment import Segment
from textual.app import App
from textual.strip import Strip
from textual.widgets import DataTable
WIDTHS = (30, 3, 6, 5, 8, 6, 4, 10)
HEAD = "kernel n µs share bytes GB/s %pk ops".split()
def rows():
    return [[Text("triton_poi_fused_add_relu_%d" % i), Text("1", justify="right"), Text("4.52", justify="right"), Text("35%", justify="right"),
             Text("12.0 MB", justify="right"), Text("2,650", justify="right"), Text("55%", justify="right"), Text("add, relu")] for i in range(8)]
def strip_of(cells, console):
    line = Text()
    for cell, width in zip(cells, WIDTHS):
        c = cell.copy(); c.truncate(width, overflow="ellipsis", pad=True)
        if cell.justify == "right":
            c = Text(" " * (width - cell.cell_len)) + cell if cell.cell_len < width else c
        line.append(" "); line.append_text(c); line.append(" ")
    return Strip(line.render(console))
class A(App):
    def compose(self):
        yield DataTable(cursor_type="row")
async def main():
    app = A()
    async with app.run_test(size=(120, 40)) as pilot:
        table = app.query_one(DataTable)
        dt, la = [], []
        for i in range(30):
            table.clear(columns=True)
            for c, w in zip(HEAD, WIDTHS):
                table.add_column(c, width=w)
            for r in rows():
                table.add_row(*r)
            await pilot.pause()
            table._update_count += 1
            t0 = time.perf_counter()
            for y in range(9):
                table.render_line(y)
            dt.append(1000 * (time.perf_counter() - t0))
            t0 = time.perf_counter()
            strips = [strip_of([Text(h) for h in HEAD], app.console)] + [strip_of(r, app.console) for r in rows()]
            la.append(1000 * (time.perf_counter() - t0))
        print(f"DataTable 9 lines: {statistics.median(dt):.2f} ms; Text->Strip per row: {statistics.median(la):.2f} ms")
asyncio.run(main())
