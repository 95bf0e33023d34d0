"""``kernel-tui``: the app, or ``kernel-tui profile ...`` (headless, no textual imported).

kernel-tui [CHAIN] [--device cpu|cuda:N] [--sizes 1e2,1e4,...] [--dtype fp32|bf16|fp16]
           [--modes both|eager|compiled] [--n SIZE] [--reps N]
           [--worker-cmd CMD] [--workspace FILE] [--replay REPORT.json ...]
kernel-tui profile CHAIN [...]      # tables or JSON, no TUI (see kernel-tui profile --help)
kernel-tui demo [--device cpu|cuda:N] [--dtype ...] [--reps N] [--worker-cmd CMD] [--replay REPORT.json ...]
                                    # a guided walk through the story: space/right next, left back, q quit
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import os
import shlex
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from probes.link.worker_process import EarlyWorker

FRAME_RATE = "240"
"""Textual's cap on frames per second (``TEXTUAL_FPS``, 60 by default). A change reaches the screen
at the next tick of the screen's update timer, one or two periods after it is made: at 60 fps the
rows of a compile-cache hit were drawn ~45 ms after the key on the CPU machine, ~21 ms at 240
(timed in-process). Frames are drawn only when something changed, so idling costs nothing more; a
user's own ``TEXTUAL_FPS`` wins."""


def build_parser() -> argparse.ArgumentParser:
    from probes.chain.dtype_names import DTYPES  # noqa: PLC0415 (keep `profile` free of app imports)

    parser = argparse.ArgumentParser(
        prog="kernel-tui",
        description="A live terminal profiler for PyTorch kernels: eager vs torch.compile, counts, device "
        "time, bytes and bandwidth. 'kernel-tui profile ...' runs headless.",
    )
    parser.add_argument("chain", nargs="?", help="open the app with this op chain, e.g. '(a + b).relu()'")
    parser.add_argument("--device", help="cpu, cuda or cuda:N (default: the worker's, CUDA when present)")
    parser.add_argument("--sizes", help="the sweep's sizes, comma-separated: 1e2,1e4,1e6 (1M and 1_000_000 work)")
    parser.add_argument("--dtype", choices=DTYPES, help="dtype of the default inputs a, b, c")
    parser.add_argument("--modes", choices=("both", "eager", "compiled", "static+dynamic"), help="what to measure")
    parser.add_argument("--n", dest="focus_size", help="the size profiled on every edit (default 1e6)")
    parser.add_argument("--reps", type=int, help="timing reps (default: sized to the kernel time)")
    parser.add_argument(
        "--worker-cmd", help="start the worker with this command, e.g. 'ssh gpu-box python -m probes.engine.worker'"
    )
    parser.add_argument("--workspace", type=Path, help="the workspace file to open (default: the autosaved one)")
    parser.add_argument(
        "--replay",
        type=Path,
        nargs="+",
        metavar="REPORT",
        help="answer from recorded reports (kernel-tui profile --json) instead of measuring",
    )
    parser.add_argument("--export-dir", type=Path, help="where exports go (default: the current directory)")
    return parser


def build_app(argv: list[str]):  # noqa: ANN201 (KernelTuiApp, imported lazily)
    """The app for ``kernel-tui ARGV`` (argparse exits with a one-line message on bad input)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.reps is not None and not 1 <= args.reps <= 10_000:
        parser.error("--reps: give a number between 1 and 10000")
    command = _worker_command(parser, args)
    early, early_compiler = _start_workers(command)
    with _killed_unless_built(early, early_compiler):
        from probes.link.summary import parse_size, parse_sizes  # noqa: PLC0415

        try:
            sizes = parse_sizes(args.sizes) if args.sizes else None
            focus = parse_size(args.focus_size) if args.focus_size else None
        except ValueError as exc:
            parser.error(str(exc))
        chain = args.chain.replace("\\n", "\n").replace(";", "\n") if args.chain is not None else None

        from tui.app import KernelTuiApp  # noqa: PLC0415 (textual only for the app)
        from tui.workspace_file import WorkspaceRefused  # noqa: PLC0415

        try:
            return KernelTuiApp(
                chain=chain,
                worker_command=command,
                early_worker=early,
                early_compiler=early_compiler,
                workspace_path=args.workspace,
                device=args.device,
                sizes=sizes,
                dtype=args.dtype,
                modes=args.modes,
                focus_size=focus,
                reps=args.reps,
                export_dir=args.export_dir,
            )
        except WorkspaceRefused as exc:
            parser.exit(2, f"kernel-tui: {exc}\n")


def build_demo_parser() -> argparse.ArgumentParser:
    from probes.chain.dtype_names import DTYPES  # noqa: PLC0415

    parser = argparse.ArgumentParser(
        prog="kernel-tui demo",
        description="A guided walk through the story, one live measurement per step "
        "(space/right: next, left: back, q: quit).",
    )
    parser.add_argument("--device", help="cpu, cuda or cuda:N (default: the worker's, CUDA when present)")
    parser.add_argument("--dtype", choices=DTYPES, default="fp32", help="dtype of the inputs (default fp32)")
    parser.add_argument("--reps", type=int, help="timing reps (default: sized to the kernel time)")
    parser.add_argument(
        "--worker-cmd", help="start the worker with this command, e.g. 'ssh gpu-box python -m probes.engine.worker'"
    )
    parser.add_argument(
        "--replay",
        type=Path,
        nargs="+",
        metavar="REPORT",
        help="answer from recorded reports (kernel-tui profile --json) instead of measuring",
    )
    return parser


def _worker_command(parser: argparse.ArgumentParser, args: argparse.Namespace) -> list[str] | str | None:
    command: list[str] | str | None = args.worker_cmd
    if args.replay:
        missing = [str(p) for p in args.replay if not p.is_file()]
        if missing:
            parser.error(f"--replay: no such file: {', '.join(missing)}")
        command = [sys.executable, "-m", "probes.link.replay", *map(str, args.replay)]
    elif isinstance(command, str):
        try:
            if not shlex.split(command):
                parser.error("--worker-cmd: empty command")
        except ValueError as exc:
            parser.error(f"--worker-cmd: {exc}")
    return command


def _start_workers(command: list[str] | str | None):  # noqa: ANN202 (EarlyWorkers, imported lazily)
    """The worker (and the compile worker where one is wanted), started now, before Textual is
    imported: torch imports while the app starts. None for one that cannot be started: the app
    tries again and says why on screen. Whatever the app imports before this delays the first
    rows as much: the arguments checked here need no more than the worker's command."""
    from probes.link.worker_process import EarlyWorker, compile_worker_wanted  # noqa: PLC0415

    started = []
    for wanted in (True, compile_worker_wanted(command)):
        try:
            started.append(EarlyWorker(command) if wanted else None)
        except OSError:
            started.append(None)
    return started[0], started[1]


@contextlib.contextmanager
def _killed_unless_built(*workers: EarlyWorker | None) -> Iterator[None]:
    """The early workers, killed when the app is not built after all (a bad argument's exit)."""
    try:
        yield
    except BaseException:
        for worker in workers:
            if worker is not None:
                worker.kill()
        raise


def build_demo(argv: list[str]):  # noqa: ANN201 (DemoApp, imported lazily)
    """The app for ``kernel-tui demo ARGV``."""
    parser = build_demo_parser()
    args = parser.parse_args(argv)
    if args.reps is not None and not 1 <= args.reps <= 10_000:
        parser.error("--reps: give a number between 1 and 10000")
    command = _worker_command(parser, args)
    early, early_compiler = _start_workers(command)

    from tui.demo import DemoApp  # noqa: PLC0415

    return DemoApp(
        worker_command=command,
        early_worker=early,
        early_compiler=early_compiler,
        device=args.device,
        dtype=args.dtype,
        reps=args.reps,
    )


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "profile":
        from probes.cli import main as profile_main  # noqa: PLC0415 (headless: no textual import)

        return profile_main(argv[1:])
    os.environ.setdefault("TEXTUAL_FPS", FRAME_RATE)  # before Textual is imported
    # Start-up makes a few hundred thousand objects that live as long as the app: the collector's
    # passes over them took ~30 ms of the first frame. It is off until that frame is drawn (the
    # apps' on_ready), and what start-up made is left out of its later passes (frozen).
    gc.disable()
    if argv and argv[0] == "demo":
        app = build_demo(argv[1:])
    else:
        app = build_app(argv)
    gc.freeze()
    result = app.run()
    return result if isinstance(result, int) else 0


def run() -> None:
    """The ``kernel-tui`` command: ``main()``, then exit without the interpreter's teardown of
    textual, rich and asyncio (a tenth of a second or more): the terminal is restored and the worker
    stopped already, so the prompt comes back at once."""
    code = main()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError):  # a closed pipe (kernel-tui profile ... | head)
            stream.flush()
    os._exit(code)


if __name__ == "__main__":
    run()
