"""The results tables: keys applied in order, and filled in one go with column widths computed here.

DataTable measures auto-width columns later, when it is idle; a table re-filled and drawn before
that shows clipped columns. Widths given up front make every frame right, and a table whose
content did not change is left alone (no flicker, the cursor stays put).
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.cells import cell_len
from rich.text import Text
from textual.widgets import DataTable

from tui.widgets.cells import text_key
from tui.widgets.keys_in_order import KeysInOrder


class ResultsTable(KeysInOrder, DataTable):
    """A table of results (kernels, ops, sweep sizes): the single-letter keys act at once."""


def column_widths(columns: Sequence[Text | str], rows: Sequence[Sequence[Text | str]]) -> list[int]:
    """Cells each column needs: its header's or its widest cell's (cells past the last column are ignored)."""
    widths = [cell_len(c) if isinstance(c, str) else c.cell_len for c in columns]
    for row in rows:
        for i, cell in enumerate(row[: len(widths)]):
            widths[i] = max(widths[i], cell_len(cell) if isinstance(cell, str) else cell.cell_len)
    return widths


def fill_table(table: DataTable, columns: Sequence[Text | str], rows: Sequence[Sequence[Text | str]]) -> bool:
    """Replace ``table``'s columns and rows; returns False when nothing changed."""
    labels = [c if isinstance(c, Text) else Text(c) for c in columns]
    cells = [[c if isinstance(c, Text) else Text(str(c)) for c in row] for row in rows]
    signature = (tuple(label.plain for label in labels), tuple(tuple(map(text_key, row)) for row in cells))
    if getattr(table, "_kt_signature", None) == signature:
        return False
    table._kt_signature = signature  # type: ignore[attr-defined]
    cursor = table.cursor_row
    table.clear(columns=True)
    for label, width in zip(labels, column_widths(labels, cells)):
        table.add_column(label, width=width)
    for row in cells:
        padded = list(row[: len(labels)]) + [Text("")] * (len(labels) - len(row))
        table.add_row(*padded)
    if 0 <= cursor < table.row_count:
        table.move_cursor(row=cursor, animate=False, scroll=False)
    return True
