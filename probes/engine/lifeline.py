"""The worker's lifeline: a small process that ends the worker, with every compiler it started, as
soon as its client is gone or the worker itself ended, whatever the worker is doing.

The client holds the write end of the worker's input. However the client ends (a quit, ``kill
-9``, SIGHUP or SIGTERM, a closed terminal or tmux session; over SSH, sshd closes the remote
worker's input when the link drops), the kernel closes that end, and a poll of the input reports the
hang-up without reading a byte. The worker's reader thread reads the same end of input, but it
needs the GIL, and a user's code inside one long C call (a regular expression backtracking, a
huge tuple compare) holds the GIL for hours. So the watch is a process of its own, forked at the
worker's start (one thread, no torch yet: a fork costs a millisecond): it waits for the hang-up,
and checks every ``CHECK_S`` that the worker is still its parent. Then it kills the worker's process
group, the compilers in it (g++, ptxas, Inductor's compile workers) and itself; a worker that does
not lead its own group (started by a shell over SSH that made none) is killed alone.

Linux's parent-death signal is not the mechanism: it fires when the thread that started the worker
ends, not its process; it reaches the worker but not the compilers the worker started; and over
SSH the worker's parent is sshd's shell, not the client.
"""

from __future__ import annotations

import os
import select
import signal

CHECK_S = 0.5
"""How often the lifeline checks that the worker is still alive (a hang-up wakes it at once)."""


def start_lifeline(input_fd: int = 0) -> int | None:
    """Fork the lifeline of this process, watching ``input_fd``; its pid (None where no process
    could be made: the worker goes on with its reader thread's watch alone). Called while this
    process has one thread: a fork copies only the calling thread."""
    worker = os.getpid()
    try:
        pid = os.fork()
    except OSError:
        return None
    if pid == 0:
        try:
            _watch(worker, input_fd)
        finally:
            os._exit(0)
    return pid


def _watch(worker: int, input_fd: int) -> None:
    # Only the input stays open: a lifeline holding the worker's output would hide the worker's end
    # from its client.
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (1, 2):
        os.dup2(devnull, fd)
    os.closerange(3, os.sysconf("SC_OPEN_MAX"))
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    poll = select.poll()
    poll.register(input_fd, getattr(select, "POLLRDHUP", 0))  # a hang-up and an error always wake it
    while os.getppid() == worker and not poll.poll(CHECK_S * 1000):
        pass
    if os.getpgrp() == worker:  # the worker leads the group: its compilers are in it
        os.killpg(worker, signal.SIGKILL)
    elif os.getppid() == worker:  # still the worker's pid, not a reused one
        os.kill(worker, signal.SIGKILL)
