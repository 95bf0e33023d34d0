"""Launch -> first frame on this machine, in turns: the app as launched (its worker importing torch
beside it), the app with a worker command that does nothing (``sleep``), and a minimal Textual
app (``textual_floor.py``). Each in a fresh tmux terminal of 120x40, the first round left out.

    python benchmarks/first_frame_ab.py [--rounds 8]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time

from tui_latency import FLOOR, ROOT, Terminal, alive

CHAIN = "(a + b).relu()"
VARIANTS = {
    "app": [sys.executable, "-m", "tui", CHAIN, "--device", "cpu"],
    "app, idle worker": [sys.executable, "-m", "tui", CHAIN, "--device", "cpu", "--worker-cmd", "sleep 60"],
    "minimal Textual app": [sys.executable, str(FLOOR), CHAIN],
}


def first_frame(command: list[str]) -> float:
    """Seconds from launch to ``CHAIN`` on screen; returns once the launch's processes are gone."""
    term = Terminal(command, width=120, height=40, env={"KERNEL_TUI_STATE_DIR": tempfile.mkdtemp()}, cwd=ROOT)
    try:
        term.wait_for(CHAIN, timeout=30, what="the first frame")
        seconds = time.monotonic() - term.started_at
        processes = [term.pid, *term.descendants()]
    finally:
        term.close()
    deadline = time.monotonic() + 15
    while any(alive(pid) for pid in processes) and time.monotonic() < deadline:
        time.sleep(0.05)
    return seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=8)
    args = parser.parse_args()
    got: dict[str, list[float]] = {name: [] for name in VARIANTS}
    names = list(VARIANTS)
    for round_ in range(args.rounds + 1):
        for name in names[round_ % len(names) :] + names[: round_ % len(names)]:
            seconds = first_frame(VARIANTS[name])
            if round_:
                got[name].append(seconds)
    for name, values in got.items():
        print(
            f"{name:20} median {statistics.median(values) * 1e3:4.0f} ms  "
            f"(min {min(values) * 1e3:.0f}, max {max(values) * 1e3:.0f}, n={len(values)})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
