"""Reports and worker lines are read by one validated reader (``probes.link.protocol``): a hostile
report is one line and exit 2 through ``--from``, ``--baseline`` and ``--replay``, in seconds; a
hostile worker line fails its request in one line and the link goes on."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from probes.link.client import WorkerClient
from probes.link.protocol import MAX_REPORT_ROWS, REPORT_LIMIT_BYTES, ProfileRequest, RequestDone, RequestFailed

RECORDED = Path(__file__).parent / "data" / "h200_add.json"


def _changed(change: Any) -> str:
    report = json.loads(RECORDED.read_text())
    return change(report) if callable(change) else change


def _set(field: str, value: str) -> Any:
    def change(report: dict[str, Any]) -> str:
        report["results"][0][field] = "@"
        return json.dumps(report).replace('"@"', value)

    return change


def _rows(report: dict[str, Any]) -> str:
    row = {"name": "k", "short_name": "k", "kind": "kernel", "launches_per_call": 1, "device_time_us": 1}
    row |= {"time_per_call_us": 1, "share": 0, "bytes": 1, "gbps": 1, "pct_of_peak": 0}
    report["results"][0]["kernels"] = [row] * (MAX_REPORT_ROWS * 20)
    return json.dumps(report, separators=(",", ":"))


CASES = {
    "a 5,000-digit integer": (_set("reps", "9" * 5000), "an integer of 5,000 digits"),
    "size 0": (_set("size", "0"), "size 0 is not positive"),
    "a NaN time": (_set("wall_time_us", "NaN"), "NaN is not a finite number"),
    "an infinite time": (_set("device_time_us", "Infinity"), "Infinity is not a finite number"),
    "a time past the float range": (_set("device_time_us", "1e400"), "1e400 is out of range"),
    "a negative time": (_set("wall_time_us", "-3.5"), "wall_time_us: -3.5 is negative"),
    "100,000 kernel rows": (_rows, "kernel rows: over the limit of 5,000"),
    "over the byte limit": (lambda _: " " * (REPORT_LIMIT_BYTES + 1), "over the 16.0 MiB limit"),
    "nested too deep": ("[" * 100_000 + "]" * 100_000, "nested too deep"),
    "a wrong type": (_set("size", '"8"'), "size: expected int, got str"),
}
OPTIONS = {
    "--from": lambda report: ["profile", "--from", report],
    "--baseline": lambda report: ["profile", "--from", str(RECORDED), "--baseline", report],
    "--replay": lambda report: ["--replay", report],
}


@pytest.mark.parametrize("option", OPTIONS)
@pytest.mark.parametrize("case", CASES)
def test_a_hostile_report_is_one_line_and_exit_2_in_seconds(tmp_path: Path, case: str, option: str) -> None:
    change, message = CASES[case]
    report = tmp_path / "report.json"
    report.write_text(_changed(change))
    begin = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "tui", *OPTIONS[option](str(report))], capture_output=True, text=True, timeout=60
    )
    assert time.monotonic() - begin < 10
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and f"{option}: " in lines[0] and str(report) in lines[0], proc.stderr
    assert message in lines[0] and "Traceback" not in proc.stderr


FAKE_WORKER = textwrap.dedent(
    """
    import sys
    from probes.link.protocol import PROTOCOL_VERSION, RequestDone, WorkerReady, decode, encode

    def say(line):
        sys.stdout.write(line + "\\n")
        sys.stdout.flush()

    say(encode(WorkerReady(1, "fake", [], "cpu", protocol=PROTOCOL_VERSION)))
    for line in sys.stdin:
        request = decode(line)
        say('{"type": "progress", "id": "%s", "message": "x", "size": %s}' % (request.id, "9" * 5000))
        say(encode(RequestDone(request.id)))
    """
)


async def test_a_worker_line_with_a_huge_integer_fails_its_request_and_the_link_goes_on() -> None:
    client = WorkerClient([sys.executable, "-c", FAKE_WORKER])
    try:
        await asyncio.wait_for(client.start(), 30)
        for attempt in ("first", "second"):
            events = [e async for e in client.request(ProfileRequest(attempt, "a + b"))]
            [failed] = [e for e in events if isinstance(e, RequestFailed)]
            assert (
                failed.error.located()
                == "a line from the worker was refused: an integer of 5,000 digits (the most is 30)"
            )
            assert isinstance(events[-1], RequestDone) and events[-1].id == attempt
    finally:
        await client.close()
