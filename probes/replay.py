"""A worker that answers from recorded reports instead of a GPU: ``python -m probes.replay FILE...``.

UI tests and snapshot tests run against it, so they show real results recorded on the GPU box
(``tests/data/*.json``, as printed by ``kernel-tui profile --json``) on a machine without one.
It speaks exactly the worker protocol and never imports torch.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from probes.expr import ChainError, parse_chain
from probes.protocol import (
    PROTOCOL_VERSION,
    CancelRequest,
    ChainErrorInfo,
    DeviceInfo,
    InfoRequest,
    Measurement,
    MeasurementResult,
    ProfileReport,
    ProfileRequest,
    Progress,
    ProtocolError,
    RequestDone,
    RequestFailed,
    ShutdownRequest,
    WorkerReady,
    decode,
    encode,
)


def normalize(chain: str) -> str:
    """Chains match when they differ only in whitespace."""
    return "".join(chain.split())


class Recordings:
    def __init__(self, reports: list[ProfileReport]) -> None:
        self.reports = reports
        self.by_key: dict[tuple[str, str, int, str, bool], Measurement] = {}
        for report in reports:
            for m in report.results:
                self.by_key[(normalize(m.chain), m.mode, m.size, m.dtype, m.grad)] = m

    @classmethod
    def load(cls, paths: list[Path]) -> Recordings:
        return cls([ProfileReport.from_json(path.read_text()) for path in paths])

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

    def answer(self, request: ProfileRequest, delay: float) -> list:
        events: list = []
        try:
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
                    events.append(MeasurementResult(request.id, found))
        events.append(RequestDone(request.id))
        return events


def serve(recordings: Recordings, delay: float) -> int:
    out = sys.stdout

    def send(message: object) -> None:
        out.write(encode(message) + "\n")
        out.flush()

    send(recordings.ready())
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            message = decode(line)
        except ProtocolError as exc:
            send(RequestFailed("", ChainErrorInfo("worker", f"bad request: {exc}")))
            continue
        if isinstance(message, ShutdownRequest):
            break
        if isinstance(message, CancelRequest):
            continue
        if isinstance(message, InfoRequest):
            send(recordings.ready(message.id))
            send(RequestDone(message.id))
            continue
        if isinstance(message, ProfileRequest):
            for event in recordings.answer(message, delay):
                if delay and isinstance(event, MeasurementResult):
                    time.sleep(delay)
                send(event)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m probes.replay", description=__doc__.splitlines()[0])
    parser.add_argument("reports", nargs="+", type=Path, help="JSON reports from kernel-tui profile --json")
    parser.add_argument("--delay", type=float, default=0.0, help="seconds before each result (to watch streaming)")
    args = parser.parse_args(argv)
    return serve(Recordings.load(args.reports), args.delay)


if __name__ == "__main__":
    sys.exit(main())
