"""Stop a chain that runs plain Python for too long without reaching a tensor op.

The memory guard runs every chain on meta tensors before anything else, and there tensor ops cost
nothing: time spent between two of them is the chain's own Python. A real chain gets from one op to
the next in microseconds; one that spends ``STUCK_S`` there is stuck (a loop hidden in a call, a
huge number), and the same Python would spin again in the real run. ``PlainPythonWatch`` notices it
from a thread of its own and raises ``ChainStuck`` in the chain's thread; if that thread cannot
take it (a single C call that never returns to Python), the watch ends the process as a last resort
(``on_unstoppable``), with one line saying why. A C call that holds the GIL also stops this thread:
the worker's client sees its heartbeats stop and restarts it (probes.link.client).

This module never imports torch: async exceptions and threads are plain CPython.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import threading
import time
from collections.abc import Callable, Iterator

from probes.link.protocol import EXIT_STUCK

STUCK_S = 30.0
"""Plain Python this long between two tensor ops of the meta trace stops the chain."""
STOP_GRACE_S = 5.0
"""How long a stopped chain has to unwind before the process is ended instead."""
_POLL_S = 0.25


class Interrupted(BaseException):
    """Raised asynchronously in a thread that must stop what it is doing. A BaseException, so the
    ``except Exception`` clauses of torch and of the engine let it through."""


class ChainStuck(Interrupted):
    """The chain ran plain Python for too long without reaching a tensor op."""


def stuck_message(limit_s: float) -> str:
    return f"the chain ran plain Python for {limit_s:g} s without reaching a tensor op: stopped"


def raise_in_thread(thread_id: int, exc_type: type[BaseException]) -> None:
    """Make ``exc_type`` raise in thread ``thread_id`` at its next Python instruction."""
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread_id), ctypes.py_object(exc_type))


def clear_in_thread(thread_id: int) -> None:
    """Forget an exception raise_in_thread scheduled for ``thread_id`` that has not fired yet."""
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread_id), None)


def exit_stuck(message: str) -> None:
    """The default last resort: say why on stderr, in one line, and end the process."""
    os.write(2, f"kernel-tui: {message}\n".encode())
    os._exit(EXIT_STUCK)


class PlainPythonWatch:
    """Watches one stretch of a chain's Python at a time (``watching``) from a monitor thread."""

    def __init__(self, limit_s: float = STUCK_S, grace_s: float = STOP_GRACE_S) -> None:
        self.limit_s = limit_s
        self.grace_s = grace_s
        self.on_unstoppable: Callable[[str], None] = exit_stuck
        self._lock = threading.Lock()
        self._active = threading.Event()
        self._thread_id: int | None = None
        self._last_op = 0.0
        self._stopped_at: float | None = None
        self._monitor: threading.Thread | None = None

    @contextlib.contextmanager
    def watching(self) -> Iterator[Callable[[], None]]:
        """Watch the calling thread; yields ``tick``, to call at each tensor op."""
        with self._lock:
            self._thread_id = threading.get_ident()
            self._last_op = time.monotonic()
            self._stopped_at = None
            if self._monitor is None:
                self._monitor = threading.Thread(target=self._run, name="plain-python-watch", daemon=True)
                self._monitor.start()
            self._active.set()
        try:
            yield self._tick
        finally:
            with self._lock:
                if self._stopped_at is not None:
                    clear_in_thread(threading.get_ident())
                self._thread_id = None
                self._active.clear()

    def _tick(self) -> None:
        self._last_op = time.monotonic()

    def _run(self) -> None:
        while True:
            self._active.wait()
            time.sleep(_POLL_S)
            with self._lock:
                if self._thread_id is None:
                    continue
                now = time.monotonic()
                if self._stopped_at is None:
                    if now - self._last_op > self.limit_s:
                        self._stopped_at = now
                        raise_in_thread(self._thread_id, ChainStuck)
                    continue
                if now - self._stopped_at <= self.grace_s:
                    continue
            self.on_unstoppable(stuck_message(self.limit_s))
            with self._lock:  # it returned (a test's hook): watch nothing until the next watching()
                self._thread_id = None


WATCH = PlainPythonWatch()
"""The process's watch, used by the memory guard; the worker sets its limit and last resort."""
