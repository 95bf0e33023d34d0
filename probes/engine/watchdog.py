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
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator

from probes.link.protocol import EXIT_STUCK
from probes.link.settings import DEFAULT_CALL_BUDGET_S

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


class CallOverBudget(Interrupted):
    """One call of the chain ran past its budget (``CallBudget``)."""


Describe = Callable[[traceback.StackSummary], str]
"""The line that says where a user's code was when it ran past its budget, from its stack."""


def over_budget_message(size: int, limit_s: float, mode: str | None = None) -> str:
    shown = f"{size:.0e}".replace("e+0", "e").replace("e+", "e") if size >= 10**5 else f"{size:,}"
    what = f"one call of the chain ({mode})" if mode else "one call of the chain"
    return (
        f"{what} at N={shown} took over {limit_s:g} s (the budget for one call); "
        "a smaller N or a larger --call-budget measures it"
    )


class CallBudget:
    """The time budget for one call of a chain, watched from a thread of its own.

    Heartbeats cannot tell a slow call from a healthy one: torch releases the GIL inside an op, so
    a convolution that runs for hours keeps them coming. So the caller marks each call (``call``,
    or ``calls`` for a block of back-to-back calls) inside a measurement (``watching``), and a
    call still running past the budget is stopped: ``CallOverBudget`` is raised in the measuring
    thread, which takes it when the op returns to Python. An op that does not return within
    ``grace_s`` (C code holding no GIL cannot be interrupted) gets the last resort instead
    (``on_unstoppable``: the worker answers the line and exits, and its client restarts it).
    A compile is not a call: the clock stops while Dynamo compiles (``compile_started``); a compile
    runs the call it was started by once it ends, so the clock runs from its end
    (``compile_ended``) until the next mark, for ``AFTER_COMPILE_CALLS`` calls (the rest of that
    call, and the calls that check the compiled code).
    """

    AFTER_COMPILE_CALLS = 4

    def __init__(self, grace_s: float = 1.0, poll_s: float = 0.05) -> None:
        self.grace_s = grace_s
        self.poll_s = poll_s
        self.limit_s = DEFAULT_CALL_BUDGET_S
        """The budget of the request in hand (the sweep sets it), for ``user_code``."""
        self.on_unstoppable: Callable[[str], None] = exit_stuck
        self._lock = threading.Lock()
        self._active = threading.Event()
        self._thread_id: int | None = None
        self._limit_s = 0.0
        self._size = 0
        self._mode: str | None = None
        self._started: float | None = None
        self._allowed_s = 0.0
        self._fired_at: float | None = None
        self._describe: Describe | None = None
        self._monitor: threading.Thread | None = None

    @contextlib.contextmanager
    def watching(
        self, limit_s: float, size: int, mode: str | None = None, describe: Describe | None = None
    ) -> Iterator[None]:
        """Budget the calls the calling thread marks inside the block at ``limit_s`` each; a call
        past it raises CallOverBudget out of the block. ``describe``: the line of the last resort,
        from where the thread was when stopped (else ``message()``)."""
        with self._lock:
            self._thread_id = threading.get_ident()
            self._limit_s, self._size, self._mode, self._describe = limit_s, size, mode, describe
            self._started, self._fired_at = None, None
            if self._monitor is None:
                self._monitor = threading.Thread(target=self._run, name="call-budget", daemon=True)
                self._monitor.start()
            self._active.set()
        try:
            yield
        finally:
            with self._lock:
                self._thread_id, self._started = None, None
                self._active.clear()

    def message(self) -> str:
        return over_budget_message(self._size, self._limit_s, self._mode)

    def start(self, count: int = 1) -> None:
        """A block of ``count`` calls starts in the watched thread (nothing outside ``watching``)."""
        if self._thread_id == threading.get_ident():
            self._allowed_s = self._limit_s * count
            self._started = time.monotonic()

    def end(self, *, raising: bool = True) -> None:
        """The block ended: raises CallOverBudget when the budget ran out meanwhile (once, even
        where the monitor's raise has not fired yet); ``raising=False`` where the one it raised is
        on its way out already."""
        if self._started is None or self._thread_id != threading.get_ident():
            return
        with self._lock:
            self._started = None
            fired = self._fired_at is not None
            if fired:
                clear_in_thread(threading.get_ident())  # raised here instead, once
        if fired and raising:
            raise CallOverBudget

    @contextlib.contextmanager
    def calls(self, count: int = 1) -> Iterator[None]:
        """Mark a block of ``count`` back-to-back calls (the budget is ``count`` times one call's).
        The stop that fired inside goes on as it is, with the frame where it fired."""
        self.start(count)
        try:
            yield
        except CallOverBudget:
            self.end(raising=False)
            raise
        finally:
            self.end()

    @contextlib.contextmanager
    def user_code(self, describe: Describe | None = None) -> Iterator[None]:
        """A stretch of a user's own code besides its measured calls (its file's import, its
        constructor or factory, the text of an exception it raised), budgeted as one call: one more
        call inside a measurement, else a watch of its own at ``limit_s``, whose last resort says
        ``describe``'s line."""
        if self._thread_id == threading.get_ident():
            with self.calls():
                yield
            return
        with self.watching(self.limit_s, 0, describe=describe), self.calls():
            yield

    def compile_started(self) -> None:
        """A compile begins (in any thread): a call of the watched thread stops its clock."""
        if self._thread_id == threading.get_ident():
            self._started = None

    def compile_ended(self) -> None:
        """A compile ended (in any thread): in the watched thread, the call it ran for goes on."""
        if self._thread_id == threading.get_ident():
            self._allowed_s = self._limit_s * self.AFTER_COMPILE_CALLS
            self._started = time.monotonic()

    def _run(self) -> None:
        while True:
            self._active.wait()
            time.sleep(self.poll_s)
            with self._lock:
                started, thread_id = self._started, self._thread_id
                if started is None or thread_id is None:
                    continue
                now = time.monotonic()
                if self._fired_at is None:
                    if now - started > self._allowed_s:
                        self._fired_at = now
                        raise_in_thread(thread_id, CallOverBudget)
                    continue
                if now - self._fired_at <= self.grace_s:
                    continue
                message = self._last_words(thread_id)
                self._started = None
            self.on_unstoppable(message)

    def _last_words(self, thread_id: int) -> str:
        """The last resort's line: ``describe``'s, from where the stuck thread is (this thread runs,
        so the stuck one is in C code without the GIL and its frame holds still), else ``message()``."""
        frame = sys._current_frames().get(thread_id)
        if self._describe is None or frame is None:
            return self.message()
        return self._describe(traceback.extract_stack(frame))


CALL_BUDGET = CallBudget()
"""The process's call budget: the sweep watches each measurement, the timing loops mark the calls;
the worker sets its last resort."""


def text_of(exc: BaseException) -> str:
    """``str(exc)`` under the call budget: an exception of a user's file may compute its text in
    Python of its own (CallOverBudget past the budget)."""
    with CALL_BUDGET.user_code():
        return str(exc)
