"""Lines of facts that break between facts, never inside one: ``compile 0.06 s`` is never split
into ``compile 0.06`` / ``s`` at the edge of a pane. The mode titles, the headline and the op
chain pane's compile line use it."""

from __future__ import annotations

from rich.cells import cell_len
from rich.text import Text

FACT_SEPARATOR = " · "
"""Between the facts of one line."""


def fact_lines(start: Text, lines: list[list[Text]], width: int) -> Text:
    """``start``, then each line's facts joined by `` · ``, broken before a fact that would not fit
    whole in ``width`` cells: ``compile 0.06 s`` is never split as ``compile 0.06`` / ``s``."""
    text = start.copy()
    column = cell_len(text.plain.rsplit("\n", 1)[-1])  # ``start`` may hold lines of its own
    for number, facts in enumerate(lines):
        if number:
            text.append("\n")
            column = 0
        for index, fact in enumerate(facts):
            if index and column + len(FACT_SEPARATOR) + fact.cell_len > width:
                text.append("\n")
                column = 0
            elif index:
                text.append(FACT_SEPARATOR)
                column += len(FACT_SEPARATOR)
            text.append_text(fact)
            column += fact.cell_len
    return text
