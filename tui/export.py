"""Exports of the current results: JSON, CSV and a Chrome/Perfetto trace. No torch, no textual.

Exports go to ``kernel-tui --export-dir DIR``, else to ``tui.export_dir.default_export_dir()``.

- JSON is a ``ProfileReport`` (the format ``kernel-tui profile --json`` prints and
  ``python -m probes.link.replay`` serves), so an export can be replayed.
- CSV has one row per kernel (and memcpy/memset) row of every measurement, with the
  measurement's mode, size, host and device (which box and device measured it) and totals
  repeated on each row. A text cell that a spreadsheet would
  read as a formula (a chain ``-a + b``, a kernel name from a hostile report) is written with a
  leading single quote, as OWASP's CSV-injection guidance recommends; numbers stay numbers.
- The Chrome trace (open it in https://ui.perfetto.dev or chrome://tracing) is *rebuilt* from
  the aggregated kernel rows, not recorded: for each measurement (one process per mode x size)
  it lays out one call, each kernel launch as one event of its median device time, end to end
  in the order the profiler listed the kernels; memcpy/memset rows go on a second track. Gaps
  between launches (host overhead) are not shown: the wall time per call is in the process
  name, and the device that measured it in its label (``b:cuda:0``) and the trace's metadata.
  Fractional launches per call are rounded up.
"""

from __future__ import annotations

import csv
import datetime
import io
import json
import math
import re
from collections.abc import Iterable
from pathlib import Path

from probes.link.protocol import MAX_NAME_CHARS, DeviceIdentity, KernelRow, Measurement, ProfileReport, RequestFailed
from probes.link.state_files import write_private_file
from probes.link.summary import format_size, format_time_us, mode_label

CSV_COLUMNS = (
    "chain",
    "mode",
    "ran_compiled",
    "size",
    "host",
    "device",
    "dtype",
    "kernel",
    "short_name",
    "kind",
    "launches_per_call",
    "device_time_us",
    "time_per_call_us",
    "share",
    "bytes",
    "gbps",
    "pct_of_peak",
    "ops",
    "kernels_per_call",
    "call_device_time_us",
    "call_wall_time_us",
    "compile_time_s",
    "grid",
    "block",
    "registers_per_thread",
    "shared_memory_bytes",
    "occupancy",
    "num_warps",
    "num_stages",
    "block_sizes",
    "spills",
    "peak_memory_bytes",
    "forward_peak_memory_bytes",
    "backward_peak_memory_bytes",
)


def report(
    results: Iterable[Measurement],
    *,
    device: str,
    device_label: str,
    torch_version: str,
    peak_gbps: float | None = None,
    failures: Iterable[RequestFailed] = (),
    date: str | None = None,
    host: str | None = None,
    driver: str | None = None,
) -> ProfileReport:
    """The results as a report, naming the device that measured them (``ProfileReport.devices``):
    ``host`` is the ``--host`` box of the worker (None: this machine's), ``driver`` a CUDA
    device's driver version where the worker stated it."""
    identity = DeviceIdentity(
        host=host,
        device=device,
        label=device_label[:MAX_NAME_CHARS],
        torch=torch_version[:MAX_NAME_CHARS],
        driver=driver,
    )
    return ProfileReport(
        device=device,
        device_label=device_label,
        torch=torch_version,
        date=date or datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        results=list(results),
        failures=list(failures),
        host=host or "",
        peak_gbps=peak_gbps,
        devices=[identity],
    )


def to_json(rep: ProfileReport) -> str:
    return rep.to_json()


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
"""What a spreadsheet takes a cell's text to start a formula with (OWASP: CSV injection)."""


def spreadsheet_cell(value: object) -> object:
    """``value`` as a CSV cell no spreadsheet runs: text that starts like a formula gets a leading
    single quote (shown, never evaluated); numbers, booleans and None are left as they are."""
    return f"'{value}" if isinstance(value, str) and value.startswith(FORMULA_STARTS) else value


class _SpreadsheetWriter:
    """A csv writer whose every text cell goes through ``spreadsheet_cell`` and is quoted (OWASP's
    advice too; a carriage return inside a cell then cannot end its row)."""

    def __init__(self, out: io.StringIO) -> None:
        self._writer = csv.writer(out, lineterminator="\n", quoting=csv.QUOTE_NONNUMERIC)

    def writerow(self, row: Iterable[object]) -> None:
        self._writer.writerow([spreadsheet_cell(value) for value in row])


def dims_text(dims: list[int] | None) -> str:
    """``[2, 66, 1]`` as ``2x66x1`` (empty where unknown)."""
    return "x".join(str(d) for d in dims) if dims else ""


def launch_cells(row: KernelRow | None) -> list[object]:
    """The launch columns of one row (grid ... spills), empty where unknown (a CPU kernel)."""
    info = row.launch if row is not None else None
    if info is None:
        return ["", "", "", "", "", "", "", "", ""]
    return [
        dims_text(info.grid),
        dims_text(info.block),
        info.registers_per_thread,
        info.shared_memory_bytes,
        info.occupancy,
        info.num_warps,
        info.num_stages,
        " ".join(f"{k}={v}" for k, v in info.block_sizes.items()),
        info.spills,
    ]


def memory_cells(m: Measurement) -> list[object]:
    return [m.peak_memory_bytes, m.forward_peak_memory_bytes, m.backward_peak_memory_bytes]


def to_csv(results: Iterable[Measurement]) -> str:
    out = io.StringIO()
    writer = _SpreadsheetWriter(out)
    writer.writerow(CSV_COLUMNS)
    for m in results:
        rows = m.kernels + m.transfers
        for row in rows:
            writer.writerow(
                [
                    m.chain,
                    m.mode,
                    m.ran_compiled,
                    m.size,
                    m.host or "",
                    m.device,
                    m.dtype,
                    row.name,
                    row.short_name,
                    row.kind,
                    row.launches_per_call,
                    row.device_time_us,
                    row.time_per_call_us,
                    row.share,
                    row.bytes,
                    row.gbps,
                    row.pct_of_peak,
                    " ".join(row.ops),
                    m.kernels_per_call,
                    m.device_time_us,
                    m.wall_time_us,
                    m.compile_time_s,
                    *launch_cells(row),
                    *memory_cells(m),
                ]
            )
        if not rows:
            writer.writerow(
                [
                    m.chain,
                    m.mode,
                    m.ran_compiled,
                    m.size,
                    m.host or "",
                    m.device,
                    m.dtype,
                    "",
                    "",
                    "",
                    0,
                    "",
                    "",
                    "",
                    "",
                    "",
                    "",
                    "",
                    m.kernels_per_call,
                    m.device_time_us,
                    m.wall_time_us,
                    m.compile_time_s,
                    *launch_cells(None),
                    *memory_cells(m),
                ]
            )
    return out.getvalue()


def launch_args(row: KernelRow) -> dict[str, object]:
    """A GPU kernel's launch, as a trace viewer shows an event's arguments (nothing where unknown)."""
    info = row.launch
    if info is None:
        return {}
    found = {
        "grid": info.grid,
        "block": info.block,
        "registers per thread": info.registers_per_thread,
        "shared memory": info.shared_memory_bytes,
        "theoretical occupancy %": round(100 * info.occupancy, 1) if info.occupancy is not None else None,
        "num_warps": info.num_warps,
        "num_stages": info.num_stages,
        "spills": info.spills,
    }
    return {key: value for key, value in found.items() if value is not None}


def chrome_trace(results: Iterable[Measurement]) -> dict[str, object]:
    """A Chrome trace-event document rebuilt from the kernel rows (see the module doc)."""
    events: list[dict[str, object]] = []
    measured_on: dict[str, dict[str, str | None]] = {}
    for pid, m in enumerate(results, start=1):
        name = f"{mode_label(m)} N={format_size(m.size)}"
        measured_on.setdefault(m.measured_on, {"host": m.host, "device": m.device})
        events.append(
            {
                "ph": "M",
                "name": "process_name",
                "pid": pid,
                "tid": 0,
                "args": {"name": f"{name} (wall {format_time_us(m.wall_time_us)} per call)"},
            }
        )
        events.append({"ph": "M", "name": "process_labels", "pid": pid, "tid": 0, "args": {"labels": m.measured_on}})
        events.append({"ph": "M", "name": "process_sort_index", "pid": pid, "tid": 0, "args": {"sort_index": pid}})
        events.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": 1, "args": {"name": "kernels"}})
        if m.transfers:
            events.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": 2, "args": {"name": "memcpy/memset"}})
        for tid, rows in ((1, m.kernels), (2, m.transfers)):
            ts = 0.0
            for row in rows:
                launches = max(1, math.ceil(row.launches_per_call - 1e-9)) if row.launches_per_call > 0 else 0
                for i in range(launches):
                    events.append(
                        {
                            "ph": "X",
                            "name": row.short_name or row.name[:60],
                            "cat": row.kind,
                            "pid": pid,
                            "tid": tid,
                            "ts": round(ts, 3),
                            "dur": round(max(row.device_time_us, 0.001), 3),
                            "args": {
                                "full name": row.name,
                                "launch": i + 1,
                                "ops": row.ops,
                                "bytes per call": row.bytes,
                                "GB/s": row.gbps,
                                "% of peak": row.pct_of_peak,
                                **launch_args(row),
                            },
                        }
                    )
                    ts += max(row.device_time_us, 0.001)
    return {
        "traceEvents": events,
        "displayTimeUnit": "ns",
        "otherData": {
            "source": "kernel-tui: rebuilt from median kernel times, one call per measurement",
            "devices": list(measured_on.values()),
        },
    }


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-")[:40] or "chain"


def export_path(directory: Path, name: str, suffix: str, stamp: str | None = None) -> Path:
    stamp = stamp or datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    return directory / f"kernel-tui_{slug(name)}_{stamp}{suffix}"


def write(path: Path, text: str) -> Path:
    write_private_file(path, text)
    return path


def write_trace(path: Path, results: Iterable[Measurement]) -> Path:
    return write(path, json.dumps(chrome_trace(results), indent=1))
