"""GPU investigation (not committed): why the worker's wall time is inflated, the flush bias,
the recompile limit, and the copy peak. Prints JSON lines; run: python lab/investigate.py PART."""

import gc
import json
import os
import statistics
import sys
import threading
import time

import torch

sys.path.insert(0, os.getcwd())

DEV = torch.device("cuda:0")


def out(**kw):
    print(json.dumps(kw), flush=True)


def host_us(fn, n=2000):
    """Median host time per call in µs (batches of 100, sync at the end of each batch)."""
    for _ in range(50):
        fn()
    torch.cuda.synchronize()
    batches = []
    for _ in range(n // 100):
        t = time.perf_counter()
        for _ in range(100):
            fn()
        batches.append((time.perf_counter() - t) / 100 * 1e6)
        torch.cuda.synchronize()
    return round(statistics.median(batches), 2)


def wall_events(fn, reps=50, flush_buf=None):
    """CUDA-event wall per call with flush first (the app's way)."""
    times = []
    for _ in range(reps):
        if flush_buf is not None:
            flush_buf.zero_()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e) * 1e3)
    return round(statistics.median(times), 2)


def part_host():
    """Host overhead of one eager and one compiled call as the process goes through the worker's
    life: fresh, after profiler sessions, after compiles, after many compiles, after gc.freeze,
    with a blocked reader thread, after idling."""
    from probes.expr import parse_chain
    from probes.measure import CHAIN_NAMESPACE, L2Flusher, measure, profile_run

    chain = parse_chain("(a * b + c).tanh()")
    n = 100
    a, b, c = (torch.randn(n, device=DEV) for _ in range(3))
    eager = chain.build_function(CHAIN_NAMESPACE)
    ecall = lambda: eager(a, b, c, N=n)  # noqa: E731
    flush_buf = torch.empty(256 * 1024 * 1024, dtype=torch.int8, device=DEV)

    def stage(name, ccall=None):
        rec = {"stage": name, "eager_host_us": host_us(ecall), "eager_wall_us": wall_events(ecall, flush_buf=flush_buf)}
        if ccall is not None:
            rec["compiled_host_us"] = host_us(ccall)
            rec["compiled_wall_us"] = wall_events(ccall, flush_buf=flush_buf)
        out(part="host", **rec)

    stage("fresh")
    for i in range(3):
        profile_run(ecall, DEV, 5, L2Flusher(DEV))
    stage("after 3 profiler sessions")
    comp = torch.compile(chain.build_function(CHAIN_NAMESPACE), dynamic=False)
    ccall = lambda: comp(a, b, c, N=n)  # noqa: E731
    ccall()
    stage("after 1 compile", ccall)
    others = []
    for size in (200, 300, 400, 500, 600, 700, 800, 900):
        x, y, z = (torch.randn(size, device=DEV) for _ in range(3))
        f = torch.compile(chain.build_function(CHAIN_NAMESPACE), dynamic=False)
        f(x, y, z, N=size)
        others.append(f)
    stage("after 9 compiles", ccall)
    profile_run(ccall, DEV, 5, L2Flusher(DEV))
    stage("after profiling compiled", ccall)
    gc.freeze()
    stage("after gc.freeze", ccall)
    r, w = os.pipe()
    reader = threading.Thread(target=lambda: os.read(r, 1), daemon=True)
    reader.start()
    stage("with a blocked reader thread", ccall)
    time.sleep(3)
    stage("after 3 s idle", ccall)
    m = measure(chain, "eager", n, DEV, "fp32", [a, b, c])
    out(part="host", stage="measure() eager", wall=m.wall_time_us, device=m.device_time_us)
    m = measure(chain, "compiled", n, DEV, "fp32", [a, b, c])
    out(part="host", stage="measure() compiled", wall=m.wall_time_us, device=m.device_time_us)
    os.write(w, b"x")


def part_worker():
    """The app's path: one worker, three identical requests; vs the in-process run_profile."""
    import asyncio

    from probes.client import WorkerClient
    from probes.protocol import MeasurementResult, ProfileRequest
    from probes.sweep import run_profile

    sizes = [100, 10**6, 10**7]
    chain = "(a * b + c).tanh()"

    def show(tag, m):
        out(part="worker", tag=tag, mode=m.mode, n=m.size, wall=round(m.wall_time_us, 2), device=round(m.device_time_us, 2))

    async def go():
        client = WorkerClient()
        await client.start()
        for i in range(3):
            async for ev in client.request(ProfileRequest(id=f"r{i}", chain=chain, sizes=sizes, modes=["eager", "compiled"])):
                if isinstance(ev, MeasurementResult):
                    show(f"worker req {i}", ev.measurement)
        await client.close()

    asyncio.run(go())
    events = []
    run_profile(ProfileRequest(id="cli", chain=chain, sizes=sizes, modes=["eager", "compiled"]), events.append)
    for ev in events:
        if isinstance(ev, MeasurementResult):
            show("in-process", ev.measurement)
    try:
        import triton.testing as tt

        a, b, c = (torch.randn(10**7, device=DEV) for _ in range(3))
        f = torch.compile(lambda a, b, c: (a * b + c).tanh())
        f(a, b, c)
        out(part="worker", tag="do_bench", n=10**7, compiled_ms=tt.do_bench(lambda: f(a, b, c)), eager_ms=tt.do_bench(lambda: (a * b + c).tanh()))
    except Exception as exc:  # noqa: BLE001
        out(part="worker", error=repr(exc))


def part_flush():
    """Device time of reductions under different flushes, against no flush."""
    from torch.profiler import ProfilerActivity, profile

    big = torch.empty(256 * 1024 * 1024, dtype=torch.int8, device=DEV)
    other = torch.empty(256 * 1024 * 1024, dtype=torch.int8, device=DEV)
    flushes = {
        "none": lambda: None,
        "zero": lambda: big.zero_(),
        "zero+read": lambda: (big.zero_(), other.sum(dtype=torch.int32)),
        "read": lambda: other.sum(dtype=torch.int32),
    }
    cases = []
    a8 = torch.randn(10**8, device=DEV)
    csum = torch.compile(lambda x: x.sum())
    csum(a8)
    cases.append(("compiled a.sum() 1e8", lambda: csum(a8)))
    a7, b7 = torch.randn(10**7, device=DEV), torch.randn(10**7, device=DEV)
    cases.append(("eager (a*b).sum() 1e7", lambda: (a7 * b7).sum()))
    cmulsum = torch.compile(lambda x, y: (x * y).sum())
    cmulsum(a7, b7)
    cases.append(("compiled (a*b).sum() 1e7", lambda: cmulsum(a7, b7)))
    cadd = torch.compile(lambda x, y: (x + y).relu())
    cadd(a7, b7)
    cases.append(("compiled (a+b).relu() 1e7", lambda: cadd(a7, b7)))
    for name, fn in cases:
        for fname, flush in flushes.items():
            for _ in range(3):
                flush()
                fn()
            torch.cuda.synchronize()
            with profile(activities=[ProfilerActivity.CUDA]) as prof:
                for _ in range(20):
                    flush()
                    torch.cuda.synchronize()
                    fn()
                    torch.cuda.synchronize()
            per = {}
            for e in prof.events():
                if e.device_type == torch.autograd.DeviceType.CUDA:
                    per.setdefault(e.name, []).append(e.time_range.elapsed_us())
            # the case's kernels are the ones not launched by the flush: drop names the flush uses
            rows = {k[:60]: round(statistics.median(v), 2) for k, v in per.items() if len(v) >= 20}
            out(part="flush", case=name, flush=fname, kernels=rows)


def part_recompile():
    """A 10-size compiled sweep through run_profile: really compiled at every size?"""
    from probes.protocol import MeasurementResult, ProfileRequest
    from probes.sweep import run_profile

    out(part="recompile", limit=getattr(torch._dynamo.config, "recompile_limit", None),
        cache_limit=getattr(torch._dynamo.config, "cache_size_limit", None))
    events = []
    sizes = [16 * 2**i for i in range(10)]
    run_profile(ProfileRequest(id="s", chain="(a * b + c).sigmoid()", sizes=sizes, modes=["compiled"]), events.append)
    for ev in events:
        if isinstance(ev, MeasurementResult):
            m = ev.measurement
            out(part="recompile", n=m.size, ran_compiled=m.ran_compiled, compile_s=round(m.compile_time_s or 0, 4),
                kernels=[k.short_name for k in m.kernels], graphs=m.compile.graphs if m.compile else None)


def part_peak():
    """Copy vs triad vs add: which moves the most bytes per second (best of 30)."""
    nb = 1 << 30
    x = torch.empty(nb // 4, device=DEV).fill_(1.0)
    y = torch.empty_like(x).fill_(2.0)
    z = torch.empty_like(x)
    ops = {
        "copy": (lambda: z.copy_(x), 2 * nb),
        "add": (lambda: torch.add(x, y, out=z), 3 * nb),
        "triad": (lambda: torch.add(x, y, alpha=3.0, out=z), 3 * nb),
        "scale": (lambda: torch.mul(x, 3.0, out=z), 2 * nb),
    }
    for name, (fn, nbytes) in ops.items():
        times = []
        for _ in range(32):
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            fn()
            e.record()
            e.synchronize()
            times.append(s.elapsed_time(e) * 1e-3)
        times = times[2:]
        out(part="peak", op=name, best_gbps=round(nbytes / min(times) / 1e9), median_gbps=round(nbytes / statistics.median(times) / 1e9))


def part_ncu_target():
    """Run under ncu: the reductions at sizes beyond L2, a few launches each."""
    a8 = torch.randn(10**8, device=DEV)
    csum = torch.compile(lambda x: x.sum())
    a7, b7 = torch.randn(10**7, device=DEV), torch.randn(10**7, device=DEV)
    cmulsum = torch.compile(lambda x, y: (x * y).sum())
    for _ in range(3):
        csum(a8)
        cmulsum(a7, b7)
        (a7 * b7).sum()
    torch.cuda.synchronize()


if __name__ == "__main__" and sys.argv[1] in ("host", "worker", "flush", "recompile", "peak", "ncu"):
    {"host": part_host, "worker": part_worker, "flush": part_flush, "recompile": part_recompile,
     "peak": part_peak, "ncu": part_ncu_target}[sys.argv[1]]()


def _own_frame(fn):
    def chain_call(*args, **kwargs):
        return fn(*args, **kwargs)

    chain_call.__code__ = chain_call.__code__.replace(co_varnames=chain_call.__code__.co_varnames)
    return chain_call


def part_guards():
    """Host time of one compiled call while k other compiled chains are alive: exec'd function
    compiled directly (torch 2.11 wraps it in the shared `inner`) vs wrapped in a frame of its own."""
    from probes.expr import parse_chain
    from probes.measure import CHAIN_NAMESPACE

    chain = parse_chain("(a * b + c).tanh()")
    for label, wrap in (("direct", lambda f: f), ("own frame", _own_frame)):
        torch._dynamo.reset()
        alive = []
        for k, size in enumerate((100, 101, 102, 103, 104, 105, 106, 107, 108, 109)):
            x, y, z = (torch.randn(size, device=DEV) for _ in range(3))
            f = torch.compile(wrap(chain.build_function(CHAIN_NAMESPACE)), dynamic=False)
            f(x, y, z, N=size)
            alive.append((f, x, y, z, size))
            if k in (0, 3, 7, 9):
                f0, x0, y0, z0, n0 = alive[0]
                out(part="guards", how=label, alive=k + 1, oldest_host_us=host_us(lambda: f0(x0, y0, z0, N=n0), 1000),
                    newest_host_us=host_us(lambda: f(x, y, z, N=size), 1000))


def _sm_clock():
    try:
        import pynvml

        pynvml.nvmlInit()
        h = pynvml.nvmlDeviceGetHandleByIndex(0)
        return pynvml.nvmlDeviceGetClockInfo(h, pynvml.NVML_CLOCK_SM)
    except Exception:  # noqa: BLE001
        return None


def _cpu_mhz():
    try:
        return [float(l.split(":")[1]) for l in open("/proc/cpuinfo") if l.startswith("cpu MHz")][:2]
    except Exception:  # noqa: BLE001
        return None


def part_idle():
    """How host time per call recovers after an idle pause, and what brings it back."""
    a, b, c = (torch.randn(100, device=DEV) for _ in range(3))
    f = lambda: (a * b + c).tanh()  # noqa: E731

    def curve(tag, batches=30):
        per = []
        for _ in range(batches):
            t = time.perf_counter()
            for _ in range(100):
                f()
            per.append(round((time.perf_counter() - t) / 100 * 1e6, 1))
            torch.cuda.synchronize()
        out(part="idle", tag=tag, sm_mhz=_sm_clock(), cpu_mhz=_cpu_mhz(), batches_us=per)

    curve("busy baseline")
    curve("busy baseline again")
    time.sleep(3)
    curve("after 3 s sleep", 60)
    time.sleep(3)
    t = time.perf_counter()
    while time.perf_counter() - t < 0.3:
        pass
    curve("after 3 s sleep + 0.3 s CPU spin")
    stop = threading.Event()
    spinner = threading.Thread(target=lambda: [None for _ in iter(lambda: stop.is_set(), True)], daemon=True)
    spinner.start()
    time.sleep(3)
    stop.set()
    spinner.join()
    curve("after 3 s sleep with another thread spinning")
    time.sleep(3)
    x = torch.empty(1 << 28, device=DEV)
    t = time.perf_counter()
    while time.perf_counter() - t < 0.3:
        x.add_(1.0)
        torch.cuda.synchronize()
    curve("after 3 s sleep + 0.3 s GPU busy")
    time.sleep(0.5)
    curve("after 0.5 s sleep")


def part_worker_idle():
    """Worker requests back to back vs with a 3 s pause between them."""
    import asyncio

    from probes.client import WorkerClient
    from probes.protocol import MeasurementResult, ProfileRequest

    chain = "(a * b + c).tanh()"

    async def go():
        client = WorkerClient()
        await client.start()
        for i, pause in enumerate((0, 0, 3, 0, 3)):
            await asyncio.sleep(pause)
            async for ev in client.request(ProfileRequest(id=f"r{i}", chain=chain, sizes=[100, 10**7], modes=["eager", "compiled"])):
                if isinstance(ev, MeasurementResult):
                    m = ev.measurement
                    out(part="worker_idle", req=i, pause=pause, mode=m.mode, n=m.size, wall=round(m.wall_time_us, 2), device=round(m.device_time_us, 2))
        await client.close()

    asyncio.run(go())


PARTS = {"guards": part_guards, "idle": part_idle, "worker_idle": part_worker_idle}
if __name__ == "__main__" and sys.argv[1] in PARTS:
    PARTS[sys.argv[1]]()
