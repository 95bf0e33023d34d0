"""kernel-tui's performance targets, each measured side by side with what it is compared against,
in one run, through the real engine (the worker via probes.link.client.WorkerClient, or
probes.engine.sweep.run_profile in a subprocess where a worker adds nothing).

    .venv/bin/python benchmarks/run.py [--quick] [--out FILE] [--device cpu|cuda:N] [--only SECTIONS]

Prints a table of every row (target, measured, what it was measured against in the same run,
pass/fail, or "skipped: why"), then the JSON it writes to benchmarks/results/run-<machine>.json
(or --out). See benchmarks/README.md for what each row means.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import importlib.metadata
import importlib.util
import json
import os
import platform
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from ncu_csv import parse_ncu_csv  # noqa: E402
from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from probes.link.client import WorkerClient  # noqa: E402
from probes.link.protocol import (  # noqa: E402
    Measurement,
    MeasurementResult,
    ProfileRequest,
    RequestDone,
    RequestFailed,
    WorkerReady,
)

CHAIN = "(a + b).relu()"
FOCUS_N = 1_000_000
GPU_SIZES = [100, 10_000, 1_000_000, 10_000_000, 100_000_000]
CPU_SIZES = [100, 10_000, 1_000_000, 10_000_000]
CPU_QUICK_SIZES = [100, 10_000, 1_000_000]
SECTIONS = ("frame", "edit", "sweep", "cuda", "memory")
INPROC = ROOT / "benchmarks" / "inproc.py"
MANUAL = ROOT / "benchmarks" / "manual_way.py"
NCU_TIMEOUT_S = 120

err = Console(stderr=True, highlight=False)


# ---------------------------------------------------------------------------------------------
# Rows and context
# ---------------------------------------------------------------------------------------------


@dataclass
class Row:
    key: str
    what: str
    target: str
    measured: str = "-"
    baseline: str = "-"
    """The comparison, measured in the same run."""
    ratio: str = "-"
    passed: bool | None = None
    skipped: str | None = None
    values: dict[str, Any] = field(default_factory=dict)

    @property
    def result(self) -> str:
        if self.skipped:
            return f"skipped: {self.skipped}"
        return {True: "PASS", False: "FAIL", None: "info"}[self.passed]


def fresh_constant() -> str:
    """A constant no cache has seen: makes ``(a + b).relu() * C`` a new chain for Inductor."""
    return f"1.{random.randrange(10**9):09d}"


def fmt_s(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    return f"{seconds * 1e3:.0f} ms" if seconds < 1 else f"{seconds:.2f} s"


def fmt_us(us: float | None) -> str:
    if us is None:
        return "-"
    return f"{us / 1e3:.2f} ms" if us >= 1e3 else f"{us:.2f} µs"


def fmt_n(n: int) -> str:
    return f"1e{len(str(n)) - 1}" if str(n).strip("0") == "1" else f"{n:,}"


def median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "unknown"


class Bench:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.quick: bool = args.quick
        self.rows: list[Row] = []
        self.tmp = Path(tempfile.mkdtemp(prefix="kernel-tui-bench-"))
        self.warm_cache = self.tmp / "inductor-warm"
        self.started = time.perf_counter()
        self.timings: dict[str, float] = {}
        self.ready: WorkerReady | None = None
        self.device: str | None = args.device
        self.sweep_results: list[Measurement] = []
        self.devtime: dict[str, Any] | None = None

    # -- environment -----------------------------------------------------------------------------

    def env(self, cache_dir: Path | None = None, **extra: str) -> dict[str, str]:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
        env.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")
        env["PYTHONUNBUFFERED"] = "1"
        env["KERNEL_TUI_STATE_DIR"] = str(self.tmp / "state")
        if cache_dir is not None:
            env["TORCHINDUCTOR_CACHE_DIR"] = str(cache_dir)
            env.pop("TRITON_CACHE_DIR", None)  # Inductor then keeps Triton's cache under its own
        env.update(extra)
        return env

    def worker_client(self, cache_dir: Path) -> WorkerClient:
        env = self.env(cache_dir)
        return WorkerClient([sys.executable, "-m", "probes.engine.worker"], env=env)

    @property
    def cuda(self) -> bool:
        return bool(self.device and self.device.startswith("cuda"))

    @property
    def gpu_name(self) -> str | None:
        if not self.ready:
            return None
        for device in self.ready.devices:
            if device.name.startswith("cuda") and (self.device is None or device.name == self.device):
                return device.label
        return None

    def sweep_sizes(self) -> list[int]:
        if self.args.sizes:
            return self.args.sizes
        if self.cuda:
            return GPU_SIZES
        return CPU_QUICK_SIZES if self.quick else CPU_SIZES

    def log(self, message: str) -> None:
        err.print(f"[dim]{time.perf_counter() - self.started:7.1f} s[/]  {message}")

    def add(self, row: Row) -> Row:
        self.rows.append(row)
        self.log(f"{row.what}: {row.measured} (vs {row.baseline}) -> {row.result}")
        return row

    def skip(self, key: str, what: str, target: str, why: str) -> None:
        self.add(Row(key, what, target, skipped=why))

    # -- subprocesses ------------------------------------------------------------------------------

    def inproc(self, task: str, *args: str, cache_dir: Path | None = None, timeout: float = 600) -> dict[str, Any]:
        """Run one benchmarks/inproc.py task in a fresh process; its JSON result, or RuntimeError."""
        out = self.tmp / f"{task}-{time.monotonic_ns()}.json"
        command = [sys.executable, str(INPROC), task, "--json", str(out), *args]
        if self.device:
            command += ["--device", self.device]
        try:
            proc = subprocess.run(
                command,
                cwd=ROOT,
                env=self.env(cache_dir or self.warm_cache),
                capture_output=True,
                text=True,
                timeout=timeout,
            )
        except subprocess.TimeoutExpired:
            raise RuntimeError(f"{task} took over {timeout:.0f} s") from None
        if proc.returncode != 0 or not out.exists():
            raise RuntimeError(f"{task} failed (exit {proc.returncode}): {tail(proc.stderr or proc.stdout)}")
        return json.loads(out.read_text())


def tail(text: str, lines: int = 2) -> str:
    kept = [line.strip() for line in text.strip().splitlines() if line.strip() and not line.startswith("USDT:")]
    return " | ".join(kept[-lines:])[:300] or "no output"


def wall_of(command: list[str], env: dict[str, str], timeout: float) -> tuple[float, subprocess.CompletedProcess]:
    begin = time.perf_counter()
    proc = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)
    return time.perf_counter() - begin, proc


# ---------------------------------------------------------------------------------------------
# Worker helpers
# ---------------------------------------------------------------------------------------------


@dataclass
class Answer:
    first_result_s: float | None = None
    done_s: float = 0.0
    results: list[Measurement] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)


async def ask(client: WorkerClient, chain: str, sizes: list[int], modes: list[str], device: str | None) -> Answer:
    """Send one ProfileRequest and time it from send to its first MeasurementResult and to done."""
    request = ProfileRequest(client.new_id(), chain, sizes=sizes, modes=modes, device=device)
    answer = Answer()
    begin = time.perf_counter()
    async for event in client.request(request):
        if isinstance(event, MeasurementResult):
            if answer.first_result_s is None:
                answer.first_result_s = time.perf_counter() - begin
            answer.results.append(event.measurement)
        elif isinstance(event, RequestFailed):
            where = f" ({event.mode} N={event.size})" if event.size else ""
            answer.failures.append(f"{event.error.kind}{where}: {event.error.located()}")
        elif isinstance(event, RequestDone):
            answer.done_s = time.perf_counter() - begin
    return answer


def silently_eager(results: list[Measurement]) -> list[str]:
    return [
        f"N={m.size}: {m.fallback_reason or 'ran eager'}" for m in results if m.mode != "eager" and not m.ran_compiled
    ]


def rss_mb(pid: int) -> float | None:
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


# ---------------------------------------------------------------------------------------------
# 1. The TUI's first frame
# ---------------------------------------------------------------------------------------------

FIRST_FRAME_CHILD = r"""
import inspect, json, sys, time
from pathlib import Path
from tui.app import KernelTuiApp
IMPORTED = time.time()

class FirstFrame(KernelTuiApp):
    _BASE_PATH = inspect.getfile(KernelTuiApp)  # resolve CSS_PATH next to tui/app.py

    def on_ready(self) -> None:  # textual.events.Ready: the DOM is ready and the first frame shown
        Path(sys.argv[1]).write_text(json.dumps({"imported": IMPORTED, "frame": time.time()}))
        self.exit(0)

FirstFrame(workspace_path=Path(sys.argv[2]), autosave=False).run(headless=True)
"""

IMPORT_TORCH_CHILD = "import torch, time; print(repr(time.time()))"
BARE_PYTHON_CHILD = "import time; print(repr(time.time()))"


def bench_first_frame(b: Bench) -> None:
    what, target = "first frame of the TUI (process start -> first frame)", "<= 0.3 s"
    if importlib.util.find_spec("textual") is None:
        b.skip("first_frame", what, target, "textual is not installed")
        return
    env = b.env()
    reps = 3
    frames, imports, torches, bare, problem = [], [], [], [], None
    for i in range(reps + 1):  # the first of each is a warm-up (disk cache, .pyc), not counted
        stamp = b.tmp / f"frame-{i}.txt"
        begin = time.time()
        proc = subprocess.Popen(
            [sys.executable, "-c", FIRST_FRAME_CHILD, str(stamp), str(b.tmp / "workspace.json")],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            _, stderr = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            _, stderr = proc.communicate()
        if not stamp.exists():
            problem = f"the app did not draw a frame (exit {proc.returncode}): {tail(stderr or '')}"
            break
        if i:
            stamps = json.loads(stamp.read_text())
            frames.append(stamps["frame"] - begin)
            imports.append(stamps["imported"] - begin)
        for child, into in ((IMPORT_TORCH_CHILD, torches), (BARE_PYTHON_CHILD, bare)):
            begin = time.time()
            done = subprocess.run(
                [sys.executable, "-c", child], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
            )
            if i and done.returncode == 0:
                into.append(float(done.stdout.strip().splitlines()[-1]) - begin)
    if problem:
        b.skip("first_frame", what, target, problem)
        return
    frame, torch_s = median(frames), median(torches)
    # The target is for the CPU (development) machine; on a GPU box the figure is shown for information.
    gpu_box = bool(shutil.which("nvidia-smi")) or Path("/dev/nvidia0").exists()
    if gpu_box:
        target += " on the CPU machine (info on a GPU box)"
    b.add(
        Row(
            "first_frame",
            what,
            target,
            measured=fmt_s(frame),
            baseline=f"python -c 'import torch': {fmt_s(torch_s)}",
            ratio=f"{torch_s / frame:.1f}x faster than importing torch" if frame and torch_s else "-",
            passed=None if gpu_box else (frame is not None and frame <= 0.3),
            values={
                "gpu_box": gpu_box,
                "first_frame_s": frames,
                "import_torch_s": torches,
                "median_first_frame_s": frame,
                "median_import_torch_s": torch_s,
                "import_tui_app_s": imports,
                "median_import_tui_app_s": median(imports),
                "bare_python_startup_s": bare,
                "median_bare_python_startup_s": median(bare),
            },
        )
    )


# ---------------------------------------------------------------------------------------------
# 2. Edit -> fresh kernel rows, on a warm worker; worker memory over many refreshes
# ---------------------------------------------------------------------------------------------


async def bench_edit_and_rss(b: Bench, do_edit: bool, do_rss: bool) -> dict[str, Any]:
    client = b.worker_client(b.warm_cache)
    found: dict[str, Any] = {}
    try:
        begin = time.perf_counter()
        ready = await client.start()
        found["worker_start_s"] = time.perf_counter() - begin
        b.ready = b.ready or ready
        b.device = b.device or ready.default_device
        b.log(f"worker ready on {b.device} in {fmt_s(found['worker_start_s'])} (torch {ready.torch_version})")
        if do_edit:
            warm = await ask(client, CHAIN, [FOCUS_N], ["eager", "compiled"], b.device)
            found["warm_up_s"] = warm.done_s
            found["warm_up_failures"] = warm.failures
            b.log(f"warm-up request (first compile at N=1e6): {fmt_s(warm.done_s)}")
            reps = 5
            for key, mode in (("eager", "eager"), ("compiled_hit", "compiled")):
                times, failures, eager_runs = [], [], []
                for _ in range(reps):
                    answer = await ask(client, CHAIN, [FOCUS_N], [mode], b.device)
                    failures += answer.failures
                    eager_runs += silently_eager(answer.results)
                    if answer.first_result_s is not None:
                        times.append(answer.first_result_s)
                found[key] = {"times_s": times, "failures": failures, "silently_eager": eager_runs}
            times, failures, eager_runs, constants = [], [], [], []
            for _ in range(2 if b.quick else 3):
                constant = fresh_constant()
                constants.append(constant)
                answer = await ask(client, f"(a + b).relu() * {constant}", [FOCUS_N], ["compiled"], b.device)
                failures += answer.failures
                eager_runs += silently_eager(answer.results)
                if answer.first_result_s is not None:
                    times.append(answer.first_result_s)
                    compile_s = answer.results[0].compile_time_s if answer.results else None
                    b.log(
                        f"new chain * {constant}: rows in {fmt_s(answer.first_result_s)} (compile {fmt_s(compile_s)})"
                    )
            found["compiled_new"] = {
                "times_s": times,
                "failures": failures,
                "silently_eager": eager_runs,
                "constants": constants,
            }
        if do_rss:
            found["rss"] = await rss_loop(b, client)
    finally:
        await client.close()
    return found


async def rss_loop(b: Bench, client: WorkerClient) -> dict[str, Any]:
    pid = client.pid
    refreshes, n = 500, 1_000
    if pid is None or rss_mb(pid) is None:
        return {"skipped": "cannot read the worker's /proc/<pid>/status"}
    for _ in range(10):  # settle first-use allocations (profiler, caches) before the baseline
        await ask(client, CHAIN, [n], ["eager"], b.device)
    baseline = rss_mb(pid)
    samples, failures = [baseline], []
    begin = time.perf_counter()
    for i in range(1, refreshes + 1):
        answer = await ask(client, CHAIN, [n], ["eager"], b.device)
        failures += answer.failures[:1]
        if i % 50 == 0:
            samples.append(rss_mb(client.pid or pid))
    elapsed = time.perf_counter() - begin
    b.log(f"{refreshes} refreshes in {elapsed:.1f} s; RSS {samples[0]:.0f} -> {samples[-1]:.0f} MB")
    return {
        "pid": pid,
        "refreshes": refreshes,
        "n": n,
        "rss_mb": samples,
        "seconds": elapsed,
        "failures": failures[:5],
        "restarts": client.restarts,
    }


async def ask_worker(b: Bench) -> None:
    """Start a worker only to learn the device, its name and torch's version."""
    client = b.worker_client(b.warm_cache)
    try:
        b.ready = await client.start()
        b.device = b.device or b.ready.default_device
    finally:
        await client.close()


def bench_manual_way(b: Bench) -> dict[str, Any]:
    """The manual way (benchmarks/manual_way.py) in a fresh process, start to exit."""
    runs, problem = [], None
    command = [sys.executable, str(MANUAL), "--size", str(FOCUS_N)]
    if b.device:
        command += ["--device", b.device]
    for _ in range(1 if b.quick else 2):
        seconds, proc = wall_of(command, b.env(b.warm_cache), timeout=600)
        if proc.returncode != 0:
            problem = f"manual_way.py failed: {tail(proc.stderr)}"
            break
        runs.append(seconds)
    b.log(f"manual way (fresh process, profile eager + compiled, print table): {[fmt_s(s) for s in runs]}")
    return {"runs_s": runs, "problem": problem}


def bench_bare_compile(b: Bench) -> dict[str, Any]:
    """A bare torch.compile + first call of a fresh chain in a fresh process, and of a second chain
    in the same, now warm, process. The second is another op, not another constant: Dynamo does not
    specialise floats, so ``* C2`` after ``* C1`` would reuse the first graph (a 3-20 ms cache hit
    that no compile of the tool's gets, each being its own code object)."""
    fresh, warm, problem = [], [], None
    for _ in range(1 if b.quick else 2):
        try:
            chains = [f"(a + b).relu() * {fresh_constant()}", f"(a + b).erf() * {fresh_constant()}"]
            data = b.inproc("bare-compile", "--size", str(FOCUS_N), "--chains", *chains)
        except RuntimeError as exc:
            problem = str(exc)
            break
        fresh.append(data["runs"][0]["seconds"])
        warm.append(data["runs"][1]["seconds"])
    b.log(
        f"bare torch.compile + first call, fresh process: {[fmt_s(s) for s in fresh]}; "
        f"a second, other chain in that process: {[fmt_s(s) for s in warm]}"
    )
    return {"fresh_process_s": fresh, "warm_process_s": warm, "problem": problem}


def edit_rows(b: Bench, found: dict[str, Any], manual: dict[str, Any], bare: dict[str, Any]) -> None:
    manual_s = median(manual["runs_s"])
    manual_text = f"manual way (fresh process): {fmt_s(manual_s)}" if manual_s else (manual["problem"] or "-")
    for key, what, target_s in (
        ("eager", "edit -> fresh kernel rows, eager, warm worker, 1e6 fp32", 0.100),
        ("compiled_hit", "edit -> fresh kernel rows, compiled, compile cache hit, 1e6 fp32", 0.150),
    ):
        data = found.get(key, {})
        ours = median(data.get("times_s", []))
        if ours is None:
            b.add(
                Row(
                    f"edit_{key}",
                    what,
                    f"<= {target_s * 1e3:.0f} ms; manual/ours >= 100x",
                    passed=False,
                    measured="no result",
                    values=data,
                )
            )
            continue
        ratio = manual_s / ours if manual_s else None
        ok = (
            ours <= target_s and (ratio is None or ratio >= 100) and not data["silently_eager"] and not data["failures"]
        )
        b.add(
            Row(
                f"edit_{key}",
                what,
                f"<= {target_s * 1e3:.0f} ms; manual/ours >= 100x",
                measured=fmt_s(ours),
                baseline=manual_text,
                ratio=f"{ratio:.0f}x" if ratio else "-",
                passed=ok,
                values={**data, "median_s": ours, "manual_s": manual_s, "ratio": ratio},
            )
        )
    data = found.get("compiled_new", {})
    ours = median(data.get("times_s", []))
    theirs = median(bare["fresh_process_s"])
    what = "edit -> fresh kernel rows, compiled, new chain, 1e6 fp32"
    target = "<= bare torch.compile + 20%"
    if ours is None:
        b.add(Row("edit_compiled_new", what, target, measured="no result", passed=False, values=data))
        return
    warm_theirs = median(bare["warm_process_s"])
    b.add(
        Row(
            "edit_compiled_new",
            what,
            target,
            measured=fmt_s(ours),
            baseline=(
                f"bare compile+1st call, fresh process: {fmt_s(theirs)} (2nd chain, warm process: {fmt_s(warm_theirs)})"
            )
            if theirs
            else (bare["problem"] or "-"),
            ratio=(
                f"{ours / theirs:.2f}x of bare (fresh process)"
                + (f"; {ours / warm_theirs:.2f}x of bare (warm process)" if warm_theirs else "")
            )
            if theirs
            else "-",
            passed=(ours <= 1.2 * theirs and not data["silently_eager"] and not data["failures"]) if theirs else None,
            values={
                **data,
                "median_s": ours,
                "bare_fresh_process_s": bare["fresh_process_s"],
                "bare_warm_process_s": bare["warm_process_s"],
                "ratio_to_bare": ours / theirs if theirs else None,
            },
        )
    )


def rss_row(b: Bench, rss: dict[str, Any]) -> None:
    what, target = "worker memory: RSS growth over 500 eager refreshes (N=1e3)", "< 50 MB"
    if rss.get("skipped"):
        b.skip("worker_rss", what, target, rss["skipped"])
        return
    samples = [s for s in rss["rss_mb"] if s is not None]
    growth = samples[-1] - samples[0]
    b.add(
        Row(
            "worker_rss",
            what,
            target,
            measured=f"{growth:+.1f} MB",
            baseline=f"RSS {samples[0]:.0f} -> {samples[-1]:.0f} MB ({rss['seconds']:.1f} s)",
            ratio="-",
            passed=growth < 50 and not rss["failures"] and not rss["restarts"],
            values={**rss, "growth_mb": growth},
        )
    )


# ---------------------------------------------------------------------------------------------
# 3. Full sweep, cold and warm; bytes per call
# ---------------------------------------------------------------------------------------------


async def bench_sweep(b: Bench) -> dict[str, Any]:
    cold = b.tmp / "inductor-sweep"
    sizes = b.sweep_sizes()
    found: dict[str, Any] = {"sizes": sizes}
    client = b.worker_client(cold)
    try:
        begin = time.perf_counter()
        ready = await client.start()
        found["cold_worker_start_s"] = time.perf_counter() - begin
        b.ready = b.ready or ready
        b.device = b.device or ready.default_device
        for key in ("cold", "warm_same_worker"):
            answer = await ask(client, CHAIN, sizes, ["eager", "compiled"], b.device)
            found[key] = {
                "seconds": answer.done_s,
                "failures": answer.failures,
                "silently_eager": silently_eager(answer.results),
                "results": len(answer.results),
            }
            b.sweep_results = answer.results
            b.log(f"sweep {key}: {fmt_s(answer.done_s)} ({len(answer.results)} results)")
    finally:
        await client.close()
    client = b.worker_client(cold)
    try:
        begin = time.perf_counter()
        await client.start()
        found["warm_worker_start_s"] = time.perf_counter() - begin
        answer = await ask(client, CHAIN, sizes, ["eager", "compiled"], b.device)
        found["warm_new_worker"] = {
            "seconds": answer.done_s,
            "failures": answer.failures,
            "silently_eager": silently_eager(answer.results),
            "results": len(answer.results),
        }
        b.log(f"sweep warm, new worker: {fmt_s(answer.done_s)}")
    finally:
        await client.close()
    return found


def bench_triton_sweep(b: Bench) -> dict[str, Any]:
    if importlib.util.find_spec("triton") is None:
        return {"skipped": "triton is not installed"}
    if not b.cuda:
        return {"skipped": "no CUDA device (triton.testing.do_bench needs a GPU)"}
    found: dict[str, Any] = {}
    cache = b.tmp / "inductor-triton-sweep"
    sizes = [str(n) for n in b.sweep_sizes()]
    for key in ("cold", "warm"):
        try:
            found[key] = b.inproc("triton-sweep", "--sizes", *sizes, cache_dir=cache)
        except RuntimeError as exc:
            return {"skipped": str(exc)}
        b.log(f"triton perf_report sweep {key}: {fmt_s(found[key]['sweep_s'])}")
    return found


def sweep_rows(b: Bench, ours: dict[str, Any], theirs: dict[str, Any]) -> None:
    sizes = ",".join(fmt_n(n) for n in ours["sizes"])
    what = f"full sweep {CHAIN}, N={sizes}, eager+compiled"
    for key, label, target_s, their_key in (
        ("cold", "cold (fresh cache dir, fresh worker)", 20.0, "cold"),
        ("warm_same_worker", "caches warm, same worker", 3.0, "warm"),
        ("warm_new_worker", "caches warm (disk), new worker", 3.0, "warm"),
    ):
        data = ours.get(key)
        if not data:
            continue
        seconds = data["seconds"]
        their = theirs.get(their_key)
        if their:
            how = "triton perf_report" if their.get("style", "").startswith("triton") else "do_bench loop"
            baseline = f"{how} sweep, eager+compiled ({their_key}): {fmt_s(their['sweep_s'])}"
            ratio = f"{seconds / their['sweep_s']:.2f}x of it"
        else:
            baseline, ratio = f"skipped: {theirs.get('skipped', '-')}", "-"
        expected = 2 * len(ours["sizes"])
        b.add(
            Row(
                f"sweep_{key}",
                f"{what}, {label}",
                f"<= {target_s:.0f} s",
                measured=fmt_s(seconds),
                baseline=baseline,
                ratio=ratio,
                passed=seconds <= target_s
                and data["results"] == expected
                and not data["silently_eager"]
                and not data["failures"],
                values={
                    **data,
                    "sizes": ours["sizes"],
                    "triton_sweep": their,
                    "worker_start_s": ours.get("cold_worker_start_s" if key == "cold" else "warm_worker_start_s"),
                },
            )
        )


def bytes_rows(b: Bench) -> None:
    if not b.sweep_results:
        b.skip("bytes", "bytes per call", "exactly 20N / 12N", "no sweep results")
        return
    for mode, per in (("eager", 20), ("compiled", 12)):
        got = {m.size: m.bytes_per_call for m in b.sweep_results if m.mode == mode}
        wrong = {n: v for n, v in got.items() if v != per * n}
        b.add(
            Row(
                f"bytes_{mode}",
                f"bytes per call, {mode}, fp32 add+relu (every sweep size)",
                f"exactly {per}N",
                measured="all exact" if not wrong else ", ".join(f"N={fmt_n(n)}: {v}" for n, v in wrong.items()),
                baseline=f"arithmetic: {per} B x N ({per // 4} arrays x 4 B)",
                ratio=f"{len(got) - len(wrong)}/{len(got)} sizes",
                passed=bool(got) and not wrong,
                values={"bytes": {str(n): v for n, v in got.items()}, "expected_per_element": per},
            )
        )


# ---------------------------------------------------------------------------------------------
# 4. CUDA: wall time vs do_bench, device time vs raw profiler events and ncu, device memory
# ---------------------------------------------------------------------------------------------


def bench_wall(b: Bench) -> None:
    what, target = "wall time per call vs torch.utils.benchmark.Timer, N >= 1e6", "within 5%"
    if not b.cuda:
        b.skip("wall", what, target, "no CUDA device (do_bench and CUDA-event timing are CUDA only)")
        return
    if importlib.util.find_spec("triton") is None:
        b.skip("wall", what, target, "triton is not installed")
        return
    sizes = ["1000000", "10000000", "100000000"]
    try:
        data = b.inproc("wall", "--sizes", *sizes, "--rounds", "2" if b.quick else "3")
    except RuntimeError as exc:
        b.skip("wall", what, target, str(exc))
        return
    for row in data["rows"]:
        ours, theirs = median(row["ours_us"]), median(row["timer_us"])
        bench, plain = median(row["do_bench_us"]), median(row.get("do_bench_plain_fn_us", []))
        diff = (ours / theirs - 1) if ours and theirs else None
        b.add(
            Row(
                f"wall_{row['mode']}_{row['size']}",
                f"wall time per call, {row['mode']}, N={fmt_n(row['size'])}",
                target,
                measured=fmt_us(ours),
                baseline=f"Timer median, same callable: {fmt_us(theirs)} "
                f"(do_bench, a device-time figure: {fmt_us(bench)}; plain fn(a, b): {fmt_us(plain)})",
                ratio=f"{diff:+.1%}" if diff is not None else "-",
                passed=diff is not None and abs(diff) <= 0.05 and not row["failures"],
                values=row,
            )
        )


def devtime_sizes(b: Bench) -> list[int]:
    if b.cuda:
        return [1_000_000, 10_000_000, 100_000_000]
    return [1_000_000] if b.quick else [1_000_000, 10_000_000]


def bench_devtime(b: Bench) -> None:
    sizes = [str(n) for n in devtime_sizes(b)]
    try:
        b.devtime = b.inproc("devtime", "--sizes", *sizes, "--reps", "20")
    except RuntimeError as exc:
        b.skip("devtime", "device time per kernel vs raw profiler events", "within 5%", str(exc))
        return
    ncu = bench_ncu(b)
    for row in b.devtime["rows"]:
        ours, raw = row["ours_us"], row["raw_us"]
        diff = (ours / raw - 1) if raw else None
        ncu_us = ncu.get("us", {}).get(str(row["size"])) if row["mode"] == "compiled" else None
        ncu_diff = (ours / ncu_us - 1) if ncu_us else None
        baseline = f"raw profiler events: {fmt_us(raw)}"
        ratio = f"{diff:+.1%}" if diff is not None else "-"
        passed = diff is not None and abs(diff) <= 0.05
        if row["mode"] == "compiled" and b.cuda:
            if ncu_us:
                baseline += f"; ncu: {fmt_us(ncu_us)}"
                ratio += f"; ncu {ncu_diff:+.1%}"
                passed = passed and abs(ncu_diff) <= 0.05
            else:
                baseline += f"; ncu skipped: {ncu.get('skipped', 'no figure for this size')}"
        what = f"device time per launch, {row['mode']} {row['kernel']}, N={fmt_n(row['size'])}"
        target = "within 5% of raw events" + (" and ncu" if row["mode"] == "compiled" and b.cuda else "")
        if not b.cuda:  # CPU "kernels" are ops timed by the wall clock, at the OS scheduler's mercy
            what += " (CPU: op wall-clock)"
            target += " (CUDA target; info on CPU)"
            passed = None
        b.add(
            Row(
                f"devtime_{row['mode']}_{row['kernel']}_{row['size']}",
                what,
                target,
                measured=fmt_us(ours),
                baseline=baseline,
                ratio=ratio,
                passed=passed,
                values={**row, "ncu_us": ncu_us, "ncu": {k: v for k, v in ncu.items() if k != "us"}},
            )
        )


def bench_ncu(b: Bench) -> dict[str, Any]:
    if not b.cuda:
        return {"skipped": "no CUDA device"}
    ncu = shutil.which("ncu")
    if ncu is None:
        return {"skipped": "ncu is not on PATH"}
    sizes = [str(n) for n in devtime_sizes(b)]
    launches = 5
    out = b.tmp / "ncu-target.json"
    command = [
        ncu,
        "--clock-control",
        "none",
        "--metrics",
        "gpu__time_duration.sum",
        "--profile-from-start",
        "off",
        "-k",
        "regex:triton_",
        "--csv",
        "--page",
        "raw",
        "--print-units",
        "base",
        sys.executable,
        str(INPROC),
        "ncu-target",
        "--json",
        str(out),
        "--sizes",
        *sizes,
        "--launches",
        str(launches),
        "--device",
        b.device or "cuda:0",
    ]
    try:
        seconds, proc = wall_of(command, b.env(b.warm_cache), timeout=NCU_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return {"skipped": f"ncu took over {NCU_TIMEOUT_S} s", "command": " ".join(command)}
    if proc.returncode != 0:
        return {
            "skipped": f"ncu failed (exit {proc.returncode}): {tail(proc.stdout + proc.stderr)}",
            "command": " ".join(command),
        }
    durations = parse_ncu_csv(proc.stdout)
    if len(durations) != launches * len(sizes):
        return {
            "skipped": f"ncu reported {len(durations)} kernels, expected {launches * len(sizes)}: "
            f"{tail(proc.stdout + proc.stderr)}",
            "command": " ".join(command),
        }
    us = {}
    for i, size in enumerate(sizes):
        chunk = durations[i * launches : (i + 1) * launches]
        us[size] = statistics.median(d for _, d in chunk)
    b.log(f"ncu: {', '.join(f'N={fmt_n(int(s))} {fmt_us(v)}' for s, v in us.items())} ({seconds:.0f} s)")
    return {
        "us": us,
        "kernels": sorted({name for name, _ in durations}),
        "seconds": seconds,
        "command": " ".join(command),
    }


def bench_devmem(b: Bench) -> None:
    what, target = "device memory back to baseline after each run_profile (eager+compiled, 1e6)", "+0 B"
    if not b.cuda:
        b.skip("device_memory", what, target, "no CUDA device")
        return
    runs = 20 if b.quick else 50
    try:
        data = b.inproc("devmem", "--size", str(FOCUS_N), "--runs", str(runs))
    except RuntimeError as exc:
        b.skip("device_memory", what, target, str(exc))
        return
    above = data["max_above_baseline"]
    b.add(
        Row(
            "device_memory",
            f"{what}, {runs} runs",
            target,
            measured=f"max {above:+,} B above baseline",
            baseline=f"baseline memory_allocated {data['baseline']:,} B",
            ratio=f"max change in one run {data['max_delta']:,} B",
            passed=above == 0 and data["max_delta"] == 0 and not data["failures"],
            values={k: v for k, v in data.items() if k != "runs"},
        )
    )


# ---------------------------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------------------------


def machine_info(b: Bench) -> dict[str, Any]:
    cpu_model = platform.processor()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu_model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    ncu = shutil.which("ncu")
    ncu_version = None
    if ncu:
        try:
            ncu_version = tail(subprocess.run([ncu, "--version"], capture_output=True, text=True, timeout=30).stdout, 1)
        except (OSError, subprocess.TimeoutExpired):
            ncu_version = "unknown"

    def version(package: str) -> str | None:
        try:
            return importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            return None

    return {
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "host": platform.node(),
        "machine": platform.machine(),
        "cpu_model": cpu_model,
        "cpu_count": os.cpu_count(),
        "gpu": b.gpu_name,
        "device": b.device,
        "torch": b.ready.torch_version if b.ready else version("torch"),
        "python": platform.python_version(),
        "triton": version("triton"),
        "textual": version("textual"),
        "ncu": ncu_version,
        "quick": b.quick,
        "loadavg_at_end": [round(x, 2) for x in os.getloadavg()],
    }


def table(b: Bench) -> Table:
    t = Table(title="kernel-tui benchmarks", title_justify="left", show_lines=True)
    for column in ("what", "target", "measured", "compared with (same run)", "ratio / diff", "result"):
        t.add_column(column, overflow="fold")
    for row in b.rows:
        style = {"PASS": "green", "FAIL": "bold red"}.get(row.result, "yellow" if row.skipped else "")
        t.add_row(
            row.what,
            row.target,
            row.measured,
            row.baseline,
            row.ratio,
            f"[{style}]{row.result}[/]" if style else row.result,
        )
    return t


def default_out(info: dict[str, Any]) -> Path:
    """benchmarks/results/run-<machine>.json: one current result per machine (git keeps the rest)."""
    machine = slug(info["gpu"]).removeprefix("nvidia-") if info["gpu"] else f"cpu-{info['cpu_count']}core"
    return ROOT / "benchmarks" / "results" / f"run-{machine}.json"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer sizes and repeats (for the CPU)")
    parser.add_argument("--out", type=Path, help="where to write the JSON (default: benchmarks/results/...)")
    parser.add_argument("--device", help="cpu or cuda:N (default: the worker's, CUDA when present)")
    parser.add_argument(
        "--sizes",
        type=lambda s: [int(float(x)) for x in s.split(",")],
        help="sweep sizes, e.g. 1e2,1e4,1e6 (default: 1e2..1e8 on CUDA, 1e2..1e7 on CPU)",
    )
    parser.add_argument(
        "--only", default=",".join(SECTIONS), help=f"comma-separated sections to run: {', '.join(SECTIONS)}"
    )
    args = parser.parse_args(argv)
    only = {s.strip() for s in args.only.split(",") if s.strip()}
    unknown = only - set(SECTIONS)
    if unknown:
        parser.error(f"--only: unknown section(s) {', '.join(sorted(unknown))}")

    b = Bench(args)
    b.log(
        f"temp dir {b.tmp}; python {platform.python_version()}; {os.cpu_count()} CPUs; "
        f"load average {os.getloadavg()[0]:.2f}"
    )
    loadavg_at_start = [round(x, 2) for x in os.getloadavg()]

    def build_report() -> dict[str, Any]:
        return {
            **machine_info(b),
            "loadavg_at_start": loadavg_at_start,
            "elapsed_s": round(time.perf_counter() - b.started, 1),
            "section_s": b.timings,
            "passed": sum(r.passed is True and not r.skipped for r in b.rows),
            "failed": sum(r.passed is False and not r.skipped for r in b.rows),
            "skipped": sum(bool(r.skipped) for r in b.rows),
            "rows": [{**asdict(r), "result": r.result} for r in b.rows],
        }

    def section(name: str, fn, *fn_args):
        begin = time.perf_counter()
        try:
            return fn(*fn_args)
        finally:
            b.timings[name] = round(time.perf_counter() - begin, 1)
            if args.out:  # a partial report survives a run cut short
                args.out.parent.mkdir(parents=True, exist_ok=True)
                args.out.write_text(json.dumps({**build_report(), "partial": True}, indent=1, default=str) + "\n")

    try:
        if "frame" in only:
            section("frame", bench_first_frame, b)
        if "edit" in only or "memory" in only:
            found = section("edit", lambda: asyncio.run(bench_edit_and_rss(b, "edit" in only, "memory" in only)))
            if "edit" in only:
                manual = section("manual_way", bench_manual_way, b)
                bare = section("bare_compile", bench_bare_compile, b)
                edit_rows(b, found, manual, bare)
            if "memory" in only:
                rss_row(b, found.get("rss", {"skipped": "not measured"}))
        if "sweep" in only:
            ours = section("sweep", lambda: asyncio.run(bench_sweep(b)))
            theirs = section("triton_sweep", bench_triton_sweep, b)
            sweep_rows(b, ours, theirs)
            bytes_rows(b)
        if "cuda" in only:
            if b.ready is None:  # no worker has told us the device yet
                section("device", lambda: asyncio.run(ask_worker(b)))
            section("wall", bench_wall, b)
            section("devtime", bench_devtime, b)
        if "memory" in only:
            section("device_memory", bench_devmem, b)
    finally:
        report = build_report()
        elapsed = report["elapsed_s"]
        out = Console(highlight=False)
        if not out.is_terminal:  # piped or redirected: wide enough for the table to stay readable
            out = Console(highlight=False, width=200)
        out.print(table(b))
        text = json.dumps(report, indent=1, default=str)
        out.print_json(text) if out.is_terminal else print(text)
        path = args.out or default_out(report)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text + "\n")
        out.print(
            f"wrote {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path} "
            f"({report['passed']} pass, {report['failed']} fail, {report['skipped']} skipped) "
            f"in {elapsed:.0f} s",
            highlight=False,
        )
        shutil.rmtree(b.tmp, ignore_errors=True)
    return 0 if report["failed"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
