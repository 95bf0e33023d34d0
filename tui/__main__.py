"""``kernel-tui``: the app, or ``kernel-tui profile ...`` (headless, no textual imported).

kernel-tui [CHAIN | FILE.py:NAME] [--input DECL ...] [--device [HOST:]DEVICE,...] [--host NAME=CMD ...] [--sizes ...]
           [--dtype fp32|bf16|fp16] [--modes eager,compiled] [--n SIZE] [--reps N] [--grad] [--spread]
           [--worker-cmd CMD] [--workspace FILE] [--replay REPORT.json ...] [--export-dir DIR]
kernel-tui profile CHAIN [...]      # tables or JSON, no TUI (see kernel-tui profile --help)
kernel-tui demo [--device cpu|cuda:N] [--dtype ...] [--reps N] [--worker-cmd CMD] [--replay REPORT.json ...]
                                    # a guided walk through the story: space/right next, left back, q quit
kernel-tui worker                   # a worker on stdin/stdout: --worker-cmd "ssh BOX kernel-tui worker"

The settings flags are ``probes.link.settings.FLAGS``, the one table the headless command uses too:
each is parsed into the one settings model (``Settings``) that the workspace saves and the worker
checks, so ``--modes`` takes the same names, and refuses the same values, everywhere.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import gc
import os
import re
import shlex
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

if TYPE_CHECKING:
    from probes.link.protocol import SourceRef
    from probes.link.settings import DeviceEntry
    from probes.link.worker_process import EarlyWorker
    from tui.app import KernelTuiApp
    from tui.demo import DemoApp

SUBCOMMANDS: dict[str, str] = {
    "profile": "measure without the app: tables or JSON, for scripts and CI",
    "demo": "a guided walk through the story, one live measurement per step",
    "worker": 'a measuring worker on stdin/stdout, for --worker-cmd "ssh BOX kernel-tui worker"',
}
USAGE = """\
kernel-tui [CHAIN] [options]          the app
       kernel-tui profile CHAIN [options]    headless (kernel-tui profile --help)
       kernel-tui demo [options]             the guided demo (kernel-tui demo --help)
       kernel-tui worker                     a worker for --worker-cmd (kernel-tui worker --help)"""
EXPORT_DIR_HELP = (
    "where exports go (default: the current directory; when that is inside kernel-tui's own source "
    "checkout, as with 'make run', the exports folder of kernel-tui's user data directory, e.g. "
    "~/.local/share/kernel-tui/exports); each saved file is shown with its full path"
)
APP_SETTINGS = ("device", "sizes", "dtype", "modes", "focus_size", "reps", "grad", "spread")
"""The settings ``kernel-tui`` takes flags for (``probes.link.settings.FLAGS``); the others keep
the workspace's values."""
APP_NOTES = {
    "device": "or a comma list of [HOST:]DEVICE, e.g. cpu,gpu2:cuda (HOST from --host), each measured by its own "
    "worker in parallel, shown side by side (d switches the device the details follow)",
    "sizes": "without --n the first is also the size measured on every edit",
    "spread": "each point of the sweep's table and chart marked with its device; the size measured on every "
    "edit goes to the first device that answers alone; kept with the device list (--device without --spread "
    "measures side by side)",
    "modes": "the app shows one or two side by side: eager, a compiled mode, eager and a compiled mode "
    "(eager,compiled), or a compiled mode and dynamic (compiled,dynamic)",
}
DEMO_SETTINGS = ("device", "dtype", "reps")
"""The settings ``kernel-tui demo`` takes flags for; each step says its own sizes and modes."""
SETTINGS_EPILOG = "settings: one not given keeps the workspace's value (the defaults above are a new workspace's)"

FRAME_RATE = "240"
"""Textual's cap on frames per second (``TEXTUAL_FPS``, 60 by default). A change reaches the screen
at the next tick of the screen's update timer, one or two periods after it is made, so a higher cap
brings new rows to the screen sooner. Frames are drawn only when something changed, so idling costs
nothing more; a user's own ``TEXTUAL_FPS`` wins."""


def build_parser() -> argparse.ArgumentParser:
    from probes.link.help_text import HelpFormatter, SafeParser  # keep `profile` free of app imports
    from probes.link.settings import add_flags, add_host_flag  # light: names and limits

    commands = "\n".join(f"  {name:<9}{what} (kernel-tui {name} --help)" for name, what in SUBCOMMANDS.items())
    parser = SafeParser(
        prog="kernel-tui",
        usage=USAGE,
        description="A live terminal profiler for PyTorch kernels: eager vs torch.compile, counts, device "
        "time, bytes and bandwidth.",
        epilog=f"{SETTINGS_EPILOG}\n\ncommands:\n{commands}",
        formatter_class=HelpFormatter,
    )
    parser.add_argument(
        "chain",
        nargs="?",
        help="open the app with this op chain, e.g. '(a + b).relu()'; or FILE.py:NAME, a function or "
        "nn.Module of your own file, re-measured each time the file is saved",
    )
    parser.add_argument(
        "--input",
        action="append",
        default=[],
        metavar="DECL",
        help="declare an input, e.g. 'x: [N, 4096] bf16' (repeatable): the inputs of FILE.py:NAME, in order",
    )
    add_flags(parser, APP_SETTINGS, APP_NOTES)
    add_host_flag(parser)
    _add_worker_flags(parser)
    parser.add_argument(
        "--workspace", type=Path, metavar="FILE", help="the workspace file to open (default: the autosaved one)"
    )
    parser.add_argument("--export-dir", type=Path, metavar="DIR", help=EXPORT_DIR_HELP)
    return parser


def _add_worker_flags(parser: argparse.ArgumentParser) -> None:
    """``--worker-cmd`` and ``--replay``: where the app and the demo get their measurements."""
    parser.add_argument(
        "--worker-cmd",
        metavar="CMD",
        help="start the worker with this command, e.g. 'ssh gpu-box python -P -m probes.engine.worker'",
    )
    parser.add_argument(
        "--replay",
        type=Path,
        nargs="+",
        metavar="REPORT",
        help="answer from recorded reports (kernel-tui profile --json) instead of measuring",
    )


def _given(parser: argparse.ArgumentParser, args: argparse.Namespace, settings: tuple[str, ...]) -> dict[str, Any]:
    """The settings the flags of ``settings`` give (checked values by name); a refusal is a
    one-line usage error naming the flag."""
    from probes.link.settings import SettingError, flags_given

    try:
        return flags_given(args, settings)
    except SettingError as exc:
        parser.error(str(exc))


def _fleet(
    parser: argparse.ArgumentParser, args: argparse.Namespace
) -> tuple[list[DeviceEntry] | None, dict[str, str] | None]:
    """The devices ``--device`` gives and the hosts ``--host`` gives (None for one not given: the
    workspace's; a host an entry names may be the workspace's too); a refusal is one usage line."""
    from probes.link.settings import SettingError, check_hosts, parse_device_entries

    try:
        entries = parse_device_entries(args.device) if args.device is not None else None
    except SettingError as exc:
        parser.error(f"--device: {exc}")
    try:
        return entries, (check_hosts((), args.host) if args.host else None)
    except SettingError as exc:
        parser.error(f"--host: {exc}")


def _export_dir(parser: argparse.ArgumentParser, given: Path | None) -> Path:
    """The folder exports go to, absolute so that each saved path is shown in full."""
    from tui.export_dir import default_export_dir

    if given is None:
        return default_export_dir()
    folder = given.expanduser().absolute()
    if folder.exists() and not folder.is_dir():
        parser.error(f"--export-dir: {folder} is not a folder")
    return folder


def build_app(argv: list[str], *, start_screen: bool = False) -> KernelTuiApp:  # imported lazily
    """The app for ``kernel-tui ARGV`` (argparse exits with a one-line message on bad input);
    ``start_screen``: its first frame is the start screen's (``tui.screens.start``)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    command = _worker_command(parser, args)
    if args.workspace is not None and not args.workspace.is_dir():  # a folder: the app says what to give
        _check_workspace(parser, args.workspace)
    early, early_compiler = _start_workers(command)
    with _killed_unless_built(early, early_compiler):
        from probes.chain.command_line import chain_text  # after the workers start
        from probes.link.settings import SettingError
        from tui.workspace import modes_toggle

        given = _given(parser, args, tuple(name for name in APP_SETTINGS if name != "device"))
        fleet = _fleet(parser, args)
        if fleet[0] is not None:
            given.setdefault("spread", False)  # a device list is given with the way it is measured
        if "modes" in given:
            try:
                modes_toggle(given["modes"])
            except SettingError as exc:
                parser.error(f"--modes: {exc}")
        source = _source(args)
        chain = chain_text(args.chain, args.input) if args.chain is not None and source is None else None

        from tui.app import KernelTuiApp  # textual only for the app
        from tui.workspace_file import WorkspaceRefused

        try:
            return KernelTuiApp(
                chain=chain,
                source=source,
                worker_command=command,
                early_worker=early,
                early_compiler=early_compiler,
                workspace_path=args.workspace,
                settings=given,
                devices=fleet[0],
                hosts=fleet[1],
                export_dir=_export_dir(parser, args.export_dir),
                start_screen=start_screen,
            )
        except WorkspaceRefused as exc:
            parser.exit(2, f"kernel-tui: {exc}\n")
        except SettingError as exc:  # a device of a host neither --host nor the workspace defines; --spread
            parser.error(str(exc))  # over devices of mixed kinds


def _source(args: argparse.Namespace) -> SourceRef | None:  # imported lazily
    """The file and name given instead of a chain, its path absolute where the file is on this
    machine; as given where it is not (over ``--worker-cmd`` the path is the worker machine's)."""
    from probes.link.source_spec import parse_source_spec

    ref = parse_source_spec(args.chain, args.input)
    if ref is not None and Path(ref.path).expanduser().is_file():
        ref.path = str(Path(ref.path).expanduser().resolve())
    return ref


def build_demo_parser() -> argparse.ArgumentParser:
    from probes.link.help_text import HelpFormatter, SafeParser
    from probes.link.settings import add_flags

    parser = SafeParser(
        prog="kernel-tui demo",
        description="A guided walk through the story, one live measurement per step "
        "(space/right: next, left: back, q: quit).",
        formatter_class=HelpFormatter,
    )
    add_flags(parser, DEMO_SETTINGS)
    _add_worker_flags(parser)
    return parser


def _worker_command(parser: argparse.ArgumentParser, args: argparse.Namespace) -> list[str] | str | None:
    from probes.link.worker_process import python_module

    command: list[str] | str | None = args.worker_cmd
    if args.replay:
        for path in args.replay:
            _check_report(parser, path)
        command = python_module("probes.link.replay", *map(str, args.replay))
    elif isinstance(command, str):
        try:
            if not shlex.split(command):
                parser.error("--worker-cmd: empty command")
        except ValueError as exc:
            parser.error(f"--worker-cmd: {exc}")
    return command


def _check_report(parser: argparse.ArgumentParser, path: Path) -> None:
    """A ``--replay`` report, read and parsed here: one that is not a report, or not a regular file
    of bounded size (a FIFO, ``/dev/zero``), is refused in one line (exit 2) before anything
    starts, as a workspace that cannot be used is."""
    from probes.link.protocol import ProtocolError, read_report

    try:
        read_report(path)
    except ProtocolError as exc:
        parser.exit(2, f"{parser.prog}: --replay: {exc}\n")


def _check_workspace(parser: argparse.ArgumentParser, path: Path) -> None:
    """A ``--workspace`` that is not a regular file of bounded size (a FIFO, ``/dev/zero``) is
    refused in one line before the workers start; whether it is a workspace the app can use is
    ``tui.workspace_file``'s to say."""
    from probes.link.safe_files import WORKSPACE_LIMIT_BYTES, UnreadableFile, read_user_bytes

    try:
        read_user_bytes(path, WORKSPACE_LIMIT_BYTES, "the workspace")
    except UnreadableFile as exc:
        if not exc.missing:
            parser.exit(2, f"{parser.prog}: {exc}\n")


def _start_workers(command: list[str] | str | None) -> tuple[EarlyWorker | None, EarlyWorker | None]:
    """The worker (and the compile worker where one is wanted), started now, before Textual is
    imported: torch imports while the app starts. None for one that cannot be started: the app
    tries again and says why on screen. Whatever the app imports before this delays the first
    rows as much: the arguments checked here need no more than the worker's command."""
    from probes.link import fast_paths
    from probes.link.worker_process import EarlyWorker, compile_worker_wanted

    if not fast_paths.enabled("early_worker"):
        return None, None  # the plain path: the app starts its workers once it is built
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


def build_demo(argv: list[str]) -> DemoApp:  # imported lazily
    """The app for ``kernel-tui demo ARGV``."""
    parser = build_demo_parser()
    args = parser.parse_args(argv)
    command = _worker_command(parser, args)
    early, early_compiler = _start_workers(command)
    with _killed_unless_built(early, early_compiler):
        from probes.link.settings import Settings  # after the workers start
        from tui.demo import DemoApp

        return DemoApp(
            worker_command=command,
            early_worker=early,
            early_compiler=early_compiler,
            settings=Settings().given(_given(parser, args, DEMO_SETTINGS)),
        )


def _mistyped_command(word: str) -> str | None:
    """The subcommand ``word`` was probably meant to be (``profle`` -> ``profile``), or None. A
    chain is never one bare word near a command's name: its names are inputs like a, b, c."""
    if word in SUBCOMMANDS or not re.fullmatch(r"[A-Za-z][A-Za-z_-]{2,}", word):
        return None
    close = difflib.get_close_matches(word.lower(), SUBCOMMANDS, n=1, cutoff=0.6)
    return close[0] if close else None


def _refuse_mistyped(word: str, meant: str) -> NoReturn:
    sys.stderr.write(
        f"kernel-tui: unknown command '{word}': did you mean 'kernel-tui {meant}'? (see kernel-tui --help)\n"
    )
    raise SystemExit(2)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    from probes.link import fast_paths

    problem = fast_paths.setting_error()
    if problem is not None:  # before anything starts: the worker inherits the setting
        sys.stderr.write(f"kernel-tui: {problem}\n")
        return 2
    if argv and argv[0] == "profile":
        from probes.cli import main as profile_main  # headless: no textual import

        return profile_main(argv[1:])
    if argv and argv[0] == "worker":
        # This process becomes the worker, as the app starts its own: with a safe import path
        # (python -P), so that nothing of the folder it starts in is imported.
        from probes.link.worker_process import python_module

        command = python_module("probes.engine.worker", *argv[1:])
        os.execv(command[0], command)
    meant = _mistyped_command(argv[0]) if argv else None
    if meant is not None:
        _refuse_mistyped(argv[0], meant)
    if fast_paths.enabled("frame_rate"):
        os.environ.setdefault("TEXTUAL_FPS", FRAME_RATE)  # before Textual is imported
    collector_off = fast_paths.enabled("app_collector_off")
    if collector_off:
        # Start-up makes a few hundred thousand objects that live as long as the app: the
        # collector's passes over them delay the first frame. It is off until that frame is drawn
        # (the apps' on_ready), and what start-up made is left out of its later passes (frozen).
        gc.disable()
    if argv and argv[0] == "demo":
        app: DemoApp | KernelTuiApp = build_demo(argv[1:])
    else:
        app = build_app(argv, start_screen=fast_paths.enabled("start_screen"))
    if collector_off:
        gc.freeze()
    result = app.run()
    return result if isinstance(result, int) else 0


def run() -> None:
    """The ``kernel-tui`` command: its imports read from the bytecode cache where Python would
    compile them at every launch (``use_in_this_process``: a setting of the whole process, so made
    here, never by ``main()``, which a notebook or a test may call); ``main()``; then exit without
    the interpreter's teardown of textual, rich and asyncio (a tenth of a second or more): the
    terminal is restored and the worker stopped already, so the prompt comes back at once."""
    argv = sys.argv[1:]
    if not (argv and argv[0] == "worker"):  # the worker's own start has its cache (with_bytecode_cache)
        from probes.link.bytecode_cache import use_in_this_process

        use_in_this_process(("probes",) if argv and argv[0] == "profile" else ("probes", "tui", "textual"))
    code = main()
    from probes.link import fast_paths

    if not fast_paths.enabled("quick_quit"):
        raise SystemExit(code)
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError):  # a closed pipe (kernel-tui profile ... | head)
            stream.flush()
    os._exit(code)


if __name__ == "__main__":
    run()
