"""The probe process: JSON lines on stdin/stdout, one request at a time.

``python -P -m probes.engine.worker`` imports torch, initialises the default device (so that the first
request does not pay for it), announces itself with ``WorkerReady`` and then serves requests in
order. Anything a library prints goes to stderr: stdout carries protocol lines only.

Three threads:

- the main thread runs requests;
- a reader thread keeps listening: a ``CancelRequest`` stops the running request at its next safe
  point (between sizes and modes), or, when none comes within ``CANCEL_SAFE_POINT_S``, by raising
  in the main thread (a compile, which has no safe point, at once); a real request pre-empts a
  warm-up at once; ``ShutdownRequest`` ends the process at once, whatever it is doing;
- a heartbeat thread sends a ``Heartbeat`` every ``HEARTBEAT_S`` while a request runs. It needs the
  GIL, so a chain stuck in one long C call (big-integer arithmetic) goes quiet, and the client
  restarts the worker; compiles release the GIL often and keep beating.

A chain that runs plain Python for too long without reaching a tensor op is stopped by the memory
guard's watch (probes.engine.watchdog), which answers in one line; when it cannot be stopped, the worker
says so and exits with ``EXIT_STUCK``. So does one call of the chain past its time budget
(``CALL_BUDGET``) that does not return to Python: an op that releases the GIL keeps the heartbeats
coming, so only the budget sees it.

Its lifeline (probes.engine.lifeline), a process of its own that needs no GIL, kills it with its
compilers once its client is gone, even inside a C call that holds the GIL.

Exit codes (``probes.link.protocol``): 0 on shutdown, and at the end of its input (killed with its
process group when it leads one), at once, whatever it is doing;
``EXIT_DEVICE_POISONED`` after a CUDA error that leaves the context unusable; ``EXIT_STUCK`` as
above (the client restarts it).
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import dataclasses
import gc
import os
import queue
import signal
import subprocess
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from typing import IO, Any

from probes.engine import torch_compat
from probes.engine.child_processes import kill_compilers
from probes.engine.driver_context import start_driver_context
from probes.engine.lifeline import start_lifeline
from probes.engine.watchdog import (
    CALL_BUDGET,
    WATCH,
    ChainStuck,
    Interrupted,
    clear_in_thread,
    raise_in_thread,
    stuck_message,
)
from probes.link import fast_paths
from probes.link.bytecode_cache import fill_later
from probes.link.protocol import (
    EXIT_DEVICE_POISONED,
    EXIT_STUCK,
    PROTOCOL_VERSION,
    CancelRequest,
    ChainErrorInfo,
    Event,
    Heartbeat,
    InfoRequest,
    ProfileRequest,
    Progress,
    RequestDone,
    RequestFailed,
    WarmupRequest,
    WorkerReady,
    encode,
    incoming,
)
from probes.link.safe_text import inert_line

HEARTBEAT_S = 1.0
CANCEL_SAFE_POINT_S = 0.3
"""A cancelled request that reaches no safe point within this is stopped by raising in it."""

TEST_FAULT_ENV = "KERNEL_TUI_TEST_FAULT"
"""Test-only fault injection, ``KIND:MARKER_FILE``. Kinds: crash, hang (sleeps, GIL released,
heartbeats go on), hold-gil (sleeps holding the GIL: heartbeats stop), spin (plain Python forever,
watched: the watch stops it), c-loop (watched, in a C call that never returns to Python: the
watch cannot stop it) fire as a profile request starts; exit-in-compile when a compile starts.

The fault fires once (when the marker file does not exist yet, which it then creates), so the
restarted worker behaves. It lives in the worker's environment, never in the chain language.
"""

Request = ProfileRequest | InfoRequest | WarmupRequest


class StopRequest(Interrupted):
    """Raised in the main thread to stop the request it runs (cancelled, or pre-empted)."""


_FAULT_STAGES = {
    "exit-in-compile": "compiling",
    **dict.fromkeys(("crash", "hang", "hold-gil", "spin", "c-loop"), "start"),
}


def _inject_test_fault(stage: str) -> None:
    """Fire the test fault set for ``stage`` ("start" of a profile request, or a Progress stage)."""
    kind, _, marker = os.environ.get(TEST_FAULT_ENV, "").partition(":")
    if _FAULT_STAGES.get(kind) != stage or not marker or os.path.exists(marker):
        return
    open(marker, "w").close()
    if kind == "crash":
        os.kill(os.getpid(), signal.SIGKILL)
    elif kind == "hang":
        time.sleep(3600)
    elif kind == "hold-gil":
        ctypes.PyDLL(None).sleep(3600)  # a PyDLL call keeps the GIL
    elif kind == "exit-in-compile":
        os._exit(1)
    else:
        with WATCH.watching():
            if kind == "spin":
                while True:
                    pass
            ctypes.CDLL(None).sleep(3600)  # releases the GIL but never returns to Python


STOP_SIGNAL = signal.SIGUSR1
"""Sent to the main thread with a stop that must reach it inside a blocking system call. A compile
waits for the compilers it started (g++ on the CPU, ptxas for Triton) in a read or a wait, where an
exception raised in the thread fires only when the call returns (up to a compiler's whole run,
most of a second). A compile's stop ends those compilers first (``_end_compilers``), then this
signal wakes any other wait, and the compile stops within milliseconds. The signal is a fast path
(``probes.link.fast_paths``): without it the stop fires once the wait returns."""


def _end_compilers() -> None:
    """The compilers a stopped compile started, and theirs: killing only the one it waits for (as
    ``subprocess.run`` does on the way out) leaves g++'s cc1plus on the cores the next measurement
    times, for as long as it still had to run."""
    kill_compilers(os.getpid())


def _stop_signalled(signum: int, frame: object) -> None:
    """Nothing to do: the stop raised in the main thread fires as this handler starts (an
    interrupted call runs its handler before it is retried), and a stop that has fired already is
    not raised twice."""


class _MainThreadStop:
    """Raises StopRequest in the main thread, only while it runs the request it is armed for."""

    def __init__(self) -> None:
        self._main = threading.get_ident()
        self._can_wake = threading.current_thread() is threading.main_thread()
        """Only the main thread takes signals (elsewhere STOP_SIGNAL's default would end the process)."""
        if self._can_wake:
            signal.signal(STOP_SIGNAL, _stop_signalled)
        self._lock = threading.Lock()
        self._armed_for: str | None = None
        self._held_for: str | None = None
        self._sent = False
        self._stopped_while_held = False

    @contextlib.contextmanager
    def armed(self, request_id: str) -> Iterator[None]:
        with self._lock:
            self._armed_for, self._sent, self._stopped_while_held = request_id, False, False
        try:
            yield
        finally:
            with self._lock:
                self._armed_for = None
                if self._sent:
                    clear_in_thread(self._main)  # sent too late to fire: it must not fire later

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        """No stop inside (imports: a module interrupted halfway would stay broken): one already
        sent is taken before the block starts, one that comes during it as the block ends."""
        with self._lock:
            if self._sent:
                clear_in_thread(self._main)
                raise StopRequest
            self._held_for, self._armed_for = self._armed_for, None
        try:
            yield
        finally:
            with self._lock:
                self._armed_for, self._held_for = self._held_for, None
                stop_now, self._stopped_while_held = self._stopped_while_held, False
        if stop_now:
            raise StopRequest

    def stop(self, request_id: str, *, interrupt: Callable[[], object] | None = None) -> None:
        """Stop ``request_id`` at the main thread's next Python step; with ``interrupt``, also
        inside a blocking system call: ``interrupt()`` ends what it may wait for (while the main
        thread cannot act on it yet), then STOP_SIGNAL wakes it."""
        with self._lock:
            if self._held_for == request_id:
                self._stopped_while_held = True
            elif self._armed_for == request_id and not self._sent:
                self._sent = True
                raise_in_thread(self._main, StopRequest)
                if interrupt is not None:
                    interrupt()
                    if self._can_wake and fast_paths.enabled("stop_signal"):
                        signal.pthread_kill(self._main, STOP_SIGNAL)


def _tiny(x: Any) -> Any:
    """The warm-up's compile."""
    return (x + 1).relu()


class Worker:
    def __init__(self, out: IO[str], heartbeat_s: float = HEARTBEAT_S) -> None:
        self._out = out
        self._lock = threading.Lock()
        self._requests: queue.Queue[Request] = queue.Queue()
        self._cancelled: set[str] = set()
        self._current: Request | None = None
        self._stage = ""
        self._done_sent = False
        self._stop = _MainThreadStop()
        self.heartbeat_s = heartbeat_s
        self._served_one = False
        self.bytecode_filler: subprocess.Popen[bytes] | None = None
        """Started once the first request is done (probes.link.bytecode_cache), never before its rows."""

    # -- output ----------------------------------------------------------------------------------

    def emit(self, event: Event) -> None:
        """Write one event; a failure's message is made one inert line first (it may quote the
        chain or an argument, and a client may show it on a terminal as it is)."""
        if isinstance(event, RequestFailed):
            event = dataclasses.replace(
                event, error=dataclasses.replace(event.error, message=inert_line(event.error.message))
            )
        if isinstance(event, Progress):
            self._stage = event.stage
            _inject_test_fault(event.stage)
        current = self._current
        if isinstance(event, RequestDone) and current is not None and event.id == current.id:
            self._done_sent = True
        line = encode(event)
        with self._lock:
            self._out.write(line + "\n")
            self._out.flush()

    def beat(self) -> None:
        """Heartbeat thread: one Heartbeat per period while a request runs."""
        while True:
            time.sleep(self.heartbeat_s)
            current = self._current
            if current is not None:
                self.emit(Heartbeat(current.id, self._stage))

    def die_stuck(self, message: str) -> None:
        """The watch's last resort: the stuck chain cannot be stopped, so this process ends."""
        current = self._current
        if current is not None:
            self.emit(RequestFailed(current.id, ChainErrorInfo("stuck", f"{message}; the worker was restarted")))
        os._exit(EXIT_STUCK)

    def die_over_budget(self, message: str) -> None:
        """The call budget's last resort: an op past the budget that never returns to Python (C code
        without the GIL) cannot be stopped, so this process answers the line and ends; its client
        restarts it, as for a stuck chain."""
        current = self._current
        if current is not None:
            self.emit(RequestFailed(current.id, ChainErrorInfo("stuck", message)))  # the request as a whole
        os._exit(EXIT_STUCK)

    # -- input -----------------------------------------------------------------------------------

    def read_requests(self, stream: IO[str]) -> None:
        """Reader thread: queue work, apply cancels at once, end the process on shutdown or EOF.

        EOF means the client is gone (a closed terminal or SSH link kills the app without a word):
        nobody reads what this process would still measure, so it ends at once, with what it
        started (a compiler still building a kernel), rather than finish a sweep or a compile on a
        device someone else may want."""
        for message in incoming(stream, self.emit):
            if isinstance(message, CancelRequest):
                self._cancel(message.id, CANCEL_SAFE_POINT_S)
            elif isinstance(message, (ProfileRequest, InfoRequest, WarmupRequest)):
                current = self._current
                if isinstance(current, WarmupRequest) and not isinstance(message, WarmupRequest):
                    self._cancel(current.id, 0.0)  # a real request pre-empts the warm-up
                self._requests.put(message)
        if os.getpgrp() == os.getpid():  # its own process group, as the client starts it
            os.killpg(os.getpid(), signal.SIGKILL)
        os._exit(0)

    def _cancel(self, request_id: str, grace_s: float) -> None:
        self._cancelled.add(request_id)
        current = self._current
        if current is not None and current.id == request_id:
            compiling = sys.modules.get("probes.engine.compiling")  # not imported yet: nothing has compiled
            if compiling is not None and compiling.compiling_now():
                # A compile has no safe point to wait for: stopped at once, inside its wait for a
                # compiler too (STOP_SIGNAL).
                threading.Thread(
                    target=self._stop.stop, args=(request_id,), kwargs={"interrupt": _end_compilers}
                ).start()
            else:
                threading.Timer(grace_s, self._stop.stop, args=(request_id,)).start()

    # -- requests --------------------------------------------------------------------------------

    def ready(self, request_id: str | None = None) -> WorkerReady:
        import platform

        import torch

        from probes.engine.devices import default_device, list_devices

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
        while True:
            request = self._requests.get()
            if request.id in self._cancelled:
                self.emit(RequestDone(request.id, cancelled=True))
                continue
            self._current, self._stage, self._done_sent = request, "", False
            try:
                with self._stop.armed(request.id):
                    code = self._handle(request)
            except StopRequest:
                code = None
                _release()
                if not self._done_sent:
                    self.emit(RequestDone(request.id, cancelled=True))
            finally:
                self._current = None
                device_lock = sys.modules.get("probes.engine.device_lock")  # not imported yet: nothing was held
                if device_lock is not None:
                    device_lock.release_all()
            if code is not None:
                return code
            self._ready_next_compile()
            if not self._served_one:
                self._served_one = True
                self.bytecode_filler = fill_later(sys.modules.values())

    def _ready_next_compile(self) -> None:
        """In a worker that compiles (its compiler imported), with no request waiting: the next
        compile's ``torch.compile`` wrapper, made now rather than on a new chain's way to its rows
        (a fast path: ``probes.engine.compiling.make_spare_wrapper``)."""
        if (
            not fast_paths.enabled("spare_compile_wrapper")
            or not torch_compat.compiler_imported()
            or not self._requests.empty()
        ):
            return
        from probes.engine.compiling import make_spare_wrapper

        try:
            make_spare_wrapper()
        except Exception:  # only a head start: the next compile makes its own
            return

    def _handle(self, request: Request) -> int | None:
        """Run one request; an exit code when the process must end after it."""
        if isinstance(request, InfoRequest):
            self.emit(self.ready(request.id))
            self.emit(RequestDone(request.id))
            return None
        if isinstance(request, WarmupRequest):
            self._warm_up(request)
            return None
        from probes.engine.errors import DevicePoisoned
        from probes.engine.sweep import run_profile

        request_id = request.id

        def cancelled() -> bool:
            return request_id in self._cancelled

        try:
            _inject_test_fault("start")
            run_profile(request, self.emit, cancelled, self._import_compiler)
        except DevicePoisoned as exc:
            # No RequestDone: the client sees this process end while the request is still
            # open, so it restarts the worker before the next request is sent.
            self.emit(RequestFailed(request.id, exc.info))
            return EXIT_DEVICE_POISONED
        except ChainStuck:  # a test fault's watched spin (chains are stopped inside the memory guard)
            self.emit(RequestFailed(request.id, ChainErrorInfo("stuck", stuck_message(WATCH.limit_s))))
            self.emit(RequestDone(request.id))
        except Exception as exc:  # a bug in the engine must not end the worker
            message = f"internal error in the worker: {type(exc).__name__}: {exc}"
            self.emit(RequestFailed(request.id, ChainErrorInfo("worker", message[:300])))
            self.emit(RequestDone(request.id))
        return None

    def _import_compiler(self, step: Progress | None = None) -> None:
        """Dynamo and Inductor, imported whole before a compile needs them (a worker starts
        without them, probes.engine.dynamo_deferral): a stop inside an import would leave a module
        half made for the rest of the process. ``step``: the request's step that waits for it."""
        if not torch_compat.compiler_to_import():
            return
        from probes.engine.dynamo_deferral import end_dynamo_deferral

        if step is not None:  # the client waits out a cancel until the import ends
            self.emit(dataclasses.replace(step, message="importing Dynamo and Inductor (once)", stage="importing"))

        end_dynamo_deferral()
        with self._stop.held(), long_lived():
            torch_compat.import_compiler()

    def _warm_up(self, request: WarmupRequest) -> None:
        """Import Inductor and compile a tiny kernel on the device, so that the first real compile
        does not pay for it. Imports are never interrupted; the compile is, by any real request."""
        import torch

        from probes.engine.compiling import compile_window
        from probes.engine.device_lock import compiling, importing_compiler
        from probes.engine.devices import resolve_device
        from probes.engine.errors import MeasureError

        try:
            device = resolve_device(request.device)
        except MeasureError as exc:
            self.emit(RequestFailed(request.id, exc.info))
            self.emit(RequestDone(request.id))
            return
        self.emit(Progress(request.id, "warming up: importing Inductor", "warmup"))
        with importing_compiler(device):
            self._import_compiler()
        if request.id not in self._cancelled:
            self.emit(Progress(request.id, f"warming up: compiling a tiny kernel on {device}", "warmup"))
            with compiling(device), compile_window():  # a real request stops it at once, its compilers too
                torch.compile(_tiny, dynamic=False)(torch.ones(8, device=device))
                if device.type == "cuda":
                    torch.cuda.synchronize(device)
        self.emit(RequestDone(request.id, cancelled=request.id in self._cancelled))


@contextlib.contextmanager
def long_lived() -> Iterator[None]:
    """For a block that makes what lives as long as the process (torch's import, Inductor's): the
    collector is off while it runs and leaves what it made out of every later pass (frozen).
    Imports make hundreds of thousands of objects and almost no garbage; the collector's full
    passes over them cost a noticeable part of a worker's start and as much of its compiler's
    import, and every later full pass would walk them again. What is garbage already is collected
    first: frozen, a dead cycle holding a tensor would hold it for good. A fast path
    (``probes.link.fast_paths``): without it the collector runs as Python runs it."""
    if not fast_paths.enabled("frozen_imports"):
        yield
        return
    gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if was_enabled:
            gc.enable()


def _release() -> None:
    """Give back what a stopped request held (its tensors went with its frames). Only the young
    generations, a fast path: a stop comes with the next edit, whose request must not wait for a
    full collection (the memory guard runs one before it would refuse a size)."""
    if fast_paths.enabled("young_collections"):
        gc.collect(1)
    else:
        gc.collect()
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available():
        torch.cuda.empty_cache()


def _initialise_device(driver_context: threading.Thread | None = None) -> None:
    """Create the default device's context, and load what the memory guard's first meta run
    would (sympy, torch's meta kernels), now, while the client waits for WorkerReady anyway. The
    context is made in a thread beside the meta run: on a GPU most of it runs outside the GIL.
    ``driver_context``: the driver's thread that made it while torch imported
    (probes.engine.driver_context), to be waited for. Dynamo is not loaded
    (probes.engine.dynamo_deferral): a worker imports it with its first compile or warm-up. The
    early meta run and the thread are fast paths (``probes.link.fast_paths``): without them the
    context is made here, and the first request's meta run loads what it needs."""
    import torch

    from probes.chain.expr import parse_chain
    from probes.engine.devices import default_device
    from probes.engine.dynamo_deferral import defer_dynamo_import
    from probes.engine.inputs import input_specs
    from probes.engine.memory_guard import check_memory

    defer_dynamo_import()
    device = torch.device(default_device())
    if not fast_paths.enabled("early_meta_run"):
        torch.ones(1, device=device).add_(1)
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        return
    failure: list[BaseException] = []

    def make_context() -> None:
        try:
            if driver_context is not None:
                driver_context.join()
            torch.ones(1, device=device).add_(1)
            if device.type == "cuda":
                torch.cuda.synchronize(device)
        except BaseException as exc:  # raised again in the main thread
            failure.append(exc)

    context = threading.Thread(target=make_context, name="device-context")
    context.start()
    chain = parse_chain("(a + b).relu()")  # sized on the host: only its loading matters
    check_memory(chain, input_specs(chain, 8, "fp32"), 8, torch.device("cpu"))
    context.join()
    if failure:
        raise failure[0]


SAFE_PATH_ENV = "PYTHONSAFEPATH"
"""Set in the worker's own environment, so that every Python process it starts (Inductor's compile
workers, the bytecode filler, a user's subprocess) imports nothing from the folder it starts in,
as the worker itself does (``python -P``); a worker started over SSH sets it too."""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -P -m probes.engine.worker", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--stuck-s",
        type=float,
        default=WATCH.limit_s,
        help="stop a chain after this long in plain Python without a tensor op (seconds)",
    )
    parser.add_argument("--heartbeat-s", type=float, default=HEARTBEAT_S, help="seconds between heartbeats")
    args = parser.parse_args(argv)  # before anything starts: --help and a bad flag leave nothing running
    os.environ[SAFE_PATH_ENV] = "1"
    start_lifeline()  # first, while this process has one thread
    signal.signal(signal.SIGHUP, signal.SIG_DFL)  # a hang-up ends it, even when its client ignores one
    driver_context = start_driver_context()  # beside torch's import, which follows
    warnings.filterwarnings("ignore", message=".*(Profiler clears events|Failed to initialize NumPy).*")
    # Keep fd 1 for the protocol; point everything else that writes to stdout at stderr.
    protocol_out = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    worker = Worker(protocol_out, heartbeat_s=args.heartbeat_s)
    threading.Thread(target=worker.read_requests, args=(sys.stdin,), name="reader", daemon=True).start()
    threading.Thread(target=worker.beat, name="heartbeat", daemon=True).start()
    with long_lived():
        _initialise_device(driver_context)
    WATCH.limit_s = args.stuck_s  # after the first meta run: its lazy imports are not a chain's Python
    WATCH.on_unstoppable = worker.die_stuck
    CALL_BUDGET.on_unstoppable = worker.die_over_budget
    worker.emit(worker.ready())
    code = worker.serve()
    protocol_out.flush()
    if worker.bytecode_filler is not None:
        worker.bytecode_filler.kill()  # what it compiled stays; the next worker's filler does the rest
    os._exit(code)


if __name__ == "__main__":
    main()
