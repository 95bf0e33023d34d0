"""The screen layouts that a new chain's results cost the app's event loop, with pane texts
repainted in place where their size stays (the app as it is) and with every changed text laid
out (``Static.update``'s default), in turns, in one run.

    python benchmarks/result_layouts.py [--edits 12]

The app runs under Textual's pilot with the replay worker (recorded H200 results, 0.25 s apart),
at 120x40. Each edit swaps the chain between two recorded ones with the result cache cleared, so
every result is new; counted from 0.2 s after the edit (its own frame done) until it has settled.
Prints the layouts per edit and their milliseconds, median per variant.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "tui")]
os.environ.setdefault("KERNEL_TUI_STATE_DIR", tempfile.mkdtemp(prefix="kt-layouts-"))

from textual.screen import Screen  # noqa: E402
from textual.widgets import Static  # noqa: E402
from tui_helpers import TEST_TIMING, replay_command, settled, wait_for  # noqa: E402

from tui.app import KernelTuiApp  # noqa: E402
from tui.widgets.editor import ChainEditor  # noqa: E402

CHAINS = ("(a * b).sum()", "(a + b).relu()")


class LayoutClock:
    """Counts the screen's layouts and their time while ``on``."""

    def __init__(self) -> None:
        self.on = False
        self.count = 0
        self.seconds = 0.0
        original = Screen._refresh_layout
        clock = self

        def timed(screen: Screen, *args: object, **kwargs: object) -> object:
            begin = time.perf_counter()
            try:
                return original(screen, *args, **kwargs)
            finally:
                if clock.on:
                    clock.count += 1
                    clock.seconds += time.perf_counter() - begin

        Screen._refresh_layout = timed  # type: ignore[method-assign]

    def take(self) -> tuple[int, float]:
        taken = (self.count, self.seconds)
        self.count, self.seconds = 0, 0.0
        return taken


def every_change_laid_out(enabled: bool, original=Static.update) -> None:  # noqa: ANN001
    """``Static.update`` as Textual has it (a layout each time), or as it is."""

    def laid_out(self: Static, content: object = "", *, layout: bool = True) -> None:
        original(self, content, layout=True)

    Static.update = laid_out if enabled else original  # type: ignore[method-assign]


async def measure(edits: int) -> dict[str, list[tuple[int, float]]]:
    clock = LayoutClock()
    app = KernelTuiApp(
        chain=CHAINS[1],
        worker_command=replay_command("modes", "mul_sum", delay=0.25),
        workspace_path=Path(tempfile.mktemp(suffix=".json")),
        timing=TEST_TIMING,
    )
    got: dict[str, list[tuple[int, float]]] = {"repainted in place": [], "every change laid out": []}
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: settled(app), 60)
        for i in range(edits):
            variant = list(got)[i % 2]
            every_change_laid_out(variant == "every change laid out")
            app.session.book.cache.clear()
            app.query_one(ChainEditor).text = CHAINS[i % 2]
            await pilot.pause(0.2)
            clock.take()
            clock.on = True
            await wait_for(pilot, lambda: settled(app), 60)
            await pilot.pause(0.1)
            clock.on = False
            got[variant].append(clock.take())
    every_change_laid_out(False)
    return got


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edits", type=int, default=12, help="edits in all, the two variants in turns")
    args = parser.parse_args()
    got = asyncio.run(measure(args.edits))
    for variant, runs in got.items():
        counts = [count for count, _ in runs]
        ms = [seconds * 1e3 for _, seconds in runs]
        print(
            f"{variant:22} layouts per edit median {statistics.median(counts):4.1f} "
            f"(min {min(counts)}, max {max(counts)}), their ms median {statistics.median(ms):5.1f} "
            f"(min {min(ms):.1f}, max {max(ms):.1f}), n={len(runs)}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
