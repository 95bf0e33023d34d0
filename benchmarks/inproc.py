"""In-process measurements for benchmarks/run.py, each run in a fresh subprocess of its own.

    python benchmarks/inproc.py TASK --json OUT.json [options]

Tasks (the result goes to OUT.json; stdout and stderr are left to the libraries' chatter):
  bare-compile   a bare torch.compile + first call, per fresh constant, timed inside one fresh process
                 (--serve: then a chain per line of stdin, its time a JSON line on stdout)
  triton-sweep   a triton.testing.perf_report sweep (do_bench of eager and compiled per size)
  wall           kernel-tui's wall time per call (probes.engine.sweep.run_profile) interleaved with do_bench
  devtime        kernel-tui's per-kernel device time vs raw torch.profiler events from a plain loop
  ncu-target     the fused kernel alone, for Nsight Compute (profiled range = cudaProfilerStart/Stop)
  devmem         torch.cuda.memory_allocated before/after each of many run_profile calls
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import re
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

CHAIN = "(a + b).relu()"


def _write(path: str, data: object) -> None:
    Path(path).write_text(json.dumps(data, indent=1))


def _device(name: str | None):
    import torch

    if name in (None, "", "auto"):
        return torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
    return torch.device(name)


def _sync(device) -> None:
    import torch

    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _inputs(n: int, device):
    import torch

    torch.manual_seed(0)
    return torch.randn(n, device=device), torch.randn(n, device=device)


def run_engine(chain: str, sizes: list[int], modes: list[str], device: str) -> tuple[list, list]:
    """probes.engine.sweep.run_profile in-process: (measurements, failures)."""
    from probes.engine.sweep import run_profile
    from probes.link.protocol import MeasurementResult, ProfileRequest, RequestFailed

    measurements, failures = [], []

    def emit(event) -> None:
        if isinstance(event, MeasurementResult):
            measurements.append(event.measurement)
        elif isinstance(event, RequestFailed):
            failures.append(event.error.located())

    run_profile(ProfileRequest("bench", chain, sizes=sizes, modes=modes, device=device), emit)
    return measurements, failures


# ---------------------------------------------------------------------------------------------


def task_bare_compile(args: argparse.Namespace) -> dict:
    """torch.compile + first call for each of ``--chains``; the first one is the fresh process's.
    Floats are not specialised by Dynamo: a second constant in the same chain would reuse the first
    one's graph, so the chains differ in their ops. With ``--serve``, then one more chain per line
    of stdin, each answered by a JSON line on stdout: compiles in turns with another program's."""
    begin = time.perf_counter()
    import torch

    import_s = time.perf_counter() - begin
    device = _device(args.device)
    a, b = _inputs(args.size, device)
    _sync(device)

    def compile_and_call(source: str) -> dict:
        fn = eval(f"lambda a, b: {source}")  # a fresh code object
        _sync(device)
        start = time.perf_counter()
        compiled = torch.compile(fn)
        compiled(a, b)
        _sync(device)
        return {"chain": source, "seconds": time.perf_counter() - start}

    runs = [compile_and_call(source) for source in args.chains]
    if args.serve:
        print(json.dumps({"ready": True}), flush=True)
        for line in sys.stdin:
            runs.append(compile_and_call(line.strip()))
            print(json.dumps(runs[-1]), flush=True)
    return {"import_torch_s": import_s, "device": str(device), "runs": runs}


def task_triton_sweep(args: argparse.Namespace) -> dict:
    """The usual hand-written way to sweep: triton.testing.perf_report over the same sizes."""
    begin = time.perf_counter()
    import torch
    import triton
    import triton.testing

    device = _device(args.device)
    imported = time.perf_counter()

    def fn(a, b):
        return (a + b).relu()

    compiled = torch.compile(fn)
    found: dict[str, float] = {}

    def measure_one(N: int, provider: str) -> float:
        a = torch.randn(N, device=device)
        b = torch.randn(N, device=device)
        call = fn if provider == "eager" else compiled
        ms = triton.testing.do_bench(lambda: call(a, b), return_mode="median")
        found[f"{provider}:{N}"] = ms * 1e3
        return ms

    bench = triton.testing.perf_report(
        triton.testing.Benchmark(
            x_names=["N"],
            x_vals=args.sizes,
            x_log=True,
            line_arg="provider",
            line_vals=["eager", "compiled"],
            line_names=["eager", "torch.compile"],
            ylabel="ms",
            plot_name="add-relu",
            args={},
        )
    )(measure_one)

    style = "triton.testing.perf_report"
    start = time.perf_counter()
    try:
        bench.run(print_data=True, show_plots=False)
    except ImportError as exc:  # perf_report's table needs pandas (and matplotlib): same loop by hand
        style = f"the same do_bench loop by hand ({exc.name or exc} missing for perf_report)"
        found.clear()
        start = time.perf_counter()
        for n in args.sizes:
            for provider in ("eager", "compiled"):
                measure_one(n, provider)
    sweep_s = time.perf_counter() - start
    return {
        "import_s": imported - begin,
        "sweep_s": sweep_s,
        "us": found,
        "style": style,
        "triton": triton.__version__,
    }


def task_wall(args: argparse.Namespace) -> dict:
    """Ours (run_profile's wall_time_us) and do_bench's median, alternated, per size x mode."""
    import torch
    import triton.testing
    from torch.utils.benchmark import Timer

    from probes.chain.expr import parse_chain
    from probes.engine.compiling import CHAIN_NAMESPACE

    device = _device(args.device)
    out = []

    def plain_fn(a, b):
        return (a + b).relu()

    # The very callable the engine times (the chain built by probes.chain.expr, which takes N too), so
    # that the comparison is of the timing method alone; and a plain function, for reference.
    chain_fn = parse_chain(CHAIN).build_function(CHAIN_NAMESPACE)
    for n in args.sizes:
        a, b = _inputs(n, device)
        compiled_chain = torch.compile(chain_fn, dynamic=False)
        compiled_plain = torch.compile(plain_fn, dynamic=False)
        for mode in args.modes:
            same = functools.partial(chain_fn if mode == "eager" else compiled_chain, a, b, N=n)
            plain = functools.partial(plain_fn if mode == "eager" else compiled_plain, a, b)
            for _ in range(3):  # warm up (compile) outside anything timed
                same()
                plain()
            _sync(device)
            ours, timer, theirs, theirs_plain, failures = [], [], [], [], []
            for _ in range(args.rounds):
                measurements, failed = run_engine(CHAIN, [n], [mode], str(device))
                failures += failed
                if measurements:
                    ours.append(measurements[0].wall_time_us)
                timer.append(
                    Timer(stmt="same()", globals={"same": same}).blocked_autorange(min_run_time=0.2).median * 1e6
                )
                theirs.append(triton.testing.do_bench(same, return_mode="median") * 1e3)
                theirs_plain.append(triton.testing.do_bench(plain, return_mode="median") * 1e3)
            out.append(
                {
                    "size": n,
                    "mode": mode,
                    "ours_us": ours,
                    "timer_us": timer,
                    "do_bench_us": theirs,
                    "do_bench_plain_fn_us": theirs_plain,
                    "failures": failures,
                }
            )
        del a, b, compiled_chain, compiled_plain, same, plain
        torch.cuda.empty_cache()
    return {"rows": out}


def _norm(name: str) -> str:
    return re.sub(r"^graph_\d+_", "", name)


def task_devtime(args: argparse.Namespace) -> dict:
    """Ours (kernel rows' median device time per launch) vs raw profiler events from a plain loop
    (each call preceded by an L2 flush on CUDA, as ours and ncu do)."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    from probes.engine.timing import L2_FLUSH_BYTES

    device = _device(args.device)
    measurements, failures = run_engine(CHAIN, args.sizes, ["eager", "compiled"], str(device))
    ours: dict[tuple[int, str], list] = {}
    for m in measurements:
        ours[(m.size, m.mode)] = [
            {"name": row.name, "short": row.short_name, "us": row.device_time_us, "launches": row.launches_per_call}
            for row in m.kernels
        ]

    def chain_fn(a, b):
        return (a + b).relu()

    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.type == "cuda" else [])
    wanted_type = torch.autograd.DeviceType.CUDA if device.type == "cuda" else torch.autograd.DeviceType.CPU
    flush_buffer = torch.empty(L2_FLUSH_BYTES, dtype=torch.int8, device=device) if device.type == "cuda" else None
    rows = []
    for n in args.sizes:
        a, b = _inputs(n, device)
        compiled = torch.compile(chain_fn, dynamic=False)
        for mode, call in (("eager", chain_fn), ("compiled", compiled)):
            for _ in range(3):
                call(a, b)
            _sync(device)
            with profile(activities=activities) as prof:
                for _ in range(args.reps):
                    if flush_buffer is not None:
                        flush_buffer.zero_()
                    call(a, b)
                _sync(device)
            raw: dict[str, list[float]] = {}
            for event in prof.profiler.kineto_results.events():
                if event.device_type() != wanted_type:
                    continue
                raw.setdefault(_norm(event.name()), []).append(event.duration_ns() / 1e3)
            for kernel in ours.get((n, mode), []):
                times = raw.get(_norm(kernel["name"]), [])
                rows.append(
                    {
                        "size": n,
                        "mode": mode,
                        "kernel": kernel["short"],
                        "name": kernel["name"],
                        "ours_us": kernel["us"],
                        "raw_us": statistics.median(times) if times else None,
                        "raw_events": len(times),
                    }
                )
        del a, b, compiled
        if device.type == "cuda":
            torch.cuda.empty_cache()
    return {"rows": rows, "failures": failures, "reps": args.reps}


def task_ncu_target(args: argparse.Namespace) -> dict:
    """The compiled fused kernel, warmed up outside the profiled range, then ``launches`` calls
    per size inside cudaProfilerStart/Stop (run under ncu --profile-from-start off)."""
    import torch

    device = _device(args.device)

    def chain_fn(a, b):
        return (a + b).relu()

    done = []
    for n in args.sizes:
        a, b = _inputs(n, device)
        compiled = torch.compile(chain_fn, dynamic=False)
        for _ in range(5):
            compiled(a, b)
        torch.cuda.synchronize(device)
        torch.cuda.cudart().cudaProfilerStart()
        for _ in range(args.launches):
            compiled(a, b)
        torch.cuda.synchronize(device)
        torch.cuda.cudart().cudaProfilerStop()
        done.append(n)
        del a, b, compiled
    return {"sizes": done, "launches": args.launches}


def task_devmem(args: argparse.Namespace) -> dict:
    """memory_allocated before/after each of ``runs`` run_profile calls (after one warm-up call)."""
    import torch

    device = _device(args.device)
    if device.type != "cuda":
        return {"skipped": "no CUDA device"}
    _, failures = run_engine(CHAIN, [args.size], args.modes, str(device))
    baseline = torch.cuda.memory_allocated(device)
    deltas = []
    begin = time.perf_counter()
    for _ in range(args.runs):
        before = torch.cuda.memory_allocated(device)
        _, failed = run_engine(CHAIN, [args.size], args.modes, str(device))
        failures += failed
        after = torch.cuda.memory_allocated(device)
        deltas.append({"before": before, "after": after})
    return {
        "baseline": baseline,
        "runs": deltas,
        "max_above_baseline": max(max(d["after"] - baseline for d in deltas), 0),
        "max_delta": max(abs(d["after"] - d["before"]) for d in deltas),
        "seconds": time.perf_counter() - begin,
        "failures": failures,
    }


TASKS = {
    "bare-compile": task_bare_compile,
    "triton-sweep": task_triton_sweep,
    "wall": task_wall,
    "devtime": task_devtime,
    "ncu-target": task_ncu_target,
    "devmem": task_devmem,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("task", choices=sorted(TASKS))
    parser.add_argument("--json", required=True)
    parser.add_argument("--device", default="auto")
    parser.add_argument("--size", type=int, default=1_000_000)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000_000])
    parser.add_argument("--modes", nargs="+", default=["eager", "compiled"])
    parser.add_argument(
        "--chains", nargs="+", default=["(a + b).relu() * 1.2345"], help="bare-compile: chains of a and b"
    )
    parser.add_argument("--serve", action="store_true", help="bare-compile: then compile chains read from stdin")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--launches", type=int, default=5)
    args = parser.parse_args()
    os.environ.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")
    _write(args.json, TASKS[args.task](args))


if __name__ == "__main__":
    main()
