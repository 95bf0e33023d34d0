"""A replay worker with two devices (``cuda:0`` and ``cpu``), for the device toggle's tests.

It answers from the same recordings as ``probes.link.replay`` and labels each measurement with the
device it was asked for: ``python tests/tui/two_devices.py REPORT...``.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

from probes.link.protocol import DeviceInfo, MeasurementResult, ProfileRequest, RequestDone, decode, encode
from probes.link.replay import Recordings


def main() -> int:
    recordings = Recordings.load([Path(p) for p in sys.argv[1:]])
    ready = recordings.ready()
    ready.devices.append(DeviceInfo("cpu", "CPU (replayed)", 0, 0, None))

    def send(message: object) -> None:
        sys.stdout.write(encode(message) + "\n")
        sys.stdout.flush()

    send(ready)
    for line in sys.stdin:
        message = decode(line)
        if isinstance(message, ProfileRequest):
            for event in recordings.answer(dataclasses.replace(message, device=None), 0.0):
                if isinstance(event, MeasurementResult) and message.device:
                    event = MeasurementResult(event.id, dataclasses.replace(event.measurement, device=message.device))
                send(event)
        elif getattr(message, "id", None) and message.type not in ("cancel",):
            send(RequestDone(message.id))
        elif message.type == "shutdown":
            break
    return 0


if __name__ == "__main__":
    sys.exit(main())
