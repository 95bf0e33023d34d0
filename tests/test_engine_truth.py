"""The figures can be trusted: spread on every time, rows that add up to the total, noise said
out loud, every size of a sweep really compiled, and the caller's torch left as it was."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator

import pytest

from probes.engine.sweep import run_profile
from probes.link.protocol import Measurement, MeasurementResult, ProfileRequest, RequestDone, RequestFailed


def profile(
    chain: str, sizes: list[int], modes: list[str], **kwargs: object
) -> tuple[list[Measurement], list[RequestFailed]]:
    events: list = []
    run_profile(ProfileRequest(id="t", chain=chain, sizes=sizes, modes=modes, device="cpu", **kwargs), events.append)
    assert isinstance(events[-1], RequestDone)
    return [e.measurement for e in events if isinstance(e, MeasurementResult)], [
        e for e in events if isinstance(e, RequestFailed)
    ]


@pytest.mark.slow
def test_every_time_has_its_spread_and_rows_add_up_to_the_total() -> None:
    results, failures = profile("(a * b + c).tanh()", [20_000], ["eager", "compiled"], reps=12)
    assert not failures, failures
    for m in results:
        low, high = m.wall_time_us_iqr
        assert low <= m.wall_time_us <= high
        assert m.device_time_us == pytest.approx(sum(k.launches_per_call * k.device_time_us for k in m.kernels))
        assert m.device_time_us == pytest.approx(sum(k.time_per_call_us for k in m.kernels))
        low, high = m.device_time_us_iqr
        assert low <= m.device_time_us <= high
        for k in m.kernels:
            assert k.device_time_us_iqr[0] <= k.device_time_us <= k.device_time_us_iqr[1]
        assert m.noisy == bool(m.noise_reasons)


@contextlib.contextmanager
def busy_cores(count: int) -> Iterator[None]:
    """``count`` processes spinning on the CPU for the duration of the block (each spinning when
    the block starts: a measurement sooner than the interpreters' start would see no load)."""
    spin = "print('spinning', flush=True)\nwhile True: pass"
    burners = [subprocess.Popen([sys.executable, "-c", spin], stdout=subprocess.PIPE, text=True) for _ in range(count)]
    try:
        for burner in burners:
            assert burner.stdout is not None and burner.stdout.readline() == "spinning\n"
        yield
    finally:
        for burner in burners:
            burner.kill()
        for burner in burners:
            burner.wait()


@pytest.mark.slow
@pytest.mark.skipif(not os.path.exists("/proc/stat"), reason="CPU load is read from /proc/stat")
def test_a_measurement_under_cpu_load_says_it_is_noisy() -> None:
    """Twice as many spinning processes as cores: the load is "other processes" only while they
    hold most of the CPU time, and this process's own threads (torch's and OpenMP's pools spin
    while they wait, more of them after a compile in the same process) take an equal share each."""
    with busy_cores(2 * (os.cpu_count() or 1)):
        (m,), failures = profile("(a + b).relu()", [200_000], ["eager"], reps=30)
    assert not failures
    assert m.noisy
    assert any("machine busy" in reason for reason in m.noise_reasons), m.noise_reasons


@pytest.mark.slow
def test_a_12_size_compiled_sweep_is_compiled_at_every_size_in_both_orders() -> None:
    """Each size is its own fresh compile on a code object of its own: with Dynamo's recompile
    limit at 1, a shared code object would run the second size eager."""
    import torch

    from probes.engine import compiling

    sizes = [16 + 8 * i for i in range(12)]
    runs = {}
    with torch._dynamo.config.patch(recompile_limit=1, accumulated_recompile_limit=1):
        for order in (sizes, sizes[::-1]):
            compiling._compiled_cache.clear()
            results, failures = profile("(a * b + c).sigmoid()", order, ["compiled"], reps=3)
            assert not failures, failures
            runs[tuple(order)] = {m.size: m for m in results}
    for by_size in runs.values():
        assert sorted(by_size) == sizes
        for m in by_size.values():
            assert m.ran_compiled and m.fallback_reason is None, (m.size, m.fallback_reason)
            assert m.compile is not None and not m.compile.cached and m.compile.graphs == 1
            assert [k.short_name for k in m.kernels] == ["cpp_fused_add_mul_sigmoid_0"]
            assert not any("recompile" in line for line in m.diagnostics)
    forward, backward = runs.values()
    assert {n: m.kernels_per_call for n, m in forward.items()} == {n: m.kernels_per_call for n, m in backward.items()}


@pytest.mark.slow
def test_the_callers_torch_is_untouched_by_import_and_measurement() -> None:
    script = textwrap.dedent(
        """
        import logging, warnings
        import torch, torch._inductor.config as config
        from torch._inductor.codecache import CppPythonBindingsCodeCache
        def state():
            loggers = {n: list(logging.getLogger(n).handlers) for n in ("torch", "torch._dynamo", "torch._inductor")}
            return (config.cpp.enable_kernel_profile, config.benchmark_kernel, loggers,
                    CppPythonBindingsCodeCache.__dict__["load_pybinding_async"],
                    logging.getLogger("torch._subclasses.fake_tensor").level, list(warnings.filters))
        before = state()
        import probes.engine.measure, probes.engine.sweep
        assert state() == before, "import changed torch"
        from probes.link.protocol import ProfileRequest
        request = ProfileRequest("t", "F.softmax(a) + 1", sizes=[64], modes=["compiled"], device="cpu", reps=2)
        probes.engine.sweep.run_profile(request, lambda e: None)
        assert state() == before, "a measurement changed torch"
        print("untouched")
        """
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, cwd=os.getcwd())
    assert proc.returncode == 0 and "untouched" in proc.stdout, proc.stderr[-2000:]


@pytest.mark.slow
def test_torch_warnings_go_into_the_result_not_the_terminal() -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "tui",
            "profile",
            "F.softmax(a) + 1",
            "--sizes",
            "256",
            "--modes",
            "eager",
            "--device",
            "cpu",
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert "softmax" not in proc.stderr.lower()
    (result,) = json.loads(proc.stdout)["results"]
    assert any("softmax" in line.lower() for line in result["diagnostics"]), result["diagnostics"]


def test_bytes_per_call_is_never_a_partial_sum() -> None:
    from probes.engine.attribute import build_rows, bytes_per_call
    from probes.engine.launches import Launch

    launches = [Launch("k1", 2.0, 0, None, None), Launch("k2", 3.0, 0, None, None)]
    kernels, _ = build_rows(launches, 1, {("k1", None): 100}, {})
    assert {k.name: k.bytes for k in kernels} == {"k1": 100, "k2": None}
    assert bytes_per_call(kernels) is None
    kernels, _ = build_rows(launches, 1, {("k1", None): 100, ("k2", None): 50}, {})
    assert bytes_per_call(kernels) == 150


def test_other_processes_make_a_figure_noisy_only_when_they_leave_no_core_idle() -> None:
    from probes.engine.noise import CpuLoad

    assert CpuLoad(cores=2, busy_cores=1.7, other_cores=0.7).busy  # the CI machine: the worker's core is shared
    assert not CpuLoad(cores=16, busy_cores=1.6, other_cores=0.6).busy  # the app drawing beside it on a GPU host
    assert not CpuLoad(cores=2, busy_cores=1.2, other_cores=0.2).busy


def test_kernel_times_that_add_up_to_more_than_the_call_are_said_to_be_noise() -> None:
    """A call's kernels cannot take longer than the call: on the CPU machine eager rows at 1e6
    read 1.2-1.5x their wall time, and were shown beside it as fact."""
    from probes.engine.attribute import _noise

    wall = [100.0] * 20
    assert any("1.5x the call's wall time" in reason for reason in _noise(wall, [148.0, 152.0], 150.0, 10, None))
    assert _noise(wall, [88.0, 92.0], 90.0, 10, None) == []
    assert _noise(wall, [102.0, 104.0], 103.0, 10, None) == []  # within the two sets of reps' own spread
    assert _noise(None, [148.0, 152.0], 150.0, 10, None) == []  # early rows: no wall time yet


def test_a_gpu_is_warmed_up_only_after_a_pause_and_the_cpu_always() -> None:
    """Right after a timed rep a GPU's warm-up changes no figure and costs 20 ms of each edit
    (probes.engine.timing.WARM_FOR_S); an idle CPU's next calls are slower, so the CPU always warms up."""
    import time

    import torch

    from probes.engine import timing

    measurements, failures = profile("a + b", [1000], ["eager"])
    assert measurements and not failures
    now = time.time()
    assert not timing.needs_warm_up(torch.device("cuda"), now)
    assert timing.needs_warm_up(torch.device("cuda"), now + timing.WARM_FOR_S)
    assert timing.needs_warm_up(torch.device("cpu"), now)


def test_the_cpu_warms_up_for_its_own_shorter_length() -> None:
    """A GPU's warm-up brings its clocks up (25 ms, do_bench's); the CPU's wakes torch's threads, and
    with the GPU's length each edit's eager and compiled rows waited 20 ms more on the CPU
    (probes.engine.timing.CPU_WARMUP_MIN_S)."""
    import torch

    from probes.engine import timing

    single_s = 0.001
    calls: list[int] = []
    timing.warm_up(lambda: calls.append(1), torch.device("cpu"), single_s)
    assert timing.CPU_WARMUP_MIN_S < timing.WARMUP_MIN_S
    assert len(calls) == int(timing.CPU_WARMUP_MIN_S / single_s)


def test_a_cpu_rep_that_faults_in_fresh_pages_is_left_out_of_the_rows() -> None:
    """A profiled rep whose call lands on fresh pages (the profiler's own allocations between its
    outputs do it) times the faults, several times the op at 1e6: it is left out
    and another rep runs. Here the 2nd and 4th calls fill a new 64 MB mapping."""
    import torch

    from probes.engine.timing import L2Flusher, profile_run

    cpu = torch.device("cpu")
    calls = 0

    def call() -> None:
        nonlocal calls
        calls += 1
        torch.empty(16 * 2**20 if calls in (2, 4) else 1024).fill_(1.0)

    run = profile_run(call, cpu, 4, L2Flusher(cpu), faults_per_call=0.0)
    assert run.reps == 4
    fills = [launch for launch in run.launches if launch.name == "aten::fill_"]
    kept = sorted({launch.rep for launch in fills})
    # Reps 1 and 3 (calls 2 and 4) are left out, for their page faults, and replaced; another rep
    # may be too, where the process's other allocations (the profiler's buffers) faulted in pages
    # inside it. The fills kept are the 4 kB ones: the reps are told apart by their faults, not by
    # their times, which a busy machine can stretch past the 64 MB fills'.
    assert len(kept) == 4 and 1 not in kept and 3 not in kept and calls >= 6


def test_a_cpu_call_that_always_faults_keeps_every_rep() -> None:
    """Where every call maps its tensors anew (above glibc's mmap threshold, as in a user's loop),
    faulting is what the call costs: no rep is left out."""
    import torch

    from probes.engine.timing import L2Flusher, profile_run

    cpu = torch.device("cpu")
    run = profile_run(lambda: torch.empty(16 * 2**20).fill_(1.0), cpu, 3, L2Flusher(cpu), faults_per_call=0.0)
    assert run.reps == 3
    assert len([launch for launch in run.launches if launch.name == "aten::fill_"]) == 3


@pytest.mark.slow  # two fresh interpreters that import torch
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc")
def test_a_cpu_measurement_keeps_the_memory_its_calls_free() -> None:
    """After a CPU measurement, a freed 24 MB tensor stays with the process for the next call
    (probes.engine.host_heap): left to glibc, a fresh process maps it alone and gives it back, and the
    next call faults in all 6,000 pages again."""
    script = textwrap.dedent(
        """
        import torch
        from probes.engine.compiling import prepare
        from probes.engine.diagnostics import Diagnostics
        from probes.engine.measure import measure, ready_to_measure
        from probes.engine.plan import plan_request, plan_size
        from probes.engine.timing import L2Flusher
        from probes.link.protocol import ProfileRequest

        def resident() -> int:
            with open("/proc/self/statm") as f:
                return int(f.read().split()[1]) * 4096

        if PIN:
            request = ProfileRequest("pin", "a + b", sizes=[64], modes=["eager"], device="cpu", reps=3)
            size = plan_size(plan_request(request), 64)
            with ready_to_measure("eager", size.device) as set_up:
                measure(size, "eager", prepare(size, "eager", Diagnostics()), L2Flusher(size.device), set_up)
        x = torch.ones(6 * 2**20)
        held = resident()
        del x
        print(held - resident())
        """
    )
    given_back = {}
    for pin in (False, True):
        out = subprocess.run(
            [sys.executable, "-c", f"PIN = {pin}\n{script}"],
            capture_output=True,
            text=True,
            check=True,
            cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
        )
        given_back[pin] = int(out.stdout.split()[-1])
    assert given_back[False] >= 20 * 2**20  # the check can fail: glibc alone gives it back
    assert given_back[True] < 2**20
