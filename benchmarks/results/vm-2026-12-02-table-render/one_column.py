"""DataTable of 8 Text columns against the same rows composed into one Text column (9 lines, fresh)."""
import asyncio, time, statistics
from rich.text import Text
from textual.app import App
from textual.widgets import DataTable
WIDTHS = (30, 3, 6, 5, 8, 6, 4, 10)
HEAD = "kernel n µs share bytes GB/s %pk ops".split()
def rows():
    return [[Text("triton_poi_fused_add_relu_%d" % i, style="bold"), Text("1", justify="right"), Text("4.52", justify="right"), Text("35%", justify="right"),
             Text("12.0 MB", justify="right"), Text("2,650", justify="right"), Text("55%", justify="right"), Text("add, relu")] for i in range(8)]
def joined(cells):
    line = Text(no_wrap=True, overflow="crop")
    for k, (cell, width) in enumerate(zip(cells, WIDTHS)):
        pad = width - cell.cell_len
        if k: line.append("  ")
        if cell.justify == "right": line.append(" " * pad); line.append_text(cell)
        else: line.append_text(cell); line.append(" " * pad)
    return line
class A(App):
    def compose(self):
        yield DataTable(cursor_type="row", id="many"); yield DataTable(cursor_type="row", id="one")
async def main():
    app = A()
    async with app.run_test(size=(120, 40)) as pilot:
        many, one = app.query_one("#many"), app.query_one("#one")
        m, o = [], []
        for i in range(30):
            many.clear(columns=True)
            for c, w in zip(HEAD, WIDTHS): many.add_column(c, width=w)
            for r in rows(): many.add_row(*r)
            one.clear(columns=True)
            one.add_column(joined([Text(h, justify="right" if k else "left") for k, h in enumerate(HEAD)]), width=sum(WIDTHS) + 2 * 7)
            for r in rows(): one.add_row(joined(r))
            await pilot.pause()
            for table, out in ((many, m), (one, o)):
                table._update_count += 1
                t0 = time.perf_counter()
                for y in range(9): table.render_line(y)
                out.append(1000 * (time.perf_counter() - t0))
        print(f"8 columns: {statistics.median(m):.2f} ms; one composed column: {statistics.median(o):.2f} ms")
asyncio.run(main())
