"""The probe process: JSON lines on stdin/stdout, one request at a time.

``python -m probes.worker`` imports torch, announces itself with ``WorkerReady`` and then serves
``ProfileRequest``s in order. A reader thread keeps listening while a request runs, so a
``CancelRequest`` takes effect at the next safe point (between sizes and modes). Anything a
library prints goes to stderr: stdout carries protocol lines only.

Exit codes (``probes.protocol``): 0 on shutdown or end of input; ``EXIT_DEVICE_POISONED`` after a
CUDA error that leaves the context unusable (the client restarts the worker).
"""

from __future__ import annotations

import argparse
import gc
import os
import queue
import signal
import sys
import threading
import time
import warnings
from typing import IO

from probes.protocol import (
    EXIT_DEVICE_POISONED,
    PROTOCOL_VERSION,
    CancelRequest,
    ChainErrorInfo,
    Event,
    InfoRequest,
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

TEST_FAULT_ENV = "KERNEL_TUI_TEST_FAULT"
"""Test-only fault injection, ``KIND:MARKER_FILE`` with KIND one of crash, hang, exit-in-compile.

The fault fires once (when the marker file does not exist yet, which it then creates), so the
restarted worker behaves. It lives in the worker's environment, never in the chain language.
"""


def _inject_test_fault(stage: str) -> None:
    spec = os.environ.get(TEST_FAULT_ENV, "")
    kind, _, marker = spec.partition(":")
    if kind != stage or not marker or os.path.exists(marker):
        return
    open(marker, "w").close()
    if kind == "crash":
        os.kill(os.getpid(), signal.SIGKILL)
    elif kind == "hang":
        time.sleep(3600)
    elif kind == "exit-in-compile":
        os._exit(1)


class Worker:
    def __init__(self, out: IO[str]) -> None:
        self._out = out
        self._lock = threading.Lock()
        self._requests: queue.Queue[ProfileRequest | InfoRequest | None] = queue.Queue()
        self._cancelled: set[str] = set()

    def emit(self, event: Event) -> None:
        if isinstance(event, Progress) and event.stage == "compiling":
            _inject_test_fault("exit-in-compile")
        line = encode(event)
        with self._lock:
            self._out.write(line + "\n")
            self._out.flush()

    def read_requests(self, stream: IO[str]) -> None:
        """Reader thread: queue work, apply cancels at once, stop on shutdown or EOF."""
        for line in stream:
            if not line.strip():
                continue
            try:
                message = decode(line)
            except ProtocolError as exc:
                self.emit(RequestFailed("", ChainErrorInfo("worker", f"bad request: {exc}")))
                continue
            if isinstance(message, CancelRequest):
                self._cancelled.add(message.id)
            elif isinstance(message, ShutdownRequest):
                break
            elif isinstance(message, (ProfileRequest, InfoRequest)):
                self._requests.put(message)
        self._requests.put(None)

    def ready(self, request_id: str | None = None) -> WorkerReady:
        import platform

        import torch

        from probes.sweep import default_device, list_devices

        return WorkerReady(
            pid=os.getpid(),
            torch_version=torch.__version__,
            devices=list_devices(measure_peak=request_id is not None),
            default_device=default_device(),
            python=platform.python_version(),
            id=request_id,
            protocol=PROTOCOL_VERSION,
        )

    def serve(self) -> int:
        from probes.measure import DevicePoisoned
        from probes.sweep import run_profile

        while True:
            request = self._requests.get()
            if request is None:
                return 0
            if isinstance(request, InfoRequest):
                self.emit(self.ready(request.id))
                self.emit(RequestDone(request.id))
                continue
            if request.id in self._cancelled:
                self.emit(RequestDone(request.id, cancelled=True))
                continue
            _inject_test_fault("crash")
            _inject_test_fault("hang")
            try:
                run_profile(request, self.emit, lambda rid=request.id: rid in self._cancelled)
            except DevicePoisoned as exc:
                # No RequestDone: the client sees this process end while the request is still
                # open, so it restarts the worker before the next request is sent.
                self.emit(RequestFailed(request.id, exc.info))
                return EXIT_DEVICE_POISONED
            except Exception as exc:  # noqa: BLE001 - a bug in the engine must not kill the session
                message = f"internal error in the worker: {type(exc).__name__}: {exc}"
                self.emit(RequestFailed(request.id, ChainErrorInfo("worker", message[:300])))
                self.emit(RequestDone(request.id))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m probes.worker", description=__doc__.splitlines()[0])
    parser.parse_args(argv)
    warnings.filterwarnings("ignore", message=".*(Profiler clears events|Failed to initialize NumPy).*")
    # Keep fd 1 for the protocol; point everything else that writes to stdout at stderr.
    protocol_out = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    worker = Worker(protocol_out)
    reader = threading.Thread(target=worker.read_requests, args=(sys.stdin,), daemon=True)
    reader.start()
    worker.emit(worker.ready())
    # torch's hundreds of thousands of long-lived objects would make every full collection (the
    # engine runs one after each size) cost ~0.1 s; frozen, they are skipped.
    gc.freeze()
    code = worker.serve()
    protocol_out.flush()
    os._exit(code)


if __name__ == "__main__":
    main()
