"""Take a real screenshot (SVG) of the app, headless: ``python -m tui.screenshot OUT.svg [options] -- [app args]``.

It starts the app as ``kernel-tui [app args]`` would (real worker, or ``--replay``), waits for the
first results, optionally runs the sweep and presses keys, then saves what the screen shows with
Textual's own ``save_screenshot``. For the README's screenshots, on the CPU or on a GPU::

    python -m tui.screenshot screenshots/cpu_main.svg -- "(a + b).relu()" --device cpu
    python -m tui.screenshot screenshots/cpu_sweep.svg --sweep -- "(a + b).relu()" --device cpu --sizes 1e2,1e4,1e6,1e7
    python -m tui.screenshot screenshots/cpu_demo.svg --size 100x30 --demo-step 4 -- demo --device cpu
"""

from __future__ import annotations

import argparse
import asyncio
import io
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from textual.app import App

from probes.link.state_files import write_private_file
from tui.sixteen_colours import XTERM_THEME, has_sixteen_colours
from tui.textual_compat import whole_screen

if TYPE_CHECKING:
    from tui.demo import DemoApp


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    app_args: list[str] = []
    if "--" in argv:
        cut = argv.index("--")
        argv, app_args = argv[:cut], argv[cut + 1 :]
    parser = argparse.ArgumentParser(prog="python -m tui.screenshot", description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="the SVG file to write")
    parser.add_argument("--size", default="160x50", help="terminal size WxH (default 160x50)")
    parser.add_argument("--sweep", action="store_true", help="run the sweep and wait for it")
    parser.add_argument(
        "--rerun", action="store_true", help="profile once more (ctrl+r) before the picture: a warm worker's numbers"
    )
    parser.add_argument("--keys", default="", help="comma-separated keys to press before the picture (e.g. v,v)")
    parser.add_argument(
        "--demo-step",
        type=int,
        default=1,
        help="with '-- demo ...': walk to this step (1-based), each one measured, then take the picture",
    )
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds to wait for results")
    parser.add_argument(
        "--colours",
        choices=("true", "16"),
        default="true",
        help="the terminal's colours: true colour (default) or 16 (as TERM=xterm; xterm's palette in the picture)",
    )
    args = parser.parse_args(argv)
    if args.colours == "16":  # read by the app's console when it is made
        os.environ["TERM"] = "xterm"
        os.environ.pop("COLORTERM", None)
    width, height = (int(x) for x in args.size.lower().split("x"))

    from tui.__main__ import build_app, build_demo

    if app_args and app_args[0] == "demo":
        return _demo(build_demo(app_args[1:]), args, width, height)
    app = build_app(app_args)
    if app is None:
        return 2
    app.frozen = True  # no clock in the picture

    async def run() -> int:
        async with app.run_test(size=(width, height)) as pilot:
            loop = asyncio.get_running_loop()
            deadline = loop.time() + args.timeout

            async def until(predicate: Callable[[], bool]) -> bool:
                while not predicate():
                    if loop.time() > deadline:
                        return False
                    await pilot.pause(0.2)
                return True

            def measured() -> bool:
                """Fresh rows (or failures) in every mode, or a chain with an error: nothing to wait for."""
                if app.session.parse_error is not None:
                    return True
                view = app.session.focus_view(loop.time())
                return not app.session.running() and all(v.fresh or v.failure for v in view.modes)

            ok = await until(measured)
            if ok and args.rerun:
                app.main.action_run_now()
                ok = await until(measured)
            if ok and args.sweep:
                await pilot.press("escape", "s")
                ok = await until(lambda: app.session.sweep is not None and app.session.sweep.run.done)
            for key in filter(None, (k.strip() for k in args.keys.split(","))):
                await pilot.press(key)
                ok = ok and await until(measured)  # a key may re-measure (b: grad)
            for _ in range(3):
                await pilot.pause()
            write_private_file(args.out, picture(app))
            await app.action_quit()
            print(args.out if ok else f"{args.out} (timed out waiting for results)")
            return 0 if ok else 1

    return asyncio.run(run())


def picture(app: App[Any]) -> str:
    """The screen as SVG: Textual's own screenshot; on a 16-colour terminal, the colours the
    terminal shows, in xterm's palette (``tui.sixteen_colours``)."""
    screen = whole_screen(app) if has_sixteen_colours(app.console) else None
    if screen is None:
        return app.export_screenshot()
    width, height = app.size
    console = Console(
        width=width, height=height, file=io.StringIO(), force_terminal=True, color_system="standard", record=True
    )
    console.print(screen)
    return console.export_svg(title=app.title, theme=XTERM_THEME)


def _demo(app: DemoApp, args: argparse.Namespace, width: int, height: int) -> int:
    app.frozen = True

    async def run() -> int:
        async with app.run_test(size=(width, height)) as pilot:
            loop = asyncio.get_running_loop()
            deadline = loop.time() + args.timeout

            ok = True
            for step in range(max(1, min(args.demo_step, len(app.steps)))):
                if step:
                    await pilot.press("space")
                while not app.step_done():
                    if loop.time() > deadline:
                        ok = False
                        break
                    await pilot.pause(0.2)
            for _ in range(3):
                await pilot.pause()
            write_private_file(args.out, picture(app))
            print(app.caption())
            print(args.out if ok else f"{args.out} (timed out waiting for results)")
            await pilot.press("q")
            return 0 if ok else 1

    return asyncio.run(run())


if __name__ == "__main__":
    sys.exit(main())
