"""One measurement at a time on a device, across processes.

The app may run two workers on one GPU (``probes.link.worker_pair``: one measures eager rows
while the other compiles), and a user may run two kernel-tui apps on one machine. Two
measurements running on one device at once read each other's kernels as their own time, so each
measurement holds the device's lock: an ``flock`` on a file of the user's cache directory, per
device.

A compile on a GPU is host work (tracing, code generation, building kernels), so ``compiling()``
lets the lock go for its duration, and the other worker measures meanwhile; only Inductor's own
benchmarks of candidate kernels run on the device then, and they take the lock back for each
benchmark. That is a fast path (``probes.link.fast_paths``): without it, or where Inductor's
benchmarks cannot be reached, a compile holds the lock. On the CPU, a compile uses the cores a
measurement times, so it always keeps the lock.

A wait is said. Each holder writes who it is beside the lock (``HOLDER_SUFFIX``: its client's pid
and program, and since when it holds the device); a process that finds the device held for longer
than ``SAY_AFTER_S`` says so through the hook of ``saying_waits`` ("waiting for cpu: kernel-tui (pid
4242) measures there since 12:01:07"), unless the holder is its own client's other worker. The
wait tries again every ``POLL_S`` rather than blocking in the kernel, so a stop (an edit typed over
the request) reaches the waiting thread at once. A holder that died holds nothing: its ``flock``
went with its process, whatever its note beside the lock still says.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

try:
    import fcntl
except ImportError:  # Windows: no flock; one process measures at a time there only by the pair's routing
    fcntl = None  # type: ignore[assignment]

from probes.engine import torch_compat
from probes.link import fast_paths
from probes.link.safe_text import inert_line
from probes.link.state_files import user_cache_dir

POLL_S = 0.05
"""How often a wait for a device held by another process tries again."""
SAY_AFTER_S = 0.5
"""A wait this long is said (shorter ones are another process between two measurements)."""
HOLDER_SUFFIX = ".holder"
"""Beside ``cpu.lock``, ``cpu.lock.holder``: JSON ``{"pid", "command", "since"}`` of its holder."""

Say = Callable[[str | None], None]
"""Told the words of a wait as it starts to be said, and None once the device is taken."""
_say: Say | None = None


@functools.cache
def _client() -> tuple[int, str]:
    """This worker's client (its parent: the app or ``kernel-tui profile``): pid and program name."""
    pid = os.getppid()
    try:
        with open(f"/proc/{pid}/comm") as comm:
            return pid, comm.read().strip()
    except OSError:
        return pid, "kernel-tui"


def _try_lock(fd: int) -> bool:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


class DeviceLock:
    """An exclusive, re-entrant lock on one device, shared by every process of this user. Within a
    process it is held while any thread holds it: each thread's holds are counted apart, so a
    thread that lets it go (a compile, ``released``) lets go of its own holds only, not of one
    another thread is in the middle of (the profiler's set-up beside that compile)."""

    def __init__(self, path: Path | None, name: str = "") -> None:
        """``path`` None: a lock that locks nothing (its file could not be made). ``name``: the
        device's (``cpu``, ``cuda:0``)."""
        self.path = path
        self.name = name
        self._fd: int | None = None
        self._depths: dict[int, int] = {}
        """Holds by thread (``threading.get_ident()``)."""
        self._guard = threading.RLock()

    @property
    def held(self) -> bool:
        return any(self._depths.values())

    def _lock(self) -> None:
        if fcntl is None or self.path is None or self._fd is not None:
            return
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        except OSError:
            return  # a measurement is never refused for want of a lock file
        try:
            if not _try_lock(fd):
                self._wait(fd)
        except BaseException:  # stopped while waiting: nothing is held
            os.close(fd)
            raise
        self._fd = fd
        self._write_holder()

    def _wait(self, fd: int) -> None:
        """Wait for the device, saying so once the wait lasts (when someone else holds it)."""
        say, said = _say, False
        started = time.monotonic()
        while not _try_lock(fd):
            if say is not None and not said and time.monotonic() - started > SAY_AFTER_S:
                words = self.waiting_words()
                if words is not None:
                    say(words)
                    said = True
            time.sleep(POLL_S)
        if said and say is not None:
            say(None)

    def _holder_path(self) -> Path | None:
        return self.path.with_name(self.path.name + HOLDER_SUFFIX) if self.path is not None else None

    def _write_holder(self) -> None:
        """Note who holds the device now, for the processes that will wait for it."""
        path = self._holder_path()
        if path is None:
            return
        pid, command = _client()
        note = json.dumps({"pid": pid, "command": command, "since": time.time()}).encode()
        with contextlib.suppress(OSError):
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
            try:
                os.write(fd, note)
            finally:
                os.close(fd)

    def waiting_words(self) -> str | None:
        """ "waiting for cpu: kernel-tui (pid 4242) measures there since 12:01:07" (the holder's
        note, inert: another process wrote it); None when the holder is this worker's own client's
        other worker (the app's pair take turns all the time)."""
        path = self._holder_path()
        try:
            if path is None:
                raise OSError("no note")
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
            try:
                note = json.loads(os.read(fd, 4096))
            finally:
                os.close(fd)
            pid, command, since = note["pid"], note["command"], note["since"]
            if not (isinstance(pid, int) and isinstance(command, str) and isinstance(since, (int, float))):
                raise ValueError("not a holder's note")
            when = time.strftime("%H:%M:%S", time.localtime(since))
        except (OSError, ValueError, KeyError, TypeError, OverflowError):
            return inert_line(f"waiting for {self.name}: another process measures there")
        if pid == _client()[0]:
            return None
        return inert_line(f"waiting for {self.name}: {command[:40]} (pid {pid}) measures there since {when}")

    def _unlock(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing the only descriptor of the file releases its flock
            self._fd = None

    @contextmanager
    def measuring(self) -> Iterator[None]:
        """Hold the device for the block (waiting while another process holds it)."""
        me = threading.get_ident()
        with self._guard:
            if not self.held:
                self._lock()
            self._depths[me] = self._depths.get(me, 0) + 1
        try:
            yield
        finally:
            with self._guard:
                if self._depths.get(me, 0) > 0:  # else ``release_all`` let it go already
                    self._depths[me] -= 1
                    if not self._depths[me]:
                        del self._depths[me]
                    if not self.held:
                        self._unlock()

    @contextmanager
    def released(self) -> Iterator[None]:
        """Let the device go for the block, as far as this thread holds it (another thread of the
        process holding it keeps it); hold it again after."""
        me = threading.get_ident()
        with self._guard:
            depth = self._depths.pop(me, 0)
            if depth and not self.held:
                self._unlock()
        try:
            yield
        finally:
            with self._guard:
                if depth:
                    if not self.held:
                        self._lock()
                    self._depths[me] = self._depths.get(me, 0) + depth

    def mark_timed(self) -> None:
        """Note, for every process of this user, that timed reps on the device ended now (the lock
        file's modification time)."""
        if self.path is None:
            return
        with contextlib.suppress(OSError):
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
            try:
                os.utime(fd)
            finally:
                os.close(fd)  # another descriptor's flock stays: flock belongs to its own open file

    def last_timed(self) -> float | None:
        """When timed reps on the device last ended, in any process (``time.time()``); None where
        nothing says."""
        if self.path is None:
            return None
        try:
            return os.stat(self.path, follow_symlinks=False).st_mtime
        except OSError:
            return None

    def release_all(self) -> None:
        """Let the device go, whoever holds it."""
        with self._guard:
            self._depths.clear()
            self._unlock()


_locks: dict[str, DeviceLock] = {}
_compiling: DeviceLock | None = None
"""The lock a compile let go of, taken back by each of Inductor's benchmarks (see ``compiling``)."""


def device_lock(device: object) -> DeviceLock:
    """The lock of ``device`` (a torch.device or its name: ``cuda:0``, ``cpu``)."""
    name = str(device)
    if name not in _locks:
        try:
            directory = user_cache_dir() / "locks"
            directory.mkdir(mode=0o700, exist_ok=True)
        except OSError:
            _locks[name] = DeviceLock(None)
        else:
            _locks[name] = DeviceLock(directory / f"{name.replace(':', '-')}.lock", name)
    return _locks[name]


@contextmanager
def saying_waits(say: Say) -> Iterator[None]:
    """Within the block, a wait for a device that someone else holds is said through ``say``."""
    global _say
    outer, _say = _say, say
    try:
        yield
    finally:
        _say = outer


def release_all() -> None:
    """Let every device go. Between two requests nothing is measured: a request stopped halfway
    through taking or giving back a lock (the worker's stop lands between any two Python steps)
    must not leave the other worker waiting for it."""
    for lock in _locks.values():
        lock.release_all()


def measuring(device: object) -> contextlib.AbstractContextManager[None]:
    """Hold ``device`` for a measurement (or anything else that runs on it)."""
    return device_lock(device).measuring()


def _is_cuda(device: Any) -> bool:
    """``device`` a torch.device or its name (``cuda:0``, ``cpu``)."""
    return getattr(device, "type", str(device).split(":")[0]) == "cuda"


@contextmanager
def compiling(device: Any) -> Iterator[None]:
    """The span of a compile on ``device``: on a GPU, the device is let go (Inductor's benchmarks
    take it back each time); elsewhere, with the fast paths off, or where those benchmarks cannot
    be reached, it is held."""
    global _compiling
    lock = device_lock(device)
    if (
        not _is_cuda(device)
        or not fast_paths.enabled("device_lock_during_compile")
        or not torch_compat.wrap_inductor_benchmarks(_guarded)
    ):
        with lock.measuring():
            yield
        return
    outer, _compiling = _compiling, lock
    try:
        with lock.released():
            yield
    finally:
        _compiling = outer


def importing_compiler(device: Any) -> contextlib.AbstractContextManager[None]:
    """The span of Dynamo's and Inductor's import, before a first compile: on a GPU host work that
    holds nothing; elsewhere a compile's first part, on the cores a measurement times, so it holds
    the device (a compile worker importing them beside the other worker's first eager measurement
    made its ops read a hundred times slower on a small machine)."""
    if _is_cuda(device):
        return contextlib.nullcontext()
    return device_lock(device).measuring()


def _guarded(benchmark: Callable[..., Any]) -> Callable[..., Any]:
    def locked_benchmark(*args: Any, **kwargs: Any) -> Any:
        lock = _compiling
        if lock is None:
            return benchmark(*args, **kwargs)
        with lock.measuring():
            return benchmark(*args, **kwargs)

    return locked_benchmark
