"""A worker that answers from recorded reports instead of a GPU: ``python -m probes.link.replay FILE...``.

UI tests and snapshot tests run against it, so they show real results recorded on a GPU
(``tests/data/*.json``, as printed by ``kernel-tui profile --json``) on a machine without one.
It speaks exactly the worker protocol (a cancel ends the request it names at once; a warm-up has
nothing to do) and never imports torch.
"""

from __future__ import annotations

import dataclasses
import os
import queue
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from probes.chain.expr import ChainError, parse_chain
from probes.chain.matching import normalize
from probes.link.help_text import SafeParser
from probes.link.protocol import (
    PROTOCOL_VERSION,
    CancelRequest,
    ChainErrorInfo,
    DeviceInfo,
    Event,
    InfoRequest,
    Measurement,
    MeasurementResult,
    ProfileReport,
    ProfileRequest,
    Progress,
    ProtocolError,
    RequestDone,
    RequestFailed,
    WarmupRequest,
    WorkerReady,
    encode,
    incoming,
    read_report,
)


class Recordings:
    def __init__(self, reports: list[ProfileReport]) -> None:
        self.reports = reports
        self.by_key: dict[tuple[str, str, int, str, bool], Measurement] = {}
        for report in reports:
            for m in report.results:
                self.by_key[(normalize(m.chain), m.mode, m.size, m.dtype, m.grad)] = m

    @classmethod
    def load(cls, paths: list[Path]) -> Recordings:
        """The reports at ``paths``; ProtocolError, one line, for one that is not a report."""
        return cls([read_report(path)[1] for path in paths])

    def ready(self, request_id: str | None = None) -> WorkerReady:
        first = self.reports[0]
        devices = [
            DeviceInfo(
                name=first.device,
                label=first.device_label,
                total_memory=0,
                free_memory=0,
                peak_gbps=first.peak_gbps,
                compute_peaks_tflops=first.compute_peaks_tflops,
            )
        ]
        return WorkerReady(
            pid=os.getpid(),
            torch_version=first.torch,
            devices=devices,
            default_device=first.device,
            python="replay",
            id=request_id,
            protocol=PROTOCOL_VERSION,
        )

    def answer(self, request: ProfileRequest, delay: float) -> list[Event]:
        events: list[Event] = []
        try:
            if request.source is None:  # a user's file is matched by its name, as recorded
                parse_chain(request.chain)
        except ChainError as exc:
            return [RequestFailed(request.id, exc.info), RequestDone(request.id)]
        total = len(request.sizes) * len(request.modes)
        step = 0
        for size in request.sizes:
            for mode in request.modes:
                step += 1
                events.append(
                    Progress(request.id, f"replaying {mode} at N={size:,}", "replaying", mode, size, step, total)
                )
                found = self.by_key.get((normalize(request.chain), mode, size, request.dtype, request.grad))
                if found is None:
                    grad = ", forward + backward" if request.grad else ""
                    message = f"no recording of this chain in {mode} at N={size:,} ({request.dtype}{grad})"
                    events.append(RequestFailed(request.id, ChainErrorInfo("replay", message), size=size, mode=mode))
                else:
                    if request.rows_before_wall_time(found.device):  # as the worker does: the rows, then the wall time
                        events.append(
                            MeasurementResult(
                                request.id, dataclasses.replace(found, wall_time_us=None, wall_time_us_iqr=None)
                            )
                        )
                    events.append(MeasurementResult(request.id, found))
        events.append(RequestDone(request.id))
        return events


class _Requests:
    """Reads requests on a thread of its own, so that a cancel reaches a request being answered."""

    def __init__(self, send: Callable[[object], None]) -> None:
        self.send = send
        self.queue: queue.Queue[ProfileRequest | InfoRequest | WarmupRequest | None] = queue.Queue()
        self.cancelled: set[str] = set()
        self.wake = threading.Event()

    def read(self) -> None:
        for message in incoming(sys.stdin, self.send):
            if isinstance(message, CancelRequest):
                self.cancelled.add(message.id)
                self.wake.set()
            elif isinstance(message, (ProfileRequest, InfoRequest, WarmupRequest)):
                self.queue.put(message)
        self.queue.put(None)

    def wait(self, request_id: str, seconds: float) -> bool:
        """Sleep up to ``seconds``; False as soon as ``request_id`` is cancelled."""
        deadline = time.monotonic() + seconds
        while request_id not in self.cancelled:
            left = deadline - time.monotonic()
            if left <= 0:
                return True
            self.wake.wait(left)
            self.wake.clear()
        return False


def _wait_for_file(requests: _Requests, request_id: str, path: Path, seconds: float = 120.0) -> bool:
    """Wait until ``path`` exists (a test's go-ahead), at most ``seconds``; False once cancelled."""
    deadline = time.monotonic() + seconds
    while not path.exists() and time.monotonic() < deadline:
        if not requests.wait(request_id, 0.02):
            return False
    return True


def _gates(events: Sequence[object], hold_wall_time: Path | None, hold_compiled: Path | None) -> dict[int, Path]:
    """The results of one request that wait for a file, by ``id``: with ``hold_wall_time`` its last
    result (the wall time that follows its rows), with ``hold_compiled`` its first compiled one."""
    results = [e for e in events if isinstance(e, MeasurementResult)]
    gates: dict[int, Path] = {}
    if hold_wall_time is not None and len(results) > 1:
        gates[id(results[-1])] = hold_wall_time
    compiled = next((r for r in results if r.measurement.mode == "compiled"), None)
    if hold_compiled is not None and compiled is not None:
        gates[id(compiled)] = hold_compiled
    return gates


def serve(
    recordings: Recordings, delay: float, hold_wall_time: Path | None = None, hold_compiled: Path | None = None
) -> int:
    """Answer requests from ``recordings``; with ``hold_wall_time``, a request's last result (the
    wall time that follows its rows) waits until that file exists, and with ``hold_compiled`` its
    first compiled result, so a test can look at the state before it for as long as it needs on
    however loaded a machine."""
    out = sys.stdout
    lock = threading.Lock()

    def send(message: object) -> None:
        with lock:
            out.write(encode(message) + "\n")
            out.flush()

    requests = _Requests(send)
    send(recordings.ready())
    threading.Thread(target=requests.read, name="reader", daemon=True).start()
    while (message := requests.queue.get()) is not None:
        if isinstance(message, InfoRequest):
            send(recordings.ready(message.id))
            send(RequestDone(message.id))
        elif isinstance(message, WarmupRequest) or message.id in requests.cancelled:
            send(RequestDone(message.id, cancelled=message.id in requests.cancelled))
        else:
            events = recordings.answer(message, delay)
            gates = _gates(events, hold_wall_time, hold_compiled)
            for event in events:
                if isinstance(event, MeasurementResult):
                    gate = gates.get(id(event))
                    go_on = requests.wait(message.id, delay) and (
                        gate is None or _wait_for_file(requests, message.id, gate)
                    )
                    if not go_on:
                        send(RequestDone(message.id, cancelled=True))
                        break
                send(event)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = SafeParser(prog="python -m probes.link.replay", description=__doc__.splitlines()[0])
    parser.add_argument("reports", nargs="+", type=Path, help="JSON reports from kernel-tui profile --json")
    parser.add_argument("--delay", type=float, default=0.0, help="seconds before each result (to watch streaming)")
    parser.add_argument(
        "--hold-wall-time",
        type=Path,
        default=None,
        metavar="FILE",
        help="send each request's last result only once FILE exists",
    )
    parser.add_argument(
        "--hold-compiled",
        type=Path,
        default=None,
        metavar="FILE",
        help="send each request's first compiled result only once FILE exists",
    )
    args = parser.parse_args(argv)
    try:
        recordings = Recordings.load(args.reports)
    except ProtocolError as exc:
        parser.error(str(exc))
    return serve(recordings, args.delay, args.hold_wall_time, args.hold_compiled)


if __name__ == "__main__":
    sys.exit(main())
