"""The kernel-tui app in a tmux pane, and how a person reads its screen.

``AppTerminal`` starts ``python -m tui ARGS`` from the repo root with its own state and cache
folders (so no test sees the user's workspace or another test's), and reads the screen as a person
does: the text of a bordered pane, the editor's lines, a toast, the status bar, which pane has the
highlighted (focused) border. The readers are plain functions of the captured screen, so they
serve as ``wait_for`` conditions. Closing it quits the app and leaves no process behind.
"""

from __future__ import annotations

import os
import re
import signal
import sys
import time
from collections import Counter
from pathlib import Path

from terminal import Terminal, alive

ROOT = Path(__file__).resolve().parents[2]
RECORDING = ROOT / "tests" / "data" / "h200_add_relu_sweep.json"
"""(a + b).relu() swept 1e2..1e8, eager and compiled, on the H200: the replay worker serves it."""

STARTUP_S = 90.0
"""The CPU worker's first rows: torch imports in a few seconds on a quiet 2-core machine; CI's
loaded cores and cold disk caches can take ten times that."""
REPLAY_S = 30.0
"""The replay worker's first rows (it imports no torch): a second or two, more on loaded cores."""
SCREEN_S = 10.0
"""Anything the app draws without the worker (a key's effect, a dialog, a new layout)."""
TOAST_WIDTH = 60
"""Textual's toast is 60 cells wide with a cell of margin on its right: its text starts after the
``▌`` on its left edge and ends 58 cells later."""
PANE_TITLES = ("chains", "chain", "op chain", "kernels", "sweep")


def replay_args(*extra: str) -> list[str]:
    return ["--replay", str(RECORDING), *extra]


def delayed_replay_args(delay_s: float, *extra: str) -> list[str]:
    """The replay worker taking ``delay_s`` per result: a sweep runs long enough to be stopped."""
    command = f"{sys.executable} -m probes.link.replay {RECORDING} --delay {delay_s}"
    return ["--worker-cmd", command, *extra]


def cpu_args(*extra: str) -> list[str]:
    """The real worker on the CPU, eager only, at a size measured in milliseconds."""
    return ["--device", "cpu", "--modes", "eager", "--n", "1e3", *extra]


class AppTerminal(Terminal):
    """``python -m tui ARGS`` in a ``width`` x ``height`` pane, with state and caches under ``home``."""

    def __init__(
        self, home: Path, args: list[str], *, width: int = 120, height: int = 40, env: dict[str, str] | None = None
    ) -> None:
        self.home = home
        environment = {
            "KERNEL_TUI_STATE_DIR": str(self.state_dir),
            "KERNEL_TUI_CACHE_DIR": str(home / "cache"),
            **(env or {}),
        }
        self._seen: set[int] = set()
        home.mkdir(parents=True, exist_ok=True)
        super().__init__([sys.executable, "-m", "tui", *args], width=width, height=height, env=environment, cwd=ROOT)

    @property
    def state_dir(self) -> Path:
        return self.home / "state"

    # -- reading ---------------------------------------------------------------------------------

    def styled_screen(self) -> str:
        """The screen with its colours (SGR escapes), as ``capture-pane -e`` gives it."""
        return self._tmux("capture-pane", "-e", "-p", "-t", self.target)

    def focused_pane(self) -> str | None:
        return focused_pane(self.styled_screen())

    def wait_for_focus(self, title: str, timeout: float = SCREEN_S) -> None:
        deadline = time.monotonic() + timeout
        while (found := self.focused_pane()) != title:
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"the {title} pane is not focused (the {found} pane is); the screen:\n{self.screen()}"
                )
            time.sleep(0.02)

    def tab_to(self, title: str) -> None:
        """Move the focus with tab until the ``title`` pane has it. A capture may catch a frame half
        drawn, no border highlighted (None): that is never taken for the focus having moved, or a
        second tab went out while the first one's frame was still being drawn."""
        for _ in range(3 * len(PANE_TITLES)):
            before = self.settled_focus()
            if before == title:
                return
            self.press("Tab")
            deadline = time.monotonic() + 0.5  # a pane may hold two tables: a tab within it moves nothing
            while self.focused_pane() in (before, None) and time.monotonic() < deadline:
                time.sleep(0.02)
        self.wait_for_focus(title, timeout=0)

    def settled_focus(self, timeout: float = SCREEN_S) -> str:
        """The focused pane, read from a whole frame (one with a highlighted border)."""
        deadline = time.monotonic() + timeout
        while (found := self.focused_pane()) is None:
            if time.monotonic() > deadline:
                raise AssertionError(f"no pane is focused; the screen:\n{self.screen()}")
            time.sleep(0.02)
        return found

    # -- ending ----------------------------------------------------------------------------------

    def app_pids(self) -> list[int]:
        """The app's own process (not the shell around it, nor its worker)."""
        return [
            pid
            for pid in [self.pid, *self.descendants()]
            if _command_line(pid).startswith(f"{sys.executable}\0-m\0tui\0".encode())
        ]

    def remember_processes(self) -> list[int]:
        """The program's processes now (its worker among them), kept to be checked at close."""
        found = self.descendants() if not self.exited() else []
        self._seen.update(found)
        return found

    def close(self) -> None:
        """Quit the app if it still runs, close tmux, and end any process of ours left behind."""
        if not self.exited():
            self.remember_processes()
            self._seen.add(self.pid)
            self.press("C-q")
            time.sleep(0.05)
            self.press("C-q")  # a second ctrl+q quits through the "edits cannot be saved" question
            deadline = time.monotonic() + 5
            while not self.exited() and time.monotonic() < deadline:
                time.sleep(0.02)
        super().close()
        deadline = time.monotonic() + 5
        while any(alive(pid) for pid in self._seen) and time.monotonic() < deadline:
            time.sleep(0.02)
        for pid in self._seen:
            if alive(pid) and _is_ours(pid):
                os.kill(pid, signal.SIGKILL)


def _command_line(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def _is_ours(pid: int) -> bool:
    """Still a process of this test (not a recycled pid): its command line names our program."""
    command = _command_line(pid)
    return any(name in command for name in (b"tui", b"probes", b"torch"))


# -- reading a captured screen ---------------------------------------------------------------------


def pane(screen: str, title: str) -> list[str]:
    """The body lines of the bordered pane whose title starts with the word(s) ``title``
    (``chain`` is the editor, ``chains`` the chains pane), cut at its left and right borders."""
    lines = screen.splitlines()
    for index, line in enumerate(lines):
        match = re.search(rf"╭─ {re.escape(title)}(?=[ ─])", line)
        if match is None:
            continue
        left = match.start()
        right = line.find("╮", left)
        body = []
        for below in lines[index + 1 :]:
            if below[left : left + 1] == "╰":
                break
            body.append(below[left + 1 : right] if right > left else below[left + 1 :])
        return body
    return []


def pane_text(screen: str, title: str) -> str:
    return "\n".join(pane(screen, title))


def words(text: str) -> str:
    """``text`` with every run of whitespace (line breaks of wrapped text too) as one space."""
    return " ".join(text.split())


PLACEHOLDER = "type an op chain, e.g. (a + b).relu()"


def editor_empty(screen: str) -> bool:
    """The editor shows its placeholder (it has no line numbers then)."""
    return not editor_lines(screen) and PLACEHOLDER in words(pane_text(screen, "chain"))


def editor_lines(screen: str) -> list[str]:
    """The chain as the editor shows it, one string per line (the line-number gutter removed)."""
    found = []
    for line in pane(screen, "chain"):
        match = re.match(r"\s*\d+  (.*?)\s*$", line)
        if match is not None:
            found.append(match.group(1))
    return found


def measured_ops(screen: str) -> list[str]:
    """The ops of the op chain pane, in order: what the worker measured (its first column)."""
    ops = []
    rows = pane(screen, "op chain")
    for line in rows[1:] if rows and rows[0].split()[:1] == ["op"] else []:
        if not line.strip():
            break
        ops.append(line.split()[0])
    return ops


def toast_text(screen: str) -> str:
    """The text of the toasts on screen (the notices that stay a few seconds), unwrapped."""
    parts = []
    for line in screen.splitlines():
        edge = line.find("▌")
        if edge >= 0:
            parts.append(line[edge + 1 : edge + TOAST_WIDTH - 1])
    return words(" ".join(parts))


def status_text(screen: str) -> str:
    """The status bar (worker, settings, the last message), its wrapped lines joined."""
    lines = screen.splitlines()
    start = next((i for i in range(len(lines) - 1, -1, -1) if lines[i].startswith(" ● ")), None)
    return "" if start is None else words(" ".join(lines[start:-1]))


def footer(screen: str) -> str:
    lines = screen.splitlines()
    return lines[-1] if lines else ""


_SGR = re.compile(r"\x1b\[([0-9;]*)m")


def border_colours(styled: str) -> dict[str, str]:
    """The colour of each pane's top border, by the pane's name (``PANE_TITLES``). tmux writes a
    colour only where it changes, so the colour in effect carries over from line to line."""
    colours: dict[str, str] = {}
    colour = ""
    for line in styled.splitlines():
        chars: list[str] = []
        colour_of: list[str] = []
        pos = 0
        for match in [*_SGR.finditer(line), None]:
            end = match.start() if match else len(line)
            chars.extend(line[pos:end])
            colour_of.extend([colour] * (end - pos))
            if match is None:
                break
            pos = match.end()
            colour = _foreground(match.group(1).split(";"), colour)
        plain = "".join(chars)
        for found in re.finditer(r"╭─ (.+?)(?: · | \(|\s*─)", plain):
            name = found.group(1).strip()
            if name in PANE_TITLES:
                colours[name] = colour_of[found.start()]
    return colours


def _foreground(params: list[str], colour: str) -> str:
    """The foreground colour after an SGR sequence with ``params`` (``colour`` before it)."""
    i = 0
    while i < len(params):
        p = params[i]
        if p in ("", "0", "39"):
            colour = ""
        elif p in ("38", "48"):
            size = 5 if params[i + 1 : i + 2] == ["2"] else 3
            if p == "38":
                colour = ";".join(params[i : i + size])
            i += size - 1
        elif p.isdigit() and (30 <= int(p) <= 37 or 90 <= int(p) <= 97):
            colour = p
        i += 1
    return colour


def focused_pane(styled: str) -> str | None:
    """The pane whose border is highlighted: the one border not of the colour the others share."""
    colours = border_colours(styled)
    if len(colours) < 3:
        return None
    common, _ = Counter(colours.values()).most_common(1)[0]
    odd = [name for name, colour in colours.items() if colour != common]
    return odd[0] if len(odd) == 1 else None
