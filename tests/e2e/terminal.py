"""Drive the real program in a real terminal: tmux, as a person (or an SSH link) would.

A ``Terminal`` runs one command in its own tmux server (its own socket, so tests never touch a
user's tmux or each other), types into it (one ``send-keys`` call is one burst, as a fast SSH
link delivers keys), reads the screen with ``capture-pane`` and waits for conditions on it. The
pane stays after the program exits (``remain-on-exit``), so a test can read its exit status.
Shared by the end-to-end tests, the packaging smoke test and ``benchmarks/tui_latency.py``.
"""

from __future__ import annotations

import itertools
import os
import shlex
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

_SESSIONS = itertools.count(1)
POLL_S = 0.01


class TerminalError(AssertionError):
    """A condition on the screen did not come true in time; carries what the screen showed."""


def tmux_available() -> bool:
    return shutil.which("tmux") is not None


class Terminal:
    """One program running in a ``width`` x ``height`` tmux pane."""

    def __init__(
        self,
        command: Sequence[str],
        *,
        width: int = 120,
        height: int = 40,
        env: Mapping[str, str] | None = None,
        cwd: Path | str | None = None,
        poll_s: float = POLL_S,
    ) -> None:
        """``poll_s``: the pause between two reads of the screen while waiting for a condition."""
        self.poll_s = poll_s
        self.socket = f"kt-{os.getpid()}-{next(_SESSIONS)}"
        self.target = "app"
        self.started_at = 0.0
        self.hung_up = False
        self._status_dir = tempfile.mkdtemp(prefix="kt-status-")
        self._status_file = Path(self._status_dir) / "exit-status"
        # A shell around the program writes its exit status down: tmux 3.3 often leaves
        # #{pane_dead_status} empty.
        record = ["sh", "-c", '"$@"; echo $? > "$0"', str(self._status_file)]
        # COLUMNS and LINES would win over the pane's size (an xdist worker sets them to 80x24).
        environment = {
            k: v for k, v in os.environ.items() if not k.startswith("TMUX") and k not in ("COLUMNS", "LINES")
        }
        environment.update({"TERM": "xterm-256color", "COLORTERM": "truecolor", **(env or {})})
        self._tmux(
            "new-session",
            "-d",
            "-s",
            self.target,
            "-x",
            str(width),
            "-y",
            str(height),
            "-c",
            str(cwd or os.getcwd()),
            # the pane keeps its exit status; the window keeps the size asked for
            ";",
            "set-option",
            "-t",
            self.target,
            "remain-on-exit",
            "on",
            ";",
            "set-option",
            "-t",
            self.target,
            "window-size",
            "manual",
            ";",
            "respawn-pane",
            "-k",
            "-t",
            self.target,
            shlex.join([*record, *command]),
            env=environment,
        )
        self.started_at = time.monotonic()

    # -- tmux ----------------------------------------------------------------------------------

    def _tmux(self, *args: str, check: bool = True, env: Mapping[str, str] | None = None) -> str:
        done = subprocess.run(
            ["tmux", "-L", self.socket, "-f", "/dev/null", *args],
            capture_output=True,
            text=True,
            timeout=30,
            env=env,
        )
        if check and done.returncode != 0:
            raise RuntimeError(f"tmux {' '.join(args[:3])}: {done.stderr.strip()}")
        return done.stdout

    def _pane(self, fmt: str) -> str:
        return self._tmux("display-message", "-p", "-t", self.target, fmt).strip()

    # -- reading -------------------------------------------------------------------------------

    def screen(self) -> str:
        """The visible screen, one string, lines joined by newlines (trailing spaces trimmed)."""
        return self._tmux("capture-pane", "-p", "-t", self.target)

    def lines(self) -> list[str]:
        return self.screen().splitlines()

    @property
    def pid(self) -> int:
        return int(self._pane("#{pane_pid}"))

    def exited(self) -> bool:
        """The program has exited (after a hang-up, there is no pane left to run it in)."""
        return self.hung_up or self._pane("#{pane_dead}") == "1"

    def exit_status(self) -> int | None:
        """The program's exit status once it has exited (128 + N if signal N ended it); None while
        it runs."""
        deadline = time.monotonic() + 5
        while self.exited() and time.monotonic() < deadline:
            written = self._status_file.read_text() if self._status_file.exists() else ""
            if written.endswith("\n"):
                return int(written)
            time.sleep(self.poll_s)
        return None

    def wait_for(self, condition: str | Callable[[str], bool], timeout: float = 30.0, what: str = "") -> str:
        """Poll the screen until ``condition`` (a substring, or a predicate on the screen) holds."""
        check = (lambda screen: condition in screen) if isinstance(condition, str) else condition
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen()
            if check(screen):
                return screen
            time.sleep(self.poll_s)
        label = what or (repr(condition) if isinstance(condition, str) else "condition")
        raise TerminalError(f"timed out after {timeout:.0f} s waiting for {label}; the screen:\n{screen}")

    def wait_until_exited(self, timeout: float = 10.0) -> float:
        """Seconds from now until the program has exited (TerminalError if it has not)."""
        begin = time.monotonic()
        deadline = begin + timeout
        while time.monotonic() < deadline:
            if self.exited():
                return time.monotonic() - begin
            time.sleep(self.poll_s)
        raise TerminalError(f"the program did not exit within {timeout:.0f} s; the screen:\n{self.screen()}")

    # -- typing --------------------------------------------------------------------------------

    def type(self, text: str) -> None:
        """Send ``text`` literally, in one burst (all its bytes in one write to the terminal)."""
        self._tmux("send-keys", "-t", self.target, "-l", text)

    def press(self, *keys: str) -> None:
        """Send tmux key names (``Escape``, ``C-q``, ``BSpace``...), all in one burst."""
        self._tmux("send-keys", "-t", self.target, *keys)

    def type_slowly(self, text: str, interval_s: float) -> float:
        """Type one character every ``interval_s``, as a person would; returns when the last key
        was sent (``time.monotonic()``)."""
        sent = time.monotonic()
        for index, char in enumerate(text):
            target = sent + index * interval_s
            while time.monotonic() < target:
                time.sleep(0.001)
            self.type(char)
        return time.monotonic()

    def paste(self, text: str) -> None:
        """A bracketed paste of ``text``, as a terminal sends it when the user pastes."""
        self._tmux("set-buffer", "-b", "kt", text)
        self._tmux("paste-buffer", "-p", "-b", "kt", "-t", self.target)

    def resize(self, width: int, height: int) -> None:
        self._tmux("resize-window", "-t", self.target, "-x", str(width), "-y", str(height))

    # -- ending --------------------------------------------------------------------------------

    def descendants(self) -> list[int]:
        """Pids of every process below the program (its worker among them)."""
        children: dict[int, list[int]] = {}
        for line in subprocess.run(
            ["ps", "-e", "-o", "pid=,ppid="], capture_output=True, text=True
        ).stdout.splitlines():
            pid, ppid = (int(x) for x in line.split())
            children.setdefault(ppid, []).append(pid)
        found, stack = [], [self.pid]
        while stack:
            for child in children.get(stack.pop(), []):
                found.append(child)
                stack.append(child)
        return found

    def hang_up(self) -> None:
        """The terminal goes away, as a closed window or a dropped SSH link: tmux's server ends and
        the program gets its hang-up, with no key pressed."""
        self._tmux("kill-server", check=False)
        self.hung_up = True

    def close(self) -> None:
        self._tmux("kill-server", check=False)
        shutil.rmtree(self._status_dir, ignore_errors=True)

    def __enter__(self) -> Terminal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie waiting for its parent counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False
