"""The results tables: keys applied in order, and filled in one go with column widths computed here.

DataTable measures auto-width columns later, when it is idle; a table re-filled and drawn before
that shows clipped columns. Widths given up front make every frame right, and a table whose
content did not change is left alone (no flicker, the cursor stays put).

Each row is drawn as one cell that holds the whole line, its columns laid out here as DataTable
lays out its own (each column its width and a cell of padding on either side). DataTable sends
every cell through Rich's renderer, which costs several times more for a table of many cells than
for one cell a line, and a new chain's results draw two or three tables at once. The cells stay
readable by column.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.cells import cell_len
from rich.text import Text
from textual.geometry import Size
from textual.widgets import DataTable

from tui.widgets.cells import CELL_PADDING, text_key
from tui.widgets.keys_in_order import KeysInOrder


class RowsTable(DataTable[Text]):
    """A DataTable of text rows, filled in one go by ``fill``, each row drawn as one cell."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.labels: list[Text] = []
        self.cell_rows: list[list[Text]] = []
        self.widths: list[int] = []
        self._signature: tuple[object, ...] = ()

    def get_content_width(self, container: Size, viewport: Size) -> int:
        """The rows' width as ``fill`` computed it. DataTable sets its own measure only when idle,
        and an auto-width table laid out before that is drawn zero cells wide until the next
        layout, which may never come."""
        if not self.widths:
            return super().get_content_width(container, viewport)
        return line_width(self.widths) + 2 * self.cell_padding

    def row_cells(self, index: int) -> list[Text]:
        """The cells of row ``index``, one per column."""
        return self.cell_rows[index]

    def fill(self, columns: Sequence[Text | str], rows: Sequence[Sequence[Text | str]]) -> bool:
        """Replace the columns and rows; returns False when nothing changed."""
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
        self.add_column(joined_line(labels, self.widths), width=line_width(self.widths))
        for row in cells:
            self.add_row(joined_line(row, self.widths))
        if 0 <= cursor < self.row_count:
            self.move_cursor(row=cursor, animate=False, scroll=False)
        return True


class ResultsTable(KeysInOrder, RowsTable):
    """A table of results (kernels, ops, sweep sizes): the single-letter keys act at once."""


def column_widths(columns: Sequence[Text | str], rows: Sequence[Sequence[Text | str]]) -> list[int]:
    """Cells each column needs: its header's or its widest cell's (cells past the last column are ignored)."""
    widths = [cell_len(c) if isinstance(c, str) else c.cell_len for c in columns]
    for row in rows:
        for i, cell in enumerate(row[: len(widths)]):
            widths[i] = max(widths[i], cell_len(cell) if isinstance(cell, str) else cell.cell_len)
    return widths


def line_width(widths: Sequence[int]) -> int:
    """Cells of a line of columns this wide, without the padding outside the first and last."""
    return sum(widths) + CELL_PADDING * max(0, len(widths) - 1)


def joined_line(cells: Sequence[Text], widths: Sequence[int]) -> Text:
    """The cells as one line, each in its column's width as Rich justifies it there, the columns
    ``CELL_PADDING`` apart (DataTable pads the row's one cell on either side)."""
    line = Text(no_wrap=True, overflow="crop", end="")
    for i, (cell, width) in enumerate(zip(cells, widths, strict=False)):
        if i:
            line.append(" " * CELL_PADDING)
        if cell.justify in ("left", "right", "center"):  # Rich pads these itself, in the cell's style
            placed = cell.copy()
            if cell.justify != "left":
                placed.rstrip()
            room = max(0, width - placed.cell_len)
            before = {"left": 0, "right": room, "center": room // 2}[cell.justify]
            placed.pad_left(before)
            placed.pad_right(room - before)
            line.append_text(placed)
        else:  # the rest of the column is the table's padding
            line.append_text(cell)
            line.append(" " * max(0, width - cell.cell_len))
    return line
