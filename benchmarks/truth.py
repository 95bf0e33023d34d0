"""The truth run: kernel-tui's figures against clean measurements of the same thing.

    python benchmarks/truth.py --out truth.json [--budget-s 420] [--quick]

For a matrix of chains (elementwise, reductions, normalisations, matmul, scan, broadcasting;
fp32 and bf16) x eager/compiled x sizes, each cell compares:

- kernels per call: the engine's count against a bare ``torch.profiler`` count of the same
  user-written function (every cell);
- wall time per call: one long-lived worker (several requests per chain, as the app sends them),
  the in-process path (``run_profile``) and ``torch.utils.benchmark.Timer`` on the user-written
  function, within 10% or 3 µs of each other; ``triton.testing.do_bench`` too where the call is
  device-bound (device time >= 80% of the Timer's figure): below that do_bench hides the host's
  time behind its flush and is a device-time figure, not a time per call;
- device time per kernel: the engine's (L2 flushed) against bare profiler events (no flush,
  back to back), at sizes beyond L2.

Then a 12-size compiled sweep in both orders (every size compiled, same kernels, device times
within 5%), device time per kernel against Nsight Compute (``ncu --cache-control all
--clock-control none``, each target run as ``truth.py --ncu-target``) for a handful of kernels
including the reductions, and a probe of the host's time per call at the start and the end of
the run (anything the tool leaves behind in a process shows there). On a machine without CUDA it
runs a small CPU matrix without the triton and ncu parts. Progress goes to stderr; the JSON is
written after every chain, so a run cut short still leaves its rows.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import functools
import importlib
import importlib.util
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(Path(__file__).resolve().parent)]

WALL_TOLERANCE, WALL_SLACK_US = 0.10, 3.0
SWEEP_TOLERANCE = 0.05
NCU_TOLERANCE = 0.05
FOCUS = 1_000_000


@dataclass(frozen=True)
class Chain:
    name: str
    text: str
    dtype: str
    sizes: tuple[int, ...]


GPU_SIZES = (10**2, 10**4, 10**6, 10**7, 10**8)
ROWS_SIZES = (10**4, 10**6, 10**7, 10**8)
CHAINS = (
    Chain("add_relu", "(a + b).relu()", "fp32", GPU_SIZES),
    Chain("mul_add_tanh", "(a * b + c).tanh()", "fp32", GPU_SIZES),
    Chain("mul_add_sigmoid_bf16", "(a * b + c).sigmoid()", "bf16", GPU_SIZES),
    Chain("sum", "a.sum()", "fp32", GPU_SIZES),
    Chain("mul_sum", "(a * b).sum()", "fp32", GPU_SIZES),
    Chain("softmax", "x: [N // 1024, 1024]\ntorch.softmax(x, -1)", "fp32", ROWS_SIZES),
    Chain("layer_norm_bf16", "x: [N // 1024, 1024] bf16\nF.layer_norm(x, (1024,))", "bf16", ROWS_SIZES),
    Chain("matmul_gelu_bf16", "x: [N // 1024, 1024] bf16\nw: [1024, 1024] bf16\nF.gelu(x @ w)", "bf16", ROWS_SIZES),
    Chain("cumsum", "torch.cumsum(a, 0)", "fp32", GPU_SIZES),
    Chain("broadcast_scale", "x: [N // 1024, 1024]\ny: [1024]\n(x * y + 1).relu()", "fp32", ROWS_SIZES),
    Chain("normalise", "(a - a.mean()) / (a.std() + 1e-5)", "fp32", GPU_SIZES),
)
CPU_SIZES = (10**2, 10**4, 10**5)
CPU_CHAINS = ("add_relu", "sum", "softmax", "cumsum")

SWEEP_CHAIN = Chain("sweep_sigmoid", "(a * b + c).sigmoid()", "fp32", tuple(2**k for k in range(14, 26)))
NCU_TARGETS = (
    ("sum", 10**8, "compiled"),
    ("sum", 10**8, "eager"),
    ("mul_sum", 10**8, "compiled"),
    ("mul_sum", 10**8, "eager"),
    ("add_relu", 10**8, "compiled"),
    ("softmax", 10**8, "compiled"),
)


def log(message: str) -> None:
    print(f"[truth {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def close(
    a: float | None, b: float | None, tolerance: float = WALL_TOLERANCE, slack: float = WALL_SLACK_US
) -> bool | None:
    if a is None or b is None:
        return None
    return abs(a - b) <= max(tolerance * min(a, b), slack)


# -- user-written functions: what a person would write and time by hand --------------------------------


def user_module(chains: list[Chain], folder: Path) -> Any:
    """One real source file with ``def <name>(<inputs>, N)`` per chain, imported like user code."""
    from probes.chain.expr import parse_chain

    lines = ["import torch", "import torch.nn.functional as F", ""]
    for chain in chains:
        parsed = parse_chain(chain.text)
        body = [line for line in chain.text.splitlines() if line.strip() and ":" not in line.split("(")[0]]
        params = ", ".join([d.name for d in parsed.inputs] + ["N"])
        lines += [f"def {chain.name}({params}):", f"    return {body[-1]}", ""]
    path = folder / "truth_chains.py"
    path.write_text("\n".join(lines))
    spec = importlib.util.spec_from_file_location("truth_chains", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def fresh_code(fn: Any) -> Any:
    """The same user function with a code object of its own, so that each size's compile starts
    with an empty Dynamo cache (as a fresh script would)."""
    return types.FunctionType(fn.__code__.replace(), fn.__globals__, fn.__name__)


def visible_cpp_kernels() -> Any:
    """Inductor's C++ kernels only show in the profiler when built so (the user's compile too)."""
    import torch._inductor.config as inductor_config

    return inductor_config.patch({"cpp.enable_kernel_profile": True})


def inputs_for(chain: Chain, n: int, device: Any) -> list[Any]:
    from probes.chain.expr import parse_chain
    from probes.engine.inputs import input_specs, make_inputs

    return make_inputs(input_specs(parse_chain(chain.text), n, chain.dtype), device, n)


def sync(device: Any) -> None:
    import torch

    if device.type == "cuda":
        torch.cuda.synchronize(device)


def timer_us(call: Any) -> float:
    """The independent wall-time reference: ``torch.utils.benchmark.Timer``'s median µs per call
    over blocks of back-to-back calls between two synchronisations (no tool code, no flush)."""
    from torch.utils.benchmark import Timer

    return Timer(stmt="call()", globals={"call": call}).blocked_autorange(min_run_time=0.2).median * 1e6


def bare_profile(call: Any, device: Any, compiled: bool, reps: int = 10) -> tuple[float | None, dict[str, float]]:
    """(kernels per call, median µs per launch by kernel name) from a plain profiled loop: no
    flush, no labels, nothing of the tool."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    from probes.link.kernel_names import classify_device_event, strip_graph_prefix

    for _ in range(3):
        call()
    sync(device)
    activities = [ProfilerActivity.CPU, ProfilerActivity.CUDA] if device.type == "cuda" else [ProfilerActivity.CPU]
    with profile(activities=activities) as prof:
        for _ in range(reps):
            call()
        sync(device)
    if device.type != "cuda" and not compiled:
        return None, {}  # eager CPU "kernels" are ATen ops: no bare count to compare with
    durations: dict[str, list[float]] = {}
    for event in prof.events():
        if device.type == "cuda":
            if event.device_type != torch.autograd.DeviceType.CUDA or getattr(event, "is_user_annotation", False):
                continue
            if classify_device_event(event.name) != "kernel":
                continue
        elif not strip_graph_prefix(event.name).startswith("cpp_"):
            continue
        durations.setdefault(strip_graph_prefix(event.name), []).append(event.time_range.elapsed_us())
    count = sum(len(times) for times in durations.values()) / reps
    return count, {name: statistics.median(times) for name, times in durations.items()}


def do_bench_us(call: Any) -> float | None:
    try:
        from triton.testing import do_bench
    except ImportError:
        return None
    return do_bench(call, warmup=25, rep=100, return_mode="median") * 1e3


def host_probe(device: Any, module: Any, chains: list[Chain]) -> dict[str, float]:
    """Host µs per call at N=1e2 (eager and compiled), back to back, one sync at the end: shows
    anything a process accumulates (guards, profiler hooks) that makes each call slower."""
    import torch

    found = {}
    chain = chains[0]
    inputs = inputs_for(chain, 100, device)
    fn = getattr(module, chain.name)
    compiled = torch.compile(fn, dynamic=False)
    for label, call in (("eager", fn), ("compiled", compiled)):
        for _ in range(50):
            call(*inputs, N=100)
        sync(device)
        begin = time.perf_counter()
        for _ in range(500):
            call(*inputs, N=100)
        sync(device)
        found[label] = (time.perf_counter() - begin) / 500 * 1e6
    return found


# -- the engine, two ways ---------------------------------------------------------------------------------


def run_inprocess(chain: Chain, sizes: list[int], modes: list[str], device: str) -> tuple[dict, list[str]]:
    from probes.engine.sweep import run_profile
    from probes.link.protocol import MeasurementResult, ProfileRequest, RequestFailed

    results, failures = {}, []

    def emit(event: Any) -> None:
        if isinstance(event, MeasurementResult):
            results[(event.measurement.size, event.measurement.mode)] = event.measurement
        elif isinstance(event, RequestFailed):
            failures.append(f"{event.mode} N={event.size}: {event.error.located()}")

    run_profile(ProfileRequest("truth", chain.text, sizes=sizes, modes=modes, device=device, dtype=chain.dtype), emit)
    return results, failures


class Worker:
    """One long-lived worker on one event loop, asked the way the app asks."""

    def __init__(self) -> None:
        from probes.link.client import WorkerClient

        self.loop = asyncio.new_event_loop()
        path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
        self.client = WorkerClient(env={"PYTHONPATH": path})
        self.ready = self.loop.run_until_complete(self.client.start())

    def request(self, chain: Chain, sizes: list[int], modes: list[str], device: str) -> tuple[dict, list[str]]:
        from probes.link.protocol import MeasurementResult, ProfileRequest, RequestFailed

        async def ask() -> tuple[dict, list[str]]:
            results, failures = {}, []
            request = ProfileRequest(
                self.client.new_id(), chain.text, sizes=sizes, modes=modes, device=device, dtype=chain.dtype
            )
            async for event in self.client.request(request):
                if isinstance(event, MeasurementResult):
                    results[(event.measurement.size, event.measurement.mode)] = event.measurement
                elif isinstance(event, RequestFailed):
                    failures.append(f"{event.mode} N={event.size}: {event.error.located()}")
            return results, failures

        return self.loop.run_until_complete(ask())

    def close(self) -> None:
        self.loop.run_until_complete(self.client.close())
        self.loop.close()


# -- one chain: every size x mode --------------------------------------------------------------------------


def chain_cells(chain: Chain, sizes: list[int], device: Any, module: Any, worker: Worker | None) -> dict:
    import torch

    modes = ["eager", "compiled"]
    inproc, inproc_failures = run_inprocess(chain, sizes, modes, str(device))
    from_worker, worker_failures = ({}, [])
    if worker is not None:
        worker.request(chain, [FOCUS if FOCUS in sizes else sizes[0]], modes, str(device))  # the focus size first
        from_worker, worker_failures = worker.request(chain, sizes, modes, str(device))  # then the sweep
    l2 = torch.cuda.get_device_properties(device).L2_cache_size if device.type == "cuda" else 0
    fn = getattr(module, chain.name)
    cells = []
    for n in sizes:
        try:
            inputs = inputs_for(chain, n, device)
        except Exception as exc:
            cells.append({"size": n, "skipped": f"inputs: {exc}"})
            continue
        for mode in modes:
            ours = inproc.get((n, mode))
            theirs = from_worker.get((n, mode))
            user = fn if mode == "eager" else torch.compile(fresh_code(fn), dynamic=False)
            call = functools.partial(user, *inputs, N=n)
            with visible_cpp_kernels():
                bare_count, bare_us = bare_profile(call, device, mode != "eager")
            loop_us = timer_us(call)
            bench_us = do_bench_us(call) if device.type == "cuda" else None
            again_us = timer_us(call)  # the reference's own repeatability: the noise floor of the wall checks
            cell: dict[str, Any] = {
                "size": n,
                "mode": mode,
                "kernels": {
                    "engine": ours.kernels_per_call if ours else None,
                    "worker": theirs.kernels_per_call if theirs else None,
                    "bare_profiler": bare_count,
                },
                "wall_us": {
                    "worker": theirs.wall_time_us if theirs else None,
                    "inprocess": ours.wall_time_us if ours else None,
                    "do_bench": bench_us,
                    "timer": loop_us,
                    "timer_again": again_us,
                },
                "device_us": {
                    "worker": theirs.device_time_us if theirs else None,
                    "inprocess": ours.device_time_us if ours else None,
                },
                "ran_compiled": {
                    "inprocess": ours.ran_compiled if ours else None,
                    "worker": theirs.ran_compiled if theirs else None,
                },
                "noisy": {
                    "inprocess": ours.noise_reasons if ours else None,
                    "worker": theirs.noise_reasons if theirs else None,
                },
                "diagnostics": (ours.diagnostics if ours else []) + (theirs.diagnostics if theirs else []),
            }
            cell["checks"] = {
                "kernels_equal_bare_profiler": None
                if bare_count is None
                else ours is not None and abs(ours.kernels_per_call - bare_count) < 1e-6,
                "worker_vs_inprocess": close(cell["wall_us"]["worker"], cell["wall_us"]["inprocess"]),
                "timer_vs_timer_again": close(loop_us, again_us),
                "inprocess_vs_timer": close(cell["wall_us"]["inprocess"], loop_us),
                "worker_vs_timer": close(cell["wall_us"]["worker"], loop_us),
                "inprocess_vs_do_bench_device_bound": close(cell["wall_us"]["inprocess"], bench_us)
                if ours is not None and ours.device_time_us >= 0.8 * loop_us
                else None,
            }
            if ours is not None and device.type == "cuda" and ours.input_bytes > 2 * l2:
                cell["device_per_kernel_vs_bare"] = [
                    {
                        "kernel": k.short_name,
                        "engine_us": k.device_time_us,
                        "bare_us": bare_us.get(_key(k.name)),
                        "ratio": k.device_time_us / bare_us[_key(k.name)] if bare_us.get(_key(k.name)) else None,
                    }
                    for k in ours.kernels
                ]
            cells.append(cell)
        del inputs
        if device.type == "cuda":
            torch.cuda.empty_cache()
    return {
        "chain": chain.name,
        "text": chain.text,
        "dtype": chain.dtype,
        "cells": cells,
        "failures": inproc_failures + [f"worker: {f}" for f in worker_failures],
    }


def _key(name: str) -> str:
    from probes.link.kernel_names import strip_graph_prefix

    return strip_graph_prefix(name)


# -- the 12-size sweep, both orders ------------------------------------------------------------------------


def sweep_both_orders(device: Any, sizes: list[int]) -> dict:
    from probes.engine import compiling

    runs = {}
    for label, order in (("ascending", sizes), ("descending", sizes[::-1])):
        compiling._compiled_cache.clear()
        results, failures = run_inprocess(SWEEP_CHAIN, order, ["compiled"], str(device))
        runs[label] = {"failures": failures, "results": {n: m for (n, _), m in results.items()}}
    up, down = runs["ascending"]["results"], runs["descending"]["results"]
    rows = []
    for n in sizes:
        a, b = up.get(n), down.get(n)
        rows.append(
            {
                "size": n,
                "compiled": [
                    bool(a and a.ran_compiled and not a.compile.cached),
                    bool(b and b.ran_compiled and not b.compile.cached),
                ],
                "kernels": [
                    [k.short_name for k in a.kernels] if a else None,
                    [k.short_name for k in b.kernels] if b else None,
                ],
                "device_us": [a.device_time_us if a else None, b.device_time_us if b else None],
                "wall_us": [a.wall_time_us if a else None, b.wall_time_us if b else None],
                "fallback": [a.fallback_reason if a else "missing", b.fallback_reason if b else "missing"],
            }
        )
    ok = all(
        all(r["compiled"]) and r["kernels"][0] == r["kernels"][1] and close(*r["device_us"], SWEEP_TOLERANCE, 0.0)
        for r in rows
    )
    return {
        "chain": SWEEP_CHAIN.text,
        "sizes": sizes,
        "rows": rows,
        "failures": runs["ascending"]["failures"] + runs["descending"]["failures"],
        "pass": ok,
    }


# -- ncu ----------------------------------------------------------------------------------------------


def ncu_target(name: str, n: int, mode: str) -> None:
    """Run under ncu: warm up outside the profiled range, then 3 calls inside it."""
    import torch

    chain = next(c for c in CHAINS if c.name == name)
    device = torch.device("cuda:0")
    with tempfile.TemporaryDirectory() as folder:
        module = user_module([chain], Path(folder))
        fn = getattr(module, chain.name)
        user = fn if mode == "eager" else torch.compile(fn, dynamic=False)
        inputs = inputs_for(chain, n, device)
        for _ in range(5):
            user(*inputs, N=n)
        torch.cuda.synchronize()
        torch.cuda.cudart().cudaProfilerStart()
        for _ in range(3):
            user(*inputs, N=n)
        torch.cuda.synchronize()
        torch.cuda.cudart().cudaProfilerStop()


def ncu_compare(device: Any, deadline: float) -> list[dict]:
    from ncu_csv import parse_ncu_csv

    ncu = shutil.which("ncu")
    if ncu is None:
        return [{"skipped": "ncu is not on PATH"}]
    rows = []
    for name, n, mode in NCU_TARGETS:
        left = deadline - time.monotonic()
        if left < 30:
            rows.append({"chain": name, "size": n, "mode": mode, "skipped": "out of time budget"})
            continue
        chain = next(c for c in CHAINS if c.name == name)
        ours, failures = run_inprocess(chain, [n], [mode], str(device))
        command = [
            ncu,
            "--cache-control",
            "all",
            "--clock-control",
            "none",
            "--metrics",
            "gpu__time_duration.sum",
            "--profile-from-start",
            "off",
            "--csv",
            "--page",
            "raw",
            "--print-units",
            "base",
            sys.executable,
            __file__,
            "--ncu-target",
            name,
            str(n),
            mode,
        ]
        log(f"ncu {name} N={n:.0e} {mode}")
        try:
            proc = subprocess.run(command, capture_output=True, text=True, timeout=min(120, left))
        except subprocess.TimeoutExpired:
            rows.append({"chain": name, "size": n, "mode": mode, "skipped": "ncu timed out"})
            continue
        launches = parse_ncu_csv(proc.stdout)
        by_kernel: dict[str, list[float]] = {}
        for kernel, us in launches:
            by_kernel.setdefault(kernel, []).append(us)
        measured = ours.get((n, mode))
        kernels = []
        for k in measured.kernels if measured else []:
            found = next((v for key, v in by_kernel.items() if _same_kernel(k.name, key)), None)
            ncu_us = statistics.median(found) if found else None
            kernels.append(
                {
                    "kernel": k.short_name,
                    "engine_us": k.device_time_us,
                    "ncu_us": ncu_us,
                    "ratio": k.device_time_us / ncu_us if ncu_us else None,
                    "pass": close(k.device_time_us, ncu_us, NCU_TOLERANCE, 0.0),
                }
            )
        rows.append(
            {
                "chain": name,
                "size": n,
                "mode": mode,
                "kernels": kernels,
                "failures": failures,
                "ncu_kernels": sorted(by_kernel),
                "ncu_exit": proc.returncode,
                "ncu_tail": (proc.stdout + proc.stderr)[-500:] if not launches else "",
            }
        )
    return rows


def _base(name: str) -> str:
    """``void at::native::reduce_kernel<512, 1, ...>(...)`` -> ``at::native::reduce_kernel``."""
    name = _key(name).removeprefix("void ").strip()
    return name.split("<")[0].split("(")[0].strip()


def _same_kernel(profiler_name: str, ncu_name: str) -> bool:
    if _key(profiler_name) == ncu_name or ncu_name in profiler_name or _key(profiler_name) in ncu_name:
        return True
    theirs = _base(ncu_name)
    return bool(theirs) and (_base(profiler_name) == theirs or _base(profiler_name).endswith("::" + theirs))


# -- the run ----------------------------------------------------------------------------------------------


def summarise(report: dict) -> list[str]:
    lines = []
    for chain in report["chains"]:
        for cell in chain["cells"]:
            if "skipped" in cell:
                lines.append(f"{chain['chain']:22} N={cell['size']:<10.0e} skipped: {cell['skipped']}")
                continue
            w = cell["wall_us"]
            fails = [name for name, ok in cell["checks"].items() if ok is False]
            fmt = lambda v: f"{v:9.1f}" if v is not None else "        -"  # noqa: E731
            lines.append(
                f"{chain['chain']:22} N={cell['size']:<8.0e} {cell['mode']:9} "
                f"k={cell['kernels']['engine']}/{cell['kernels']['bare_profiler']}"
                f"  wall worker{fmt(w['worker'])} inproc{fmt(w['inprocess'])} "
                f"timer{fmt(w['timer'])}/{fmt(w['timer_again']).strip()} do_bench{fmt(w['do_bench'])}"
                + (f"  FAIL {','.join(fails)}" if fails else "")
            )
    checks: dict[str, list[int]] = {}
    for chain in report["chains"]:
        for cell in chain["cells"]:
            for name, ok in cell.get("checks", {}).items():
                if ok is not None:
                    checks.setdefault(name, [0, 0])[0 if ok else 1] += 1
    lines.append("")
    for name, (passed, failed) in checks.items():
        lines.append(f"{name:32} {passed} passed, {failed} failed")
    if report.get("sweep"):
        lines.append(f"12-size compiled sweep, both orders: {'PASS' if report['sweep']['pass'] else 'FAIL'}")
    for row in report.get("ncu", []):
        for k in row.get("kernels", []):
            lines.append(
                f"ncu {row['chain']} N={row['size']:.0e} {row['mode']}: {k['kernel']} "
                f"engine {k['engine_us']:.1f} µs, ncu {k['ncu_us'] or 0:.1f} µs"
                + (f" ({k['ratio'] - 1:+.1%})" if k["ratio"] else "")
            )
        if "skipped" in row:
            lines.append(f"ncu {row.get('chain', '')}: skipped: {row['skipped']}")
    if report.get("host_probe"):
        lines.append(f"host µs per call at 1e2, start -> end: {report['host_probe']}")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="where the JSON goes")
    parser.add_argument("--budget-s", type=float, default=420.0, help="stop starting new work after this long")
    parser.add_argument("--quick", action="store_true", help="fewer chains and sizes")
    parser.add_argument("--chains", default="", help="comma-separated chain names (default: all)")
    parser.add_argument("--no-ncu", action="store_true")
    parser.add_argument("--ncu-target", nargs=3, metavar=("CHAIN", "N", "MODE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    os.environ.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")
    os.environ.setdefault("TEARDOWN_CUPTI", "1")  # as importing probes sets it: see probes/__init__.py
    if args.ncu_target:
        ncu_target(args.ncu_target[0], int(args.ncu_target[1]), args.ncu_target[2])
        return 0
    if args.out is None:
        parser.error("--out is required")

    import torch

    began = time.monotonic()
    deadline = began + args.budget_s
    cuda = torch.cuda.is_available()
    device = torch.device("cuda:0" if cuda else "cpu")
    chains = [c for c in CHAINS if not args.chains or c.name in args.chains.split(",")]
    if not cuda:
        chains = [
            Chain(c.name, c.text, c.dtype, tuple(n for n in CPU_SIZES if n >= min(c.sizes)))
            for c in chains
            if c.name in CPU_CHAINS
        ]
    if args.quick:
        chains = chains[:3]
    folder = Path(tempfile.mkdtemp(prefix="truth-"))
    module = user_module(list(chains) + [SWEEP_CHAIN], folder)
    report: dict[str, Any] = {
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "host": platform.node(),
        "device": torch.cuda.get_device_name(0) if cuda else f"CPU ({os.cpu_count()} cores)",
        "torch": torch.__version__,
        "python": platform.python_version(),
        "triton": _version("triton"),
        "chains": [],
        "budget_s": args.budget_s,
    }
    host_start = host_probe(device, module, chains)
    log(f"host probe at start: {host_start}")
    worker = Worker()
    log(f"worker ready (pid {worker.ready.pid}, torch {worker.ready.torch_version})")
    try:
        for chain in chains:
            if time.monotonic() > deadline:
                report["chains"].append({"chain": chain.name, "cells": [], "failures": ["skipped: out of time budget"]})
                continue
            log(f"{chain.name}: sizes {list(chain.sizes)}")
            report["chains"].append(chain_cells(chain, list(chain.sizes), device, module, worker))
            _write(args.out, report)
    finally:
        worker.close()
    if time.monotonic() < deadline:
        log("12-size compiled sweep, both orders")
        sizes = list(SWEEP_CHAIN.sizes) if cuda else [16 + 8 * i for i in range(12)]
        report["sweep"] = sweep_both_orders(device, sizes)
    if cuda and not args.no_ncu:
        report["ncu"] = ncu_compare(device, deadline + 60)
    report["host_probe"] = {"start": host_start, "end": host_probe(device, module, chains)}
    report["seconds"] = time.monotonic() - began
    _write(args.out, report)
    for line in summarise(report):
        print(line)
    return 0


def _version(name: str) -> str | None:
    try:
        return importlib.import_module(name).__version__  # type: ignore[attr-defined]
    except Exception:
        return None


def _write(path: Path, report: dict) -> None:
    path.write_text(json.dumps(report, indent=1, default=str))


if __name__ == "__main__":
    sys.exit(main())
