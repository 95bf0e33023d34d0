"""Reading ``ncu --csv --page raw --metrics gpu__time_duration.sum`` output (run.py, truth.py)."""

from __future__ import annotations

import csv
import io


def parse_ncu_csv(text: str) -> list[tuple[str, float]]:
    """(kernel name, duration in µs) per profiled launch from ``ncu --csv --page raw``."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith('"ID"') and "Kernel Name" in line), None)
    if start is None:
        return []
    body = [line for line in lines[start:] if line.startswith('"')]
    rows = list(csv.reader(io.StringIO("\n".join(body))))
    header = rows[0]
    name_col, time_col = header.index("Kernel Name"), header.index("gpu__time_duration.sum")
    scale = {"nsecond": 1e-3, "ns": 1e-3, "usecond": 1.0, "us": 1.0, "msecond": 1e3, "ms": 1e3}
    unit = 1e-3  # --print-units base: nanoseconds
    found = []
    for row in rows[1:]:
        if len(row) <= time_col:
            continue
        if not row[0].strip():  # the units row
            unit = scale.get(row[time_col].strip(), unit)
            continue
        try:
            found.append((row[name_col], float(row[time_col].replace(",", "")) * unit))
        except ValueError:
            continue
    return found
