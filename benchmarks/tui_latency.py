"""What a user feels, measured in a real terminal: the real app in tmux, typed into at a human rate.

    python benchmarks/tui_latency.py [--device cpu|cuda] [--n 1e4] [--edits 5] [--out FILE]
                                     [--only frame,edit,save,cold,sweep,quit] [--poll-ms MS]
                                     [--fast-paths on|off|on,off|each] [--launches N]

Each figure is timed from the user's side of the screen: tmux capture-pane, polled every --poll-ms
(2 ms on a machine of 8 cores or more; 10 ms on fewer, where the polling would take the cores the
app and its workers run on), a figure read once the capture that shows it has ended, so that it
holds up to a poll and a capture more than the screen took. Each is printed with its spread,
beside what it is compared with, measured in the same run:
- frame: launch -> first frame, and launch -> first eager rows (5 launches), beside the first
  frame of a minimal Textual app (benchmarks/textual_floor.py), the floor under the app's, the
  headless profile of the same chain (whole process) and a bare script that runs it once;
- edit: last key -> new eager rows, -> new compiled rows and -> their wall time (the compiled rows
  show before it is timed), for chains never compiled before and
  for chains compiled earlier in the session (compile-cache hits), typing at 30 ms a key, then for
  one more new chain after a pause (--pause-s, 20 s: the app, its workers and the device idle, as a
  user thinking); compared with a bare torch.compile + first call of a sibling of each new chain
  in a warm process, run right after the app's rows of that chain (in turns: the machine's speed
  drifts from minute to minute), chain by chain and median against median;
- save: the app on a function of a file (``kernel-tui model.py:block``); the file rewritten with a
  new op (as an editor saves it: a new file renamed over the old) -> the new version's eager rows,
  -> its compiled rows, with no key pressed (--edits saves);
- cold: launch with empty Inductor/Triton caches -> first compiled rows, against the headless
  compiled profile and a bare first compile in a fresh process, each with empty caches, in turns
  (--cold-rounds; after one headless profile that reads them all from disk into the system's cache);
- sweep: s -> the whole sweep on screen, each in a freshly started app (warm disk caches; --sweeps);
- quit: q -> the program gone (and no worker left) when idle, mid-compile and mid-sweep.

--fast-paths on,off runs each section twice in turns, with the start-up and latency tricks on and
with all of them off (KERNEL_TUI_FAST_PATHS=0, probes.link.fast_paths), and prints what the tricks
save on each figure a user feels, all together.

--fast-paths each measures what each trick buys on its own (leave-one-out): all tricks on, then each
trick turned off alone (probes.link.fast_paths.TRICKS), in turns, each in a fresh app, on the
figures that trick claims (of frame: first frame, first eager rows; edit: new and cache-hit eager and
compiled rows, --edits chains; quit: q -> exit, idle); --launches rounds (default 3), --only to
narrow the sections. It prints, per trick and figure, turned off minus all on round by round (median,
p25-p75, n) and a verdict: buys >= 20 ms, < 20 ms, or within noise (the spread wider than the
difference). Each round takes about 25 fresh apps on the CPU (a few minutes on 2 cores).

The app's sources are compiled to bytecode first, as an installed tool's are; whether torch's own
modules import from bytecode is recorded (``torch_bytecode``, ``pycache_prefix``), and where the
worker's comes from (``worker_bytecode``: a torch without it gets a cache, probes.link.bytecode_cache,
which the frame section's first launch lives long enough to fill, as a user's first session would).
"""

from __future__ import annotations

import argparse
import compileall
import datetime
import json
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "e2e")]

from app_terminal import pane  # noqa: E402
from terminal import Terminal, TerminalError, alive  # noqa: E402

from probes.link.bytecode_cache import (  # noqa: E402
    FILL_ENV,
    cache_allowed,
    compiles_at_every_import,
    has_bytecode,
    with_bytecode_cache,
)
from probes.link.fast_paths import ENV as FAST_PATHS_ENV  # noqa: E402
from probes.link.fast_paths import TRICKS, setting_without  # noqa: E402
from probes.link.summary import parse_size  # noqa: E402

KEY_INTERVAL_S = 0.030
OPS = (
    "tanh",
    "sigmoid",
    "exp",
    "sin",
    "cos",
    "neg",
    "sqrt",
    "abs",
    "log1p",
    "expm1",
    "log",
    "reciprocal",
    "sinh",
    "cosh",
    "atan",
    "log2",
    "exp2",
    "floor",
    "ceil",
    "trunc",
)
"""Each gives its own eager kernel and fused kernel name, so new rows can be told from old ones."""
TEMPLATE = "(a + b).{op}()"
PAUSE_OP = "rsqrt"
"""The edit after a pause: none of OPS, so its rows are new."""
EDIT_FIGURES = tuple(
    f"{round_}_{figure}"
    for round_ in ("new", "hit", "after_pause")
    for figure in ("eager", "compiled", "compiled_wall")
)
"""Per round, last key -> the eager rows, the compiled rows (they show before their wall time is
timed, "timing…"), and the compiled wall time, on screen."""
SIBLING = "(a * b).{op}()"
"""The bare compiles' chains: the app's new chains with another op in front, as new to Inductor."""
BARE_OP = "erf"
"""The bare warm-process compile's op: none of OPS, so neither process has compiled its graph."""
CONCLUSION = r"compiled is (not )?faster per call|compiled vs eager per call is within noise"
"""Every conclusion the sweep pane draws once it has the largest size (probes.link.summary.sweep_verdict)."""
INPROC = ROOT / "benchmarks" / "inproc.py"
FLOOR = ROOT / "benchmarks" / "textual_floor.py"


# ---------------------------------------------------------------------------------------------
# Reading the screen
# ---------------------------------------------------------------------------------------------


def mode_block(screen: str, mode: str) -> str:
    """The kernel pane's lines for ``mode`` (from its title line to the next mode's title)."""
    block, inside = [], False
    for line in pane(screen, "kernels"):
        text = line.strip("│ ")
        title = re.match(r"(eager|compiled|max-autotune|reduce-overhead|dynamic)\b\s+\d", text)
        if title:
            inside = title.group(1) == mode
            continue
        if inside:
            block.append(text)
    return "\n".join(block)


def rows_show(op: str, mode: str) -> Callable[[str], bool]:
    """The screen shows fresh ``mode`` rows of the chain with ``op``."""

    def check(screen: str) -> bool:
        kernels = "\n".join(pane(screen, "kernels"))
        if "STALE" in kernels or not kernels:
            return False
        return mode_rows_show(op, mode)(screen)

    return check


def mode_rows_show(op: str, mode: str) -> Callable[[str], bool]:
    """The ``mode`` rows of the chain with ``op`` are on screen, whatever the other modes show (a
    slower compile's rows of the last version, marked stale meanwhile)."""

    def check(screen: str) -> bool:
        block = mode_block(screen, mode)
        if mode == "eager":
            return re.search(rf"(aten::{op}\b|{op}_kernel|<{op}\b|\b{op}\b)", block, re.IGNORECASE) is not None
        return re.search(rf"fused_(?:\w+_)?{op}(?:_|\b)", block) is not None

    return check


def wall_time_shows(op: str, mode: str) -> Callable[[str], bool]:
    """The screen shows fresh ``mode`` rows of the chain with ``op``, with their wall time (no
    "wall timing…" in the kernel pane, whose mode titles say it)."""
    rows = rows_show(op, mode)

    def check(screen: str) -> bool:
        return rows(screen) and "timing…" not in "\n".join(pane(screen, "kernels"))

    return check


# ---------------------------------------------------------------------------------------------
# The app in a terminal
# ---------------------------------------------------------------------------------------------


class Session:
    """The app started fresh, with its own state dir (and caches, when asked)."""

    def __init__(
        self,
        args: argparse.Namespace,
        chain: str,
        *,
        own_caches: tuple[str, ...] = (),
        extra: tuple[str, ...] = (),
        state: Path | None = None,
    ) -> None:
        """``own_caches``: of "torchinductor", "triton", the compile caches this app starts empty with
        (inside its state folder, removed with it); ``extra``: more arguments; ``state``: the
        folder (made here by default)."""
        self.state = state or Path(tempfile.mkdtemp(prefix="kt-latency-"))
        environment = {"KERNEL_TUI_STATE_DIR": str(self.state / "state")}
        environment.update({f"{name.upper()}_CACHE_DIR": str(self.state / name) for name in own_caches})
        command = [sys.executable, "-m", "tui", chain, "--device", args.device, "--n", str(args.n), *extra]
        # 120x40: the kernel pane stacks its modes (mode_block reads them one below the other)
        self.term = Terminal(command, width=120, height=40, env=environment, cwd=ROOT, poll_s=args.poll_s)

    def since_start(self) -> float:
        return time.monotonic() - self.term.started_at

    def close(self) -> None:
        self.term.close()
        shutil.rmtree(self.state, ignore_errors=True)


def change_op(term: Terminal, old: str, new: str) -> float:
    """Turn ``(a + b).OLD()`` into ``(a + b).NEW()`` at a human rate; returns the last key's time."""
    term.press("End")
    for _ in range(len(old) + 2):
        time.sleep(KEY_INTERVAL_S)
        term.press("BSpace")
    time.sleep(KEY_INTERVAL_S)
    return term.type_slowly(f"{new}()", KEY_INTERVAL_S)


def spread(values: list[float]) -> dict[str, float | int | None]:
    if not values:
        return {"n": 0, "median": None}
    ordered = sorted(values)
    p90 = ordered[min(len(ordered) - 1, round(0.9 * (len(ordered) - 1)))]
    q = statistics.quantiles(ordered, n=4) if len(ordered) >= 2 else [ordered[0]] * 3
    return {
        "n": len(values),
        "median": statistics.median(values),
        "p25": q[0],
        "p75": q[2],
        "p90": p90,
        "min": ordered[0],
        "max": ordered[-1],
    }


def ms(value: float | None) -> str:
    return "-" if value is None else f"{value * 1e3:.0f} ms"


# ---------------------------------------------------------------------------------------------
# Sections
# ---------------------------------------------------------------------------------------------


BARE_EAGER = """
import sys, torch
n, device = int(float(sys.argv[1])), sys.argv[2]
a, b = torch.randn(n, device=device), torch.randn(n, device=device)
(a + b).relu()
if device.startswith("cuda"):
    torch.cuda.synchronize()
"""
"""A user's own script: import torch, make the inputs, run the chain once."""


def whole_process_s(command: list[str]) -> float:
    """Seconds from start to exit of ``command`` (which must succeed)."""
    begin = time.monotonic()
    subprocess.run(command, cwd=ROOT, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=300)
    return time.monotonic() - begin


def bench_frame(args: argparse.Namespace, report: dict[str, Any]) -> None:
    """The app's first frame and first eager rows, each launch in turns with its references: a
    minimal Textual app's first frame, the headless ``profile`` of the same chain, size and mode
    (whole process), and a bare script that imports torch and runs the chain once."""
    frames, rows, floor, headless, bare = [], [], [], [], []
    filled_after: float | None = None
    chain = TEMPLATE.format(op="relu")
    profile = [sys.executable, "-m", "tui", "profile", chain, "--device", args.device, "--sizes", str(args.n)]
    for i in range(args.launches + 1):  # the first is a warm-up (.pyc, disk caches)
        # as a user's first session would, the first lives until the worker's bytecode is cached
        frame, eager, filled = launch(args, chain, fill_bytecode_cache=not i)
        filled_after = filled if not i else filled_after
        minimal = Terminal([sys.executable, str(FLOOR), chain], width=120, height=40, cwd=ROOT, poll_s=args.poll_s)
        try:
            minimal.wait_for(chain, timeout=30, what="the minimal Textual app's first frame")
            bare_frame = time.monotonic() - minimal.started_at
        finally:
            minimal.close()
        headless_s = whole_process_s([*profile, "--modes", "eager"])
        bare_s = whole_process_s([sys.executable, "-c", BARE_EAGER, str(args.n), args.device])
        if i:
            frames.append(frame)
            rows.append(eager)
            floor.append(bare_frame)
            headless.append(headless_s)
            bare.append(bare_s)
    report["frame"] = {
        "first_frame_s": spread(frames),
        "first_eager_rows_s": spread(rows),
        "minimal_textual_app_first_frame_s": spread(floor),
        "headless_eager_profile_s": spread(headless),
        "bare_torch_script_s": spread(bare),
        "first_frame_over_minimal_app": spread([a / b for a, b in zip(frames, floor, strict=True)]),
        "first_eager_rows_over_headless": spread([a / b for a, b in zip(rows, headless, strict=True)]),
        "first_eager_rows_over_bare_script": spread([a / b for a, b in zip(rows, bare, strict=True)]),
        "bytecode_cache_filled_after_rows_s": filled_after,
    }


def launch(
    args: argparse.Namespace, chain: str, *, fill_bytecode_cache: bool = False
) -> tuple[float, float, float | None]:
    """The app launched on ``chain`` (relu's): seconds to its first frame and to its first eager
    rows; with ``fill_bytecode_cache``, then how long until the worker's bytecode cache is filled."""
    session = Session(args, chain)
    try:
        session.term.wait_for(chain, timeout=30, what="the first frame")
        frame = session.since_start()
        session.term.wait_for(rows_show("relu", "eager"), timeout=120, what="the first eager rows")
        eager = session.since_start()
        filled = wait_for_bytecode_cache(timeout=120) if fill_bytecode_cache else None
    finally:
        session.close()
    return frame, eager, filled


def worker_bytecode() -> str:
    """Where the worker's modules' bytecode comes from, as this run starts."""
    env = with_bytecode_cache(dict(os.environ))
    if has_bytecode("torch"):
        return "torch's own"
    if FILL_ENV in env:
        return "a cache, to be filled by the first launch"
    prefix = env.get("PYTHONPYCACHEPREFIX")
    return f"PYTHONPYCACHEPREFIX={prefix}" if prefix else "none: compiled at every launch"


def textual_bytecode() -> str:
    """Where the app's Textual imports its bytecode from, as this run starts (the minimal Textual
    app has no cache: where Python cannot keep the bytecode, it compiles Textual at every launch)."""
    if has_bytecode("textual"):
        return "Textual's own"
    if not compiles_at_every_import("textual"):
        return "written beside Textual by the first launch"
    if cache_allowed(os.environ):
        return "the app's cache; the minimal app compiles Textual at every launch"
    return "none: compiled at every launch"


def wait_for_bytecode_cache(timeout: float) -> float | None:
    """Seconds until the worker's bytecode cache is filled (0 where it needs none); None: not in time."""
    begin = time.monotonic()
    while FILL_ENV in with_bytecode_cache(dict(os.environ)):
        if time.monotonic() - begin > timeout:
            return None
        time.sleep(0.1)
    return time.monotonic() - begin


def bench_edit(args: argparse.Namespace, report: dict[str, Any]) -> None:
    ops = OPS[: args.edits]
    # Compile caches of its own, empty: a chain compiled by an earlier run of this benchmark on the
    # same machine would otherwise load from them and read as "never compiled". The bare compiles
    # it is compared with start empty too, and run in turns with the app's: each new chain's bare
    # sibling right after the app's rows, so that both see the machine at the same speed.
    session = Session(args, TEMPLATE.format(op="relu"), own_caches=("torchinductor", "triton"))
    results: dict[str, list[float]] = {key: [] for key in EDIT_FIGURES}
    bare: list[float] = []
    try:
        with BareCompiler(args) as compiler:
            term = session.term
            term.wait_for(rows_show("relu", "compiled"), timeout=300, what="the first compiled rows")
            compiler.wait_ready()
            current = "relu"
            rounds = [("new", op) for op in ops] + [("hit", op) for op in ops]
            if args.pause_s:
                rounds.append(("after_pause", PAUSE_OP))
            for round_name, op in rounds:
                if round_name == "after_pause":
                    time.sleep(args.pause_s)  # a user's pause to think: the app, its workers and the device idle
                for figure, seconds in time_edit(term, current, op).items():
                    results[f"{round_name}_{figure}"].append(seconds)
                current = op
                if round_name == "new":
                    bare.append(compiler.compile(SIBLING.format(op=op)))
    finally:
        session.close()
    report["edit"] = {key: spread(values) for key, values in results.items()}
    report["edit"]["bare_compile_warm_process_s"] = spread(bare)
    pairs = list(zip(results["new_compiled"], bare, strict=True))
    report["edit"]["new_compiled_over_bare_in_turns"] = spread([app / own for app, own in pairs])
    report["edit"]["new_chains"] = [
        {"op": op, "app_compiled_rows_s": app, "bare_compile_s": own} for op, (app, own) in zip(ops, pairs, strict=True)
    ]


def time_edit(term: Terminal, old: str, new: str) -> dict[str, float]:
    """Change the chain's op from ``old`` to ``new`` at a human rate; seconds from the last key to
    the eager rows, the compiled rows and the compiled wall time, on screen."""
    last_key = change_op(term, old, new)
    term.wait_for(rows_show(new, "eager"), timeout=120, what=f"eager rows of {new}")
    eager = time.monotonic() - last_key
    term.wait_for(rows_show(new, "compiled"), timeout=300, what=f"compiled rows of {new}")
    compiled = time.monotonic() - last_key
    term.wait_for(wall_time_shows(new, "compiled"), timeout=60, what=f"the compiled wall time of {new}")
    return {"eager": eager, "compiled": compiled, "compiled_wall": time.monotonic() - last_key}


SAVE_FIGURES = ("save_eager", "save_compiled")
"""File saved -> the new version's eager rows, and its compiled rows, on screen."""
SOURCE_TEMPLATE = "import torch\n\n\ndef block(a, b):\n    return (a + b).{op}()\n"


def save_source(path: Path, op: str) -> float:
    """Write the function with ``op`` as an editor saves a file (a new file renamed over the old);
    returns when the save ended."""
    fresh = path.with_suffix(".saving")
    fresh.write_text(SOURCE_TEMPLATE.format(op=op))
    os.replace(fresh, path)
    return time.monotonic()


def bench_save(args: argparse.Namespace, report: dict[str, Any]) -> None:
    state = Path(tempfile.mkdtemp(prefix="kt-latency-"))
    model = state / "model.py"
    save_source(model, "relu")
    inputs = ("--input", "a: [N]", "--input", "b: [N]")
    session = Session(args, f"{model}:block", own_caches=("torchinductor", "triton"), extra=inputs, state=state)
    results: dict[str, list[float]] = {key: [] for key in SAVE_FIGURES}
    try:
        term = session.term
        term.wait_for(rows_show("relu", "compiled"), timeout=300, what="the first compiled rows")
        for op in OPS[: args.edits]:
            saved = save_source(model, op)
            term.wait_for(mode_rows_show(op, "eager"), timeout=120, what=f"eager rows of the saved {op}")
            results["save_eager"].append(time.monotonic() - saved)
            term.wait_for(rows_show(op, "compiled"), timeout=300, what=f"compiled rows of the saved {op}")
            results["save_compiled"].append(time.monotonic() - saved)
            term.wait_for(wall_time_shows(op, "compiled"), timeout=60, what=f"the compiled wall time of {op}")
    finally:
        session.close()
    report["save"] = {key: spread(values) for key, values in results.items()}
    report["save"]["device"] = args.device
    report["save"]["saves"] = [
        {"op": op, "eager_rows_s": eager, "compiled_rows_s": compiled}
        for op, eager, compiled in zip(OPS, results["save_eager"], results["save_compiled"], strict=False)
    ]


def bare_environment(cache: str, fresh_caches: tuple[str, ...]) -> dict[str, str]:
    """A bare compile's environment: torch's bytecode as the app's worker has it (so that the two
    compare compiles, not imports), and ``fresh_caches`` (of "torchinductor", "triton") empty,
    under ``cache``."""
    env = {k: v for k, v in with_bytecode_cache(dict(os.environ)).items() if k != FILL_ENV}
    env.update({f"{name.upper()}_CACHE_DIR": f"{cache}/{name}" for name in fresh_caches})
    return env


class BareCompiler:
    """A warm process of bare ``torch.compile`` + first calls, one chain at a time on request
    (benchmarks/inproc.py bare-compile --serve), with empty compile caches of its own
    (``bare_environment``)."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.cache = tempfile.mkdtemp(prefix="kt-bare-")
        env = bare_environment(self.cache, ("torchinductor", "triton"))
        self.out = Path(self.cache) / "runs.json"
        command = [
            sys.executable,
            str(INPROC),
            "bare-compile",
            "--serve",
            "--json",
            str(self.out),
            "--device",
            args.device,
            "--size",
            str(parse_size(args.n)),
            "--chains",
            TEMPLATE.format(op="relu"),
            TEMPLATE.format(op=BARE_OP),
        ]
        self.process = subprocess.Popen(
            command,
            cwd=ROOT,
            env=env,
            text=True,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )

    def __enter__(self) -> BareCompiler:
        return self

    def __exit__(self, *_: object) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        shutil.rmtree(self.cache, ignore_errors=True)

    def _answer(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            if line.startswith("{"):
                return json.loads(line)
        raise OSError(f"the bare compile process ended (exit {self.process.wait()})")

    def wait_ready(self) -> None:
        """Until its first compiles (a fresh process's, then a warm one's) are done."""
        self._answer()

    def compile(self, chain: str) -> float:
        """Seconds of a bare torch.compile + first call of ``chain``, as the process timed it."""
        assert self.process.stdin is not None
        self.process.stdin.write(chain + "\n")
        self.process.stdin.flush()
        return float(self._answer()["seconds"])


def bare_compile(args: argparse.Namespace, *, fresh_caches: tuple[str, ...]) -> dict[str, Any]:
    """torch.compile + first call in a fresh process: the first chain's is a fresh process's
    (``fresh_process_s``: launch -> its end), then a warm process's compile of an op the app's
    rounds never use (``warm_s``). ``fresh_caches``: of "torchinductor", "triton", the caches it
    starts empty, as the app did (``bare_environment``)."""
    cache = tempfile.mkdtemp(prefix="kt-bare-")
    env = bare_environment(cache, fresh_caches)
    out = Path(tempfile.mkstemp(suffix=".json")[1])
    command = [
        sys.executable,
        str(INPROC),
        "bare-compile",
        "--json",
        str(out),
        "--device",
        args.device,
        "--size",
        str(parse_size(args.n)),
        "--chains",
        TEMPLATE.format(op="relu"),
        TEMPLATE.format(op=BARE_OP),
    ]
    begin = time.monotonic()
    subprocess.run(command, cwd=ROOT, env=env, check=True, capture_output=True, timeout=600)
    process_s = time.monotonic() - begin
    runs = json.loads(out.read_text())["runs"]
    out.unlink()
    shutil.rmtree(cache, ignore_errors=True)
    # launch -> the first compile's end: the process's whole time without the later compiles
    first_done_s = process_s - sum(run["seconds"] for run in runs[1:])
    return {
        "fresh_process_s": first_done_s,
        "process_total_s": process_s,
        "first_s": runs[0]["seconds"],
        "warm_s": [run["seconds"] for run in runs[1:]],
    }


def headless_compiled_profile(args: argparse.Namespace) -> float:
    """Seconds of the headless compiled profile of the cold chain, whole process, with empty
    Inductor/Triton caches of its own."""
    cache = tempfile.mkdtemp(prefix="kt-headless-")
    headless = [sys.executable, "-m", "tui", "profile", TEMPLATE.format(op="relu"), "--device", args.device]
    begin = time.monotonic()
    subprocess.run(
        [*headless, "--sizes", str(args.n), "--modes", "compiled"],
        cwd=ROOT,
        env={**bare_environment(cache, ("torchinductor", "triton")), "KERNEL_TUI_STATE_DIR": f"{cache}/state"},
        check=True,
        capture_output=True,
        timeout=600,
    )
    seconds = time.monotonic() - begin
    shutil.rmtree(cache, ignore_errors=True)
    return seconds


def bench_cold(args: argparse.Namespace, report: dict[str, Any]) -> None:
    """``--cold-rounds`` rounds, each the app, the bare compile and the headless profile in turns,
    every one with empty compile caches. A headless profile first, not counted, reads torch,
    Inductor and Triton from disk into the system's cache: on a fresh box whichever runs first
    pays that (seconds), which would decide the comparison instead of the tools."""
    headless_compiled_profile(args)
    app_s, bare_s, bare_first_s, bare_second_s, headless_s = [], [], [], [], []
    for _ in range(args.cold_rounds):
        session = Session(args, TEMPLATE.format(op="relu"), own_caches=("torchinductor", "triton"))
        try:
            session.term.wait_for(rows_show("relu", "compiled"), timeout=600, what="the first compiled rows")
            app_s.append(session.since_start())
        finally:
            session.close()
        bare = bare_compile(args, fresh_caches=("torchinductor", "triton"))
        bare_s.append(bare["fresh_process_s"])
        bare_first_s.append(bare["first_s"])
        bare_second_s.append(bare["warm_s"][0])
        headless_s.append(headless_compiled_profile(args))
    report["cold"] = {
        "launch_to_first_compiled_rows_s": statistics.median(app_s),
        "headless_compiled_profile_s": statistics.median(headless_s),
        "bare_fresh_process_s": statistics.median(bare_s),
        "bare_first_compile_s": statistics.median(bare_first_s),
        "bare_second_chain_s": statistics.median(bare_second_s),
        "app_over_headless": spread([a / h for a, h in zip(app_s, headless_s, strict=True)]),
        "headless_over_bare": spread([h / b for h, b in zip(headless_s, bare_s, strict=True)]),
        "rounds": {"app_s": app_s, "headless_s": headless_s, "bare_fresh_process_s": bare_s},
    }


def bench_sweep(args: argparse.Namespace, report: dict[str, Any]) -> None:
    times = []
    for _ in range(args.sweeps):
        session = Session(args, TEMPLATE.format(op="relu"))
        try:
            term = session.term
            term.wait_for(rows_show("relu", "compiled"), timeout=300, what="the first compiled rows")
            term.press("Escape")
            begin = time.monotonic()
            term.press("s")
            term.wait_for(lambda s: re.search(CONCLUSION, s) is not None, timeout=300, what="the sweep's conclusion")
            times.append(time.monotonic() - begin)
        finally:
            session.close()
    report["sweep"] = {"s_to_whole_sweep_s": spread(times)}


def quit_in_state(args: argparse.Namespace, state: str) -> dict[str, Any]:
    """q -> the program gone, with the app ``state`` ("idle", "mid-compile", "mid-sweep"), in a
    freshly started app."""
    session = Session(args, TEMPLATE.format(op="relu"))
    term = session.term
    try:
        term.wait_for(rows_show("relu", "compiled"), timeout=300, what="the first compiled rows")
        if state == "mid-compile":  # a constant no cache has seen: a real compile starts
            term.press("End")
            term.type_slowly(f" * {time.time_ns() % 9973 + 2}.5", KEY_INTERVAL_S)
            term.wait_for(
                lambda s: "compil" in "\n".join(pane(s, "kernels")).lower(),
                timeout=60,
                what="the compile in progress",
            )
        workers = term.descendants()
        term.press("Escape")
        # out of the editor (the footer offers q): a q right behind the Escape would be read with
        # it as one escape sequence, ~0.1 s later (Textual's escape delay), which no person sees
        term.wait_for(lambda s: "q Quit" in s.splitlines()[-1], timeout=10, what="the editor left")
        if state == "mid-sweep":
            term.press("s")
            term.wait_for(lambda s: re.search(r"measuring \d+/\d+", s) is not None, timeout=60, what="the sweep")
        begin = time.monotonic()
        term.press("q")
        gone = term.wait_until_exited(timeout=30)
        left = [pid for pid in workers if alive(pid)]
        return {
            "q_to_exit_s": gone,
            "workers_left": len(left),
            "exit_status": term.exit_status(),
            "waited_s": time.monotonic() - begin,
        }
    except TerminalError as exc:
        return {"error": str(exc).splitlines()[0]}
    finally:
        session.close()


def bench_quit(args: argparse.Namespace, report: dict[str, Any]) -> None:
    report["quit"] = {state: quit_in_state(args, state) for state in ("idle", "mid-compile", "mid-sweep")}


SECTIONS = {
    "frame": bench_frame,
    "edit": bench_edit,
    "save": bench_save,
    "cold": bench_cold,
    "sweep": bench_sweep,
    "quit": bench_quit,
}
SAVE_TARGET_S = {"cpu": 0.350, "cuda": 0.150}
"""The median save -> eager rows a user should get: on the CPU at N=1e4, on the H200 for a small function."""


def summary(report: dict[str, Any], worker_bytecode: str, textual: str) -> list[str]:
    lines = [
        f"{name}: {section['error'].splitlines()[0]}"
        for name, section in report.items()
        if isinstance(section, dict) and "error" in section
    ]
    report = {
        name: section for name, section in report.items() if not (isinstance(section, dict) and "error" in section)
    }
    if "frame" in report:
        f = report["frame"]
        lines.append(
            f"launch -> first frame        median {ms(f['first_frame_s']['median'])} "
            f"(p25-p75 {ms(f['first_frame_s'].get('p25'))}-{ms(f['first_frame_s'].get('p75'))})"
        )
        lines.append(
            f"launch -> first frame of a minimal Textual app (the floor) "
            f"median {ms(f['minimal_textual_app_first_frame_s']['median'])}"
        )
        lines.append(
            f"launch -> first eager rows   median {ms(f['first_eager_rows_s']['median'])} "
            f"(p25-p75 {ms(f['first_eager_rows_s'].get('p25'))}-{ms(f['first_eager_rows_s'].get('p75'))})"
        )
        lines.append(
            f"headless profile of the same chain, size and mode, whole process: "
            f"median {ms(f['headless_eager_profile_s']['median'])}; "
            f"bare script (import torch, run the chain once): median {ms(f['bare_torch_script_s']['median'])}"
        )
        for key, what in (
            ("first_frame_over_minimal_app", "first frame / minimal Textual app's"),
            ("first_eager_rows_over_headless", "first eager rows / headless profile"),
            ("first_eager_rows_over_bare_script", "first eager rows / bare script"),
        ):
            r = f[key]
            lines.append(
                f"{what:38} launch by launch: median {r['median']:.2f}x (p25-p75 {r['p25']:.2f}-{r['p75']:.2f}x)"
            )
        filled = f.get("bytecode_cache_filled_after_rows_s")
        lines.append(
            f"the worker's bytecode: {worker_bytecode}"
            + (
                ""
                if not worker_bytecode.startswith("a cache")
                else "; not filled within 120 s"
                if filled is None
                else f"; filled {filled:.1f} s after the first launch's first rows"
            )
        )
        lines.append(f"the app's Textual bytecode: {textual}")
    if "edit" in report:
        e = report["edit"]
        for key in EDIT_FIGURES:
            s = e.get(key)
            if s and s["n"]:
                lines.append(f"last key -> {key:<25} median {ms(s['median'])}  p90 {ms(s.get('p90'))}  (n={s['n']})")
        b = e["bare_compile_warm_process_s"]
        lines.append(
            f"bare torch.compile + first call of the same new chains (a * b in place of a + b), warm process, "
            f"each after the app's: median {ms(b['median'])}  p90 {ms(b.get('p90'))}  (n={b['n']})"
        )
        if e["new_compiled"]["n"] and b["n"]:
            ratio = e["new_compiled"]["median"] / b["median"]
            lines.append(f"new compiled rows / bare compile, median / median: {ratio:.2f}x")
            turns = e.get("new_compiled_over_bare_in_turns")
            if turns:
                lines.append(
                    f"new compiled rows / bare compile, chain by chain: median {turns['median']:.2f}x "
                    f"(p25-p75 {turns['p25']:.2f}-{turns['p75']:.2f}x; target <= 1.20x: "
                    f"{'met' if turns['median'] <= 1.2 else 'MISSED'})"
                )
            whole = e["new_compiled_wall"]["median"] / b["median"]
            lines.append(f"new compiled rows with their wall time / bare compile: {whole:.2f}x")
    if "save" in report:
        for key in SAVE_FIGURES:
            s = report["save"][key]
            if s["n"]:
                lines.append(f"file saved -> {key:<23} median {ms(s['median'])}  p90 {ms(s.get('p90'))}  (n={s['n']})")
        eager = report["save"]["save_eager"]["median"]
        device = str(report["save"]["device"]).split(":")[0]
        target = SAVE_TARGET_S.get(device)
        if eager is not None and target is not None:
            lines.append(f"file saved -> eager rows: target <= {ms(target)}: {'met' if eager <= target else 'MISSED'}")
    if "cold" in report:
        c = report["cold"]
        lines.append(
            f"cold: launch -> first compiled rows {c['launch_to_first_compiled_rows_s']:.2f} s; bare fresh "
            f"process {c['bare_fresh_process_s']:.2f} s (compile + first call {c['bare_first_compile_s']:.2f} s)"
        )
        if "app_over_headless" in c:
            app, bare = c["app_over_headless"], c["headless_over_bare"]
            lines.append(
                f"cold: headless compiled profile, whole process {c['headless_compiled_profile_s']:.2f} s "
                f"(medians of {app['n']} rounds in turns)"
            )
            lines.append(
                f"cold: app first compiled rows / headless round by round: median {app['median']:.2f}x "
                f"(p25-p75 {app['p25']:.2f}-{app['p75']:.2f}x; target <= 1.10x); headless / bare fresh process "
                f"{bare['median']:.2f}x ({bare['p25']:.2f}-{bare['p75']:.2f}x; target <= 1.15x)"
            )
    if "sweep" in report:
        sweep = report["sweep"]["s_to_whole_sweep_s"]
        lines.append(
            f"s -> whole sweep on screen (fresh app) median {ms(sweep['median'])} "
            f"(min {ms(sweep.get('min'))}, max {ms(sweep.get('max'))}, n={sweep['n']})"
        )
    for state, q in report.get("quit", {}).items():
        lines.append(
            f"quit {state:<12} "
            + (
                q["error"]
                if "error" in q
                else f"{ms(q['q_to_exit_s'])}, workers left {q['workers_left']}, exit {q['exit_status']}"
            )
        )
    return lines


# ---------------------------------------------------------------------------------------------
# Each trick on its own
# ---------------------------------------------------------------------------------------------


WORTH_S = 0.020
"""What a trick must save on a figure a user feels to be worth its code."""
ALL_ON = "all on"
TRICK_FIGURES = {
    "frame": ("first_frame", "first_eager_rows"),
    "edit": ("new_eager", "new_compiled", "hit_eager", "hit_compiled"),
    "quit": ("q_to_exit_idle",),
}
"""Per section of the each-trick run, the figures it reads (seconds; an edit's, one per chain)."""
FIGURE_NAMES = {
    "first_frame": "launch -> first frame",
    "first_eager_rows": "launch -> first eager rows",
    "new_eager": "last key -> new eager rows",
    "new_compiled": "last key -> new compiled rows",
    "hit_eager": "last key -> eager rows, hit",
    "hit_compiled": "last key -> compiled rows, hit",
    "q_to_exit_idle": "q -> exit, idle",
}


def launch_figures(args: argparse.Namespace) -> dict[str, list[float]]:
    frame, eager, _ = launch(args, TEMPLATE.format(op="relu"))
    return {"first_frame": [frame], "first_eager_rows": [eager]}


def edit_figures(args: argparse.Namespace) -> dict[str, list[float]]:
    """A fresh app's edits: ``--edits`` new chains, then each again (compile-cache hits). A
    constant of this session's own makes every chain new to the compile caches the run shares."""
    ops = OPS[: args.edits]
    start = f"(a + b * {time.time_ns() % 99991 + 2}.5).relu()"
    session = Session(args, start)
    found: dict[str, list[float]] = {figure: [] for figure in TRICK_FIGURES["edit"]}
    try:
        term = session.term
        term.wait_for(rows_show("relu", "compiled"), timeout=300, what="the first compiled rows")
        current = "relu"
        for round_name, op in [("new", op) for op in ops] + [("hit", op) for op in ops]:
            times = time_edit(term, current, op)
            current = op
            found[f"{round_name}_eager"].append(times["eager"])
            found[f"{round_name}_compiled"].append(times["compiled"])
    finally:
        session.close()
    return found


def quit_figures(args: argparse.Namespace) -> dict[str, list[float]]:
    quit_idle = quit_in_state(args, "idle")
    if "error" in quit_idle:
        raise TerminalError(quit_idle["error"])
    return {"q_to_exit_idle": [quit_idle["q_to_exit_s"]]}


TRICK_SECTIONS: dict[str, Callable[[argparse.Namespace], dict[str, list[float]]]] = {
    "frame": launch_figures,
    "edit": edit_figures,
    "quit": quit_figures,
}


def tricks_of(section: str, device: str, wanted: list[str] | None = None) -> list[str]:
    """The tricks (of ``wanted``; default all) that claim to save a figure of ``section`` and act
    on ``device``."""
    kind = device.split(":")[0]
    return [
        name
        for name, trick in TRICKS.items()
        if section in trick.figures and kind in trick.devices and (wanted is None or name in wanted)
    ]


def verdict(difference: dict[str, Any]) -> str:
    """Whether turning a trick off costs a figure WORTH_S or more, read from the differences'
    spread (turned off minus all on, in turns)."""
    if not difference["n"]:
        return "not measured"
    median, width = difference["median"], difference["p75"] - difference["p25"]
    if width > abs(median):
        return "within noise (spread wider than the difference)"
    return f"buys >= {WORTH_S * 1e3:.0f} ms" if median >= WORTH_S else f"< {WORTH_S * 1e3:.0f} ms"


def trick_verdict(per_figure: dict[str, str]) -> str:
    """A trick buys its time if it saves WORTH_S on any figure it claims; else it is within noise
    if any figure is, else it buys less."""
    verdicts = list(per_figure.values())
    for kind in ("buys", "within noise", "<"):
        found = next((v for v in verdicts if v.startswith(kind)), None)
        if found:
            return found
    return "not measured"


def bench_each_trick(args: argparse.Namespace, sections: list[str]) -> dict[str, Any]:
    """All tricks on, and each trick turned off alone, in turns (the order rotated each round, so
    that the machine's drift hits every setting alike), on the figures of ``sections`` that the
    trick claims (fast_paths.TRICKS); ``--launches`` rounds, each a fresh app per setting and
    section. The compile caches are the run's own, warmed by a first launch and quit."""
    cache = Path(tempfile.mkdtemp(prefix="kt-each-"))
    saved = {name: os.environ.get(name) for name in (FAST_PATHS_ENV, "TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR")}
    os.environ.update(
        {"TORCHINDUCTOR_CACHE_DIR": str(cache / "torchinductor"), "TRITON_CACHE_DIR": str(cache / "triton")}
    )
    os.environ[FAST_PATHS_ENV] = setting_without([])
    samples: dict[str, dict[str, list[dict[str, list[float]]]]] = {
        section: {setting: [] for setting in [ALL_ON, *tricks_of(section, args.device, args.tricks)]}
        for section in sections
    }
    errors: list[str] = []
    begin = time.monotonic()
    try:
        launch(args, TEMPLATE.format(op="relu"), fill_bytecode_cache=True)  # warm-up: .pyc, bytecode cache
        quit_in_state(args, "idle")  # warm-up: relu's compile in the run's caches
        rounds = 0
        for round_ in range(args.launches):
            if rounds and args.stop_after_s and (time.monotonic() - begin) * (rounds + 1) / rounds > args.stop_after_s:
                break  # the next round would end past the time given: report the rounds made
            for section in sections:
                settings = list(samples[section])
                turn = round_ % len(settings)
                for setting in settings[turn:] + settings[:turn]:
                    os.environ[FAST_PATHS_ENV] = setting_without([] if setting == ALL_ON else [setting])
                    try:
                        samples[section][setting].append(TRICK_SECTIONS[section](args))
                    except (TerminalError, subprocess.SubprocessError, OSError) as exc:
                        samples[section][setting].append({})
                        errors.append(f"round {round_ + 1}, {section}, {setting}: {str(exc).splitlines()[0]}")
            rounds += 1
            print(
                f"[round {round_ + 1}/{args.launches}: {time.monotonic() - begin:.0f} s]", file=sys.stderr, flush=True
            )
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        shutil.rmtree(cache, ignore_errors=True)
    return {
        "rounds": rounds,
        "edits": args.edits,
        "seconds": time.monotonic() - begin,
        "all_on": {
            figure: spread([v for run in samples[section][ALL_ON] for v in run.get(figure, [])])
            for section in sections
            for figure in TRICK_FIGURES[section]
        },
        "tricks": trick_differences(samples),
        "not_on_this_device": sorted(
            set(TRICKS) - {t for section in TRICK_FIGURES for t in tricks_of(section, args.device)}
        ),
        "errors": errors,
        "samples": samples,
    }


def trick_differences(samples: dict[str, dict[str, list[dict[str, list[float]]]]]) -> dict[str, Any]:
    """Per trick, per figure it claims: turned off minus all on, round by round (an edit's chain
    by chain), with its spread and verdict."""
    tricks: dict[str, Any] = {}
    for section, by_setting in samples.items():
        for name, runs in by_setting.items():
            if name == ALL_ON:
                continue
            entry = tricks.setdefault(name, {"buys": TRICKS[name].buys, "figures": {}})
            for figure in TRICK_FIGURES[section]:
                differences = [
                    off - on
                    for with_all, without in zip(by_setting[ALL_ON], runs, strict=True)
                    if len(with_all.get(figure, [])) == len(without.get(figure, []))
                    for on, off in zip(with_all.get(figure, []), without.get(figure, []), strict=True)
                ]
                difference = spread(differences)
                entry["figures"][figure] = {"off_minus_on_s": difference, "verdict": verdict(difference)}
    for entry in tricks.values():
        entry["verdict"] = trick_verdict({f: v["verdict"] for f, v in entry["figures"].items()})
    return tricks


def each_trick_summary(found: dict[str, Any]) -> list[str]:
    lines = [f"-- all tricks on ({found['rounds']} rounds, {found['edits']} edits each) --"]
    for figure, values in found["all_on"].items():
        lines.append(
            f"{FIGURE_NAMES[figure]:32} median {ms(values['median'])} "
            f"(p25-p75 {ms(values.get('p25'))}-{ms(values.get('p75'))}, n={values['n']})"
        )
    lines += [
        "-- each trick turned off alone: what it costs (off minus all on, in turns) --",
        f"{'trick':28} {'figure':32} {'median':>9} {'p25..p75':>17} {'n':>3}  verdict",
    ]
    for name, entry in found["tricks"].items():
        for figure, measured in entry["figures"].items():
            d = measured["off_minus_on_s"]
            spread_text = "-" if not d["n"] else f"{d['p25'] * 1e3:+.0f}..{d['p75'] * 1e3:+.0f} ms"
            median_text = "-" if not d["n"] else f"{d['median'] * 1e3:+.0f} ms"
            row = f"{name:28} {FIGURE_NAMES[figure]:32} {median_text:>9} {spread_text:>17} {d['n']:>3}"
            lines.append(f"{row}  {measured['verdict']}")
    lines.append("-- per trick --")
    lines += [f"{name:28} {entry['verdict']}" for name, entry in found["tricks"].items()]
    if found["not_on_this_device"]:
        lines.append(f"not measured (they act only on another device): {', '.join(found['not_on_this_device'])}")
    lines += [f"error: {error}" for error in found["errors"]]
    return lines


FELT_FIGURES: tuple[tuple[str, Callable[[dict[str, Any]], float | None]], ...] = (
    ("launch -> first frame", lambda r: r["frame"]["first_frame_s"]["median"]),
    ("launch -> first eager rows", lambda r: r["frame"]["first_eager_rows_s"]["median"]),
    ("last key -> new eager rows", lambda r: r["edit"]["new_eager"]["median"]),
    ("last key -> new compiled rows", lambda r: r["edit"]["new_compiled"]["median"]),
    ("last key -> eager rows, cache hit", lambda r: r["edit"]["hit_eager"]["median"]),
    ("file saved -> eager rows", lambda r: r["save"]["save_eager"]["median"]),
    ("last key -> compiled rows, cache hit", lambda r: r["edit"]["hit_compiled"]["median"]),
    ("cold: launch -> first compiled rows", lambda r: r["cold"]["launch_to_first_compiled_rows_s"]),
    ("s -> whole sweep", lambda r: r["sweep"]["s_to_whole_sweep_s"]["median"]),
    ("q -> exit, idle", lambda r: r["quit"]["idle"]["q_to_exit_s"]),
)
"""The figures a user feels, as the fast-paths comparison reads them from a section's results."""


def fast_paths_saving(on: dict[str, Any], off: dict[str, Any]) -> list[str]:
    """Each felt figure with the tricks on and off, and the share of it they save."""
    lines = [f"{'figure':40} {'on':>10} {'off':>10}  saved"]
    for name, read in FELT_FIGURES:
        try:
            with_tricks, without = read(on), read(off)
        except (KeyError, TypeError):
            continue
        if with_tricks is None or without is None:
            continue
        saved = 1 - with_tricks / without if without else 0.0
        lines.append(f"{name:40} {ms(with_tricks):>10} {ms(without):>10}  {saved:+.0%}")
    return lines


def main(argv: list[str] | None = None) -> int:
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # a timeout still closes the tmux servers
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda" if shutil.which("nvidia-smi") else "cpu")
    parser.add_argument("--n", default=None, help="the size N profiled on every edit (default 1e6 CUDA, 1e4 CPU)")
    parser.add_argument(
        "--edits", type=int, help="chains per round (each round: new, then cache hits; default 5, 2 with each)"
    )
    parser.add_argument(
        "--launches", type=int, help="launches of the frame section (default 5); with each, rounds (default 3)"
    )
    parser.add_argument(
        "--pause-s", type=float, default=20.0, help="then one more new chain after this long idle (0: none)"
    )
    parser.add_argument("--sweeps", type=int, default=3, help="sweeps, each in a freshly started app")
    parser.add_argument(
        "--cold-rounds", type=int, default=3, help="rounds of the cold section: the app and its references in turns"
    )
    parser.add_argument("--only", default=",".join(SECTIONS))
    parser.add_argument(
        "--poll-ms",
        type=float,
        default=2.0 if (os.cpu_count() or 1) >= 8 else 10.0,
        help="ms between two reads of the screen (default: 2 on 8 cores or more, else 10)",
    )
    parser.add_argument(
        "--fast-paths",
        default="on",
        choices=("on", "off", "on,off", "each"),
        help="the start-up and latency tricks: on, off, each section with both in turns, or each: all on "
        "and each trick off alone, in turns, on the figures of frame, edit, quit it claims (default on)",
    )
    parser.add_argument(
        "--stop-after-s",
        type=float,
        help="with --fast-paths each: start no round that would end past this many seconds (0: none)",
    )
    parser.add_argument("--tricks", help="with --fast-paths each: only these tricks (comma list; default all)")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    args.tricks = args.tricks.split(",") if args.tricks else None
    unknown = [name for name in args.tricks or [] if name not in TRICKS]
    if unknown:
        parser.error(f"no trick named {unknown[0]!r}; tricks: {', '.join(TRICKS)}")
    args.n = args.n or ("1e6" if args.device.startswith("cuda") else "1e4")
    args.poll_s = args.poll_ms / 1e3
    each = args.fast_paths == "each"
    args.launches = args.launches or (3 if each else 5)
    args.edits = args.edits or (2 if each else 5)
    report: dict[str, Any] = {
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "host": platform.node(),
        "cpus": os.cpu_count(),
        "device": args.device,
        "n": args.n,
        "key_interval_s": KEY_INTERVAL_S,
        "poll_s": args.poll_s,
        "load_at_start": os.getloadavg(),
    }
    # An installed tool has its bytecode compiled; a shell with PYTHONDONTWRITEBYTECODE=1 would
    # otherwise have every launch compile the app's sources, which no user's launch pays.
    report["bytecode_compiled"] = all(compileall.compile_dir(ROOT / package, quiet=1) for package in ("tui", "probes"))
    report["torch_bytecode"] = has_bytecode("torch")
    report["pycache_prefix"] = sys.pycache_prefix
    report["worker_bytecode"] = worker_bytecode()
    report["textual_bytecode"] = textual_bytecode()
    if each:
        report["fast_paths"] = "each"
        report["each_trick"] = bench_each_trick(args, [s for s in args.only.split(",") if s in TRICK_SECTIONS])
        report["load_at_end"] = os.getloadavg()
        lines = [
            f"load average at start {report['load_at_start'][0]:.1f}, at end {report['load_at_end'][0]:.1f} "
            f"({report['cpus']} cores); the worker's bytecode: {report['worker_bytecode']}",
            *each_trick_summary(report["each_trick"]),
        ]
        print("\n".join(lines))
        if args.out:
            args.out.write_text(json.dumps(report, indent=1) + "\n")
        return 0
    settings = args.fast_paths.split(",")
    report["fast_paths"] = settings
    found: dict[str, dict[str, Any]] = {setting: {} for setting in settings}
    user_setting = os.environ.get(FAST_PATHS_ENV)
    try:
        for name in args.only.split(","):
            for setting in settings:  # in turns: the machine's speed drifts from minute to minute
                os.environ[FAST_PATHS_ENV] = "1" if setting == "on" else "0"
                begin = time.monotonic()
                try:
                    SECTIONS[name](args, found[setting])
                except (TerminalError, subprocess.SubprocessError, OSError) as exc:
                    found[setting][name] = {"error": str(exc)}
                print(f"[{name}, fast paths {setting}: {time.monotonic() - begin:.0f} s]", file=sys.stderr, flush=True)
    finally:
        if user_setting is None:
            os.environ.pop(FAST_PATHS_ENV, None)
        else:
            os.environ[FAST_PATHS_ENV] = user_setting
    report["load_at_end"] = os.getloadavg()
    if len(settings) == 1:
        report.update(found[settings[0]])
        lines = summary(found[settings[0]], report["worker_bytecode"], report["textual_bytecode"])
    else:
        report.update({f"fast_paths_{setting}": sections for setting, sections in found.items()})
        lines = []
        for setting in settings:
            lines += [
                f"-- fast paths {setting} --",
                *summary(found[setting], report["worker_bytecode"], report["textual_bytecode"]),
            ]
        lines += ["-- what the fast paths save --", *fast_paths_saving(found["on"], found["off"])]
    for line in lines:
        print(line)
    if args.out:
        args.out.write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
