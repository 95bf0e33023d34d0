"""The engine on CUDA: the article's story with real kernel names (run where there is a GPU)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

import pytest

torch = pytest.importorskip("torch")

from probes.engine.sweep import run_profile  # noqa: E402
from probes.link.protocol import Measurement, MeasurementResult, ProfileRequest, RequestFailed  # noqa: E402

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")]

N = 10_000_000


def profile(
    chain: str, sizes: list[int], modes: list[str]
) -> tuple[dict[tuple[int, str], Measurement], list[RequestFailed]]:
    events: list = []
    run_profile(ProfileRequest(id="g", chain=chain, sizes=sizes, modes=modes, device="cuda"), events.append)
    results = {
        (e.measurement.size, e.measurement.mode): e.measurement for e in events if isinstance(e, MeasurementResult)
    }
    return results, [e for e in events if isinstance(e, RequestFailed)]


@pytest.fixture(scope="module")
def add_relu() -> dict[tuple[int, str], Measurement]:
    results, failures = profile("(a + b).relu()", [N], ["eager", "compiled", "max-autotune", "reduce-overhead"])
    assert not failures, failures
    return results


def test_eager_is_two_cuda_kernels_moving_20n(add_relu: dict) -> None:
    eager = add_relu[(N, "eager")]
    assert eager.kernels_per_call == 2
    assert not eager.transfers, "no memcpy/memset in an elementwise chain"
    assert eager.bytes_per_call == 20 * N
    assert {tuple(k.ops) for k in eager.kernels} == {("aten::add",), ("aten::relu",)}


def test_compiled_is_one_triton_kernel_moving_12n(add_relu: dict) -> None:
    compiled = add_relu[(N, "compiled")]
    assert compiled.ran_compiled
    (kernel,) = compiled.kernels
    assert kernel.name.startswith("triton_poi_fused_add_relu")
    assert compiled.bytes_per_call == 12 * N
    assert kernel.name in compiled.compile.generated_source
    assert "@triton.jit" in compiled.compile.generated_source[kernel.name]


def test_l2_flush_is_not_counted_and_times_make_sense(add_relu: dict) -> None:
    for m in add_relu.values():
        assert all("FillFunctor" not in k.name for k in m.kernels), "the tool's own L2 flush leaked into the rows"
        assert 0 < m.device_time_us <= m.wall_time_us * 1.05
        assert m.peak_gbps and m.peak_gbps > 1000


def test_fused_kernel_reaches_most_of_peak_at_1e7(add_relu: dict) -> None:
    (kernel,) = add_relu[(N, "compiled")].kernels
    assert kernel.pct_of_peak is not None and kernel.pct_of_peak > 50


def test_other_compile_modes_run_compiled(add_relu: dict) -> None:
    for mode in ("max-autotune", "reduce-overhead"):
        m = add_relu[(N, mode)]
        assert m.ran_compiled, m.fallback_reason
        assert m.kernels_per_call >= 1
        assert any(k.name.startswith("triton_") for k in m.kernels)


def bare_kernel_us(call, reps: int = 20) -> dict[str, float]:
    """Median µs per launch by kernel name from a plain profiled loop: no flush, nothing of the tool."""
    import statistics

    from torch.profiler import ProfilerActivity, profile

    from probes.link.kernel_names import classify_device_event

    for _ in range(5):
        call()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(reps):
            call()
        torch.cuda.synchronize()
    found: dict[str, list[float]] = {}
    for event in prof.events():
        if event.device_type == torch.autograd.DeviceType.CUDA and classify_device_event(event.name) == "kernel":
            found.setdefault(event.name, []).append(event.time_range.elapsed_us())
    return {name: statistics.median(times) for name, times in found.items()}


def test_the_flush_leaves_nothing_for_a_reduction_to_pay_for() -> None:
    """Compiled a.sum() at 1e8 after the engine's flush costs what it costs back to back (where L2
    holds only clean lines): no dirty write-backs of the flush inside the measured kernel. Those
    cost a fifth more; two readings of one side can be several percent apart on a quiet machine,
    so each side's fastest of three, taken in turns, is compared: a cost the flush adds shows in
    all of them."""
    n = 10**8
    a = torch.randn(n, device="cuda")
    compiled = torch.compile(lambda a: a.sum(), dynamic=False)
    engine: list[float] = []
    bare: list[float] = []
    for _ in range(3):
        results, failures = profile("a.sum()", [n], ["compiled"])
        assert not failures, failures
        kernel = max(results[(n, "compiled")].kernels, key=lambda row: row.device_time_us)  # the reduction's body
        engine.append(kernel.device_time_us)
        bare.append(bare_kernel_us(lambda: compiled(a))[kernel.name])
    assert min(engine) == pytest.approx(min(bare), rel=0.05), (engine, bare)


def test_profiled_runs_back_to_back_each_record_the_kernels() -> None:
    """``probes.engine.timing.profile_run`` as a notebook may call it: profiles in a row, nothing
    launched between them. The profiler, told to detach after each profile, loses every second
    profile's device events that way (0 kernels); each run must still have its reps' kernels."""
    from probes.engine.timing import L2Flusher, profile_run

    device = torch.device("cuda")
    a, b = torch.randn(10**6, device=device), torch.randn(10**6, device=device)
    flush = L2Flusher(device)
    runs = [profile_run(lambda: (a + b).relu(), device, 5, flush) for _ in range(4)]
    for run in runs:
        assert run.reps == 5
        assert len(run.launches) == 10, [launch.name for launch in run.launches]
        assert {launch.rep for launch in run.launches} == set(range(5))


@contextlib.contextmanager
def on_one_core() -> Iterator[None]:
    """This process, and every process it starts, on the core it runs on now."""
    allowed = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {_current_cpu()})
    try:
        yield
    finally:
        os.sched_setaffinity(0, allowed)


def _current_cpu() -> int:
    with open("/proc/self/stat") as stat:
        return int(stat.read().rsplit(")", 1)[1].split()[36])  # field 39, "processor"


async def test_a_long_lived_worker_times_calls_like_the_in_process_engine() -> None:
    """Wall time per call through one worker that already served requests (as the app's does)
    agrees with the in-process engine within 10% (or 3 µs) where the device does the work, and is
    at most 25% slower for calls under 100 µs, where the host's time is what is read. A worker
    that reads a compiled call at 1e7 twice as slow as the in-process engine fails it.

    Both sides run on one core, in turns: a GPU host's cores can run Python at speeds several times
    apart, and one core changes speed from second to second, so a host-bound call reads what its
    core gives at the time (the same compiled call takes from 1x to 1.5x its kernel's time of host
    time per call in fresh processes). Each side's fastest of four readings, taken alternately, is
    compared: a cost the worker adds to every call shows in all of its readings. A host-bound call
    may read faster through the worker (when only the worker's first reading caught its core at
    speed); the defect this test is for is a slower one."""
    from probes.link.client import WorkerClient

    chain, sizes, modes = "(a * b + c).tanh()", [10**7, 10**8], ["eager", "compiled"]
    from_worker: dict[tuple[int, str], list[float]] = {}
    in_process: dict[tuple[int, str], list[float]] = {}
    with on_one_core():
        client = WorkerClient()
        try:
            await client.start()
            for round_ in range(5):  # the first makes the worker long-lived
                request = ProfileRequest(client.new_id(), chain, sizes=sizes, modes=modes, device="cuda")
                readings = [e.measurement async for e in client.request(request) if isinstance(e, MeasurementResult)]
                if round_:
                    for m in readings:
                        from_worker.setdefault((m.size, m.mode), []).append(m.wall_time_us)
                    results, failures = profile(chain, sizes, modes)
                    assert not failures
                    for key, m in results.items():
                        in_process.setdefault(key, []).append(m.wall_time_us)
        finally:
            await client.close()
    for key, ours in in_process.items():
        theirs, best = min(from_worker[key]), min(ours)
        if best >= 100:
            assert abs(theirs - best) <= max(0.10 * best, 3.0), (key, from_worker[key], ours)
        else:
            assert theirs - best <= 0.25 * best, (key, from_worker[key], ours)


def test_training_step_on_cuda_tags_every_kernel_with_its_pass_and_counts_matmul_flops() -> None:
    """bf16 F.gelu(x @ w) with grad: cuBLAS forward and backward matmuls, each with its pass
    (the CUDA backward runs on the autograd thread) and exact FLOPs for the forward one."""
    n, k = 4096, 1024
    events: list = []
    chain = f"x: [N, {k}] bf16\nw: [{k}, {k}] bf16\nF.gelu(x @ w)"
    run_profile(
        ProfileRequest(id="g", chain=chain, sizes=[n], modes=["eager", "compiled"], device="cuda", grad=True),
        events.append,
    )
    failures = [e for e in events if isinstance(e, RequestFailed)]
    assert not failures, failures
    results = {e.measurement.mode: e.measurement for e in events if isinstance(e, MeasurementResult)}
    for m in results.values():
        assert m.grad and {k.pass_ for k in m.kernels} == {"forward", "backward"}
        assert m.forward_time_us + m.backward_time_us == pytest.approx(m.device_time_us)
    eager = results["eager"]
    forward_mm = [row for row in eager.kernels if row.pass_ == "forward" and row.flops]
    assert forward_mm and forward_mm[0].flops == 2 * n * k * k
    assert eager.compute_peak_tflops and forward_mm[0].pct_of_compute_peak
