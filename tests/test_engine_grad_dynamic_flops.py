"""Beyond the anchors, on the CPU: forward + backward with each row's pass, the dynamic mode's
one symbolic compile, FLOPs where they can be known."""

from __future__ import annotations

from pathlib import Path

import pytest

from probes.engine.sweep import run_profile
from probes.link.protocol import Measurement, MeasurementResult, ProfileRequest, RequestDone, RequestFailed

pytestmark = pytest.mark.slow


def profile(chain: str, sizes: list[int], modes: list[str], **kwargs: object) -> dict[tuple[int, str], Measurement]:
    events: list = []
    request = ProfileRequest(id="grad-dynamic-flops", chain=chain, sizes=sizes, modes=modes, device="cpu", **kwargs)
    run_profile(request, events.append)
    assert isinstance(events[-1], RequestDone)
    failures = [e for e in events if isinstance(e, RequestFailed)]
    assert not failures, failures
    return {(e.measurement.size, e.measurement.mode): e.measurement for e in events if isinstance(e, MeasurementResult)}


def test_grad_add_relu_runs_threshold_backward_eager_and_a_fused_backward_compiled() -> None:
    n = 100_000
    results = profile("(a + b).relu()", [n], ["eager", "compiled"], grad=True, reps=3)
    eager, compiled = results[(n, "eager")], results[(n, "compiled")]
    for m in (eager, compiled):
        assert m.grad and all(k.pass_ in ("forward", "backward") for k in m.kernels)
        assert m.forward_time_us + m.backward_time_us == pytest.approx(m.device_time_us)
        assert m.forward_time_us > 0 and m.backward_time_us > 0
    backward = [k for k in eager.kernels if k.pass_ == "backward"]
    assert "aten::threshold_backward" in [k.name for k in backward]
    assert {k.name for k in eager.kernels if k.pass_ == "forward"} >= {"aten::add", "aten::clamp_min"}
    fused = [k for k in compiled.kernels if k.pass_ == "backward" and k.short_name.startswith("cpp_fused")]
    assert fused and any("threshold_backward" in k.short_name for k in fused), [k.short_name for k in compiled.kernels]
    assert compiled.ran_compiled


def test_grad_without_a_float_input_is_refused_in_plain_words() -> None:
    events: list = []
    run_profile(
        ProfileRequest("g", "i: [N] int64\ni * 2", sizes=[64], modes=["eager"], device="cpu", grad=True), events.append
    )
    (failure,) = [e for e in events if isinstance(e, RequestFailed)]
    assert "float" in failure.error.message


def test_dynamic_mode_compiles_once_for_the_whole_sweep() -> None:
    sizes = [1000, 3000, 7000]
    results = profile("(a + b).relu()", sizes, ["dynamic"], reps=3)
    first, *rest = (results[(n, "dynamic")] for n in sizes)
    assert not first.compile.cached and all(m.compile.cached for m in rest)
    assert all(m.compile.recompiles == 0 and m.ran_compiled for m in results.values())
    assert {k.short_name for m in results.values() for k in m.kernels} == {"cpp_fused_add_relu_0"}


def test_a_matmul_reports_exactly_2nkm_flops_with_its_roofline_figures() -> None:
    n, k, m = 4096, 64, 32
    results = profile(f"x: [N, {k}]\nw: [{k}, {m}]\nx @ w", [n], ["eager"], reps=3)
    (row,) = results[(n, "eager")].kernels
    assert row.flops == 2 * n * k * m
    assert row.tflops == pytest.approx(row.flops / (row.time_per_call_us * 1e6))
    assert row.intensity == pytest.approx(row.flops / row.bytes)
    measured = results[(n, "eager")]
    assert measured.compute_peak_tflops and measured.compute_peak_tflops > 0
    assert row.pct_of_compute_peak == pytest.approx(100 * row.tflops / measured.compute_peak_tflops)


def test_elementwise_kernels_count_one_flop_per_output_element_eager_and_fused() -> None:
    n = 4096
    results = profile("(a + b).relu()", [n], ["eager", "compiled"], reps=3)
    eager = {k.name: (k.bytes, k.flops) for k in results[(n, "eager")].kernels}
    assert eager == {"aten::add": (12 * n, n), "aten::clamp_min": (8 * n, n)}
    (fused,) = results[(n, "compiled")].kernels
    assert (fused.bytes, fused.flops, fused.intensity) == (12 * n, 2 * n, 2 / 12)


def test_flops_are_counted_in_a_run_of_their_own_for_a_compile_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Eager kernels take their FLOPs from the labelled pass that already ties them to their ops;
    a compiled call's generated kernels need one eager call of their own, recorded op by op."""
    from probes.engine import measure

    counted: list[str] = []
    step = measure._eager_step

    def counting(*args):
        counted.append("run")
        return step(*args)

    monkeypatch.setattr(measure, "_eager_step", counting)
    n, k, m = 512, 64, 32
    results = profile(f"x: [N, {k}]\nw: [{k}, {m}]\nx @ w", [n], ["eager", "compiled"], reps=3)
    assert counted == ["run"]
    for mode in ("eager", "compiled"):
        assert sum(row.flops or 0 for row in results[(n, mode)].kernels) == 2 * n * k * m


def test_a_training_step_counts_the_backward_matmuls_flops_too() -> None:
    n, k, m = 2048, 64, 32
    results = profile(f"x: [N, {k}]\nw: [{k}, {m}]\nx @ w", [n], ["eager"], reps=3, grad=True)
    rows = results[(n, "eager")].kernels
    by_pass = {p: sum(r.flops or 0 for r in rows if r.pass_ == p) for p in ("forward", "backward")}
    assert by_pass == {"forward": 2 * n * k * m, "backward": 2 * (2 * n * k * m)}  # grad of x and of w


def test_a_compiled_training_steps_extern_matmuls_have_their_own_passes_bytes() -> None:
    """The matmuls a compile leaves to ATen take the bytes of their op's calls in their own pass:
    forward x @ w reads x and w and writes the product; backward two such matmuls."""
    n = 256
    results = profile("x: [N, 64]\nw: [64, 32]\nF.gelu(x @ w)", [n], ["compiled"], reps=3, grad=True)
    measured = results[(n, "compiled")]
    matmuls = {k.pass_: (k.bytes, k.flops) for k in measured.kernels if k.name == "aten::mm"}
    forward = 4 * (n * 64 + 64 * 32 + n * 32)
    assert matmuls == {"forward": (forward, 2 * n * 64 * 32), "backward": (2 * forward, 2 * 2 * n * 64 * 32)}
    assert not [d for d in measured.diagnostics if d.startswith("bytes unknown")]


def test_two_kernels_of_one_op_share_its_flops_exactly_and_never_lose_them() -> None:
    """Alike calls go one to each kernel; calls that cannot be told apart (which gemm did which)
    are shared by device time, the shares adding up to the calls' total."""
    from probes.engine.flops import assign
    from probes.link.protocol import KernelRow

    def rows() -> list[KernelRow]:
        return [
            KernelRow(
                name=f"gemm_{i}",
                short_name=f"gemm_{i}",
                kind="kernel",
                launches_per_call=1.0,
                device_time_us=10.0,
                time_per_call_us=10.0,
                share=0.5,
                bytes=None,
                gbps=None,
                pct_of_peak=None,
                ops=["aten::mm"],
                pass_="backward",
            )
            for i in range(2)
        ]

    same = rows()
    assign(same, {"backward": {"aten::mm": [100, 100]}})
    assert [r.flops for r in same] == [100, 100]
    different = rows()
    different[1].time_per_call_us = 30.0
    assign(different, {"backward": {"aten::mm": [100, 301]}})  # which gemm did which is unknown
    assert [r.flops for r in different] == [100, 301]


def test_a_compute_peak_that_a_kernel_beats_is_measured_again(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A peak taken badly (the GPU's clocks still low: a training step's matmuls run past it) is
    not kept: the first kernel past it by more than 10% has it measured again."""
    from probes.engine import bandwidth, compute_peak
    from probes.engine.bandwidth import Peak

    monkeypatch.setenv("KERNEL_TUI_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(bandwidth, "_refreshed", set())  # once per process: earlier tests may have used it
    real = compute_peak.measure_compute_peak
    taken: list[Peak] = []

    def badly_first(device, dtype):
        peak = real(device, dtype)
        taken.append(Peak(peak.value / 100, peak.iqr, peak.kernel, False) if not taken else peak)
        return taken[-1]

    monkeypatch.setattr(compute_peak, "measure_compute_peak", badly_first)
    events: list = []
    run_profile(
        ProfileRequest("cp", "x: [N, 256]\nw: [256, 256]\nx @ w", sizes=[2048], modes=["eager"], device="cpu", reps=3),
        events.append,
    )
    (result,) = [e.measurement for e in events if isinstance(e, MeasurementResult)]
    assert len(taken) == 2 and result.compute_peak_tflops == taken[1].value
    assert any("beat" in getattr(e, "message", "") and "compute peak" in e.message for e in events)
    (row,) = result.kernels
    assert row.pct_of_compute_peak == pytest.approx(100 * row.tflops / taken[1].value)


def test_a_peak_is_never_lowered_by_a_worse_measurement(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A peak is the most the device reaches: a refresh that reads lower than the cached peak
    keeps it (a GPU at its power limit can read a fifth below its cached peak); a quiet measurement
    replaces one taken on a busy machine, even when lower."""
    from probes.engine import bandwidth
    from probes.engine.bandwidth import Peak, cached_peak

    monkeypatch.setenv("KERNEL_TUI_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(bandwidth, "_refreshed", set())
    monkeypatch.setattr(bandwidth, "_measured", set())
    readings = iter([Peak(743.0, [740.0, 745.0], "mm", False), Peak(581.0, [575.0, 590.0], "mm", False)])
    assert cached_peak("peaks.json", "gpu", lambda: next(readings)).value == 743.0
    assert cached_peak("peaks.json", "gpu", lambda: next(readings), refresh=True).value == 743.0
    assert cached_peak("peaks.json", "gpu", lambda: pytest.fail("cached: not measured again")).value == 743.0
    busy = iter([Peak(900.0, [500.0, 950.0], "mm", True), Peak(800.0, [795.0, 805.0], "mm", False)])
    assert cached_peak("peaks.json", "cpu", lambda: next(busy)).value == 900.0
    monkeypatch.setattr(bandwidth, "_measured", set())  # the next process
    assert cached_peak("peaks.json", "cpu", lambda: next(busy)).value == 800.0  # the busy one is measured again


def test_a_peak_taken_on_a_busy_machine_is_measured_again_once_per_process_not_per_request(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """On a loaded machine every measurement reads busy: re-measuring at each request cost each
    edit seconds on the CPU (the worker's thousand-request soak ran past 10 minutes). The next
    process measures it again."""
    from probes.engine import bandwidth
    from probes.engine.bandwidth import Peak, cached_peak

    monkeypatch.setenv("KERNEL_TUI_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(bandwidth, "_refreshed", set())
    monkeypatch.setattr(bandwidth, "_measured", set())
    taken: list[Peak] = []

    def busy_reading() -> Peak:
        taken.append(Peak(30.0 + len(taken), [10.0, 40.0], "copy", True))
        return taken[-1]

    readings = [cached_peak("peaks.json", "cpu", busy_reading).value for _ in range(5)]
    assert len(taken) == 1 and readings == [30.0] * 5
    monkeypatch.setattr(bandwidth, "_measured", set())  # the next process
    assert cached_peak("peaks.json", "cpu", busy_reading).value == 31.0 and len(taken) == 2


def test_a_peak_refresh_is_announced_only_when_it_measures(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A kernel past the peak has it measured again once per process; a later request whose kernel
    beats it too says nothing of measuring (it used to announce one at each request)."""
    from probes.engine import bandwidth
    from probes.engine.bandwidth import Peak

    monkeypatch.setenv("KERNEL_TUI_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(bandwidth, "_refreshed", set())
    monkeypatch.setattr(bandwidth, "_measured", set())
    measured: list[Peak] = []

    def too_low(device):
        measured.append(Peak(1e-3, [1e-3, 1e-3], "copy", False))
        return measured[-1]

    monkeypatch.setattr(bandwidth, "measure_peak", too_low)
    announced = []
    for number in range(2):
        events: list = []
        run_profile(
            ProfileRequest(f"b{number}", "(a + b).relu()", sizes=[10_000], modes=["eager"], device="cpu"), events.append
        )
        assert any(isinstance(e, MeasurementResult) for e in events)
        announced.append(sum("measuring it again" in getattr(e, "message", "") for e in events))
    assert announced == [1, 0] and len(measured) == 2  # the first measurement, then the one refresh


def test_a_kernel_above_the_compute_peak_is_explained_not_just_shown() -> None:
    from probes.engine import flops

    results = profile("x: [N, 256]\nw: [256, 256]\nx @ w", [2048], ["eager"], reps=3)
    measurement = results[(2048, "eager")]
    (row,) = measurement.kernels
    flops.apply_compute_peak(measurement, row.tflops / 1.2)
    assert row.pct_of_compute_peak == pytest.approx(120)
    (why,) = [line for line in measurement.diagnostics if "of the measured compute peak" in line]
    assert why.startswith(f"{row.short_name} reached 120%")
    assert "CPU" in why and "GPU" not in why and "power limit" not in why  # the device it ran on
    flops.apply_compute_peak(measurement, row.tflops * 2)  # applied again with a better peak: no stale line
    assert not any("of the measured compute peak" in line for line in measurement.diagnostics)


def test_a_gpu_kernel_above_the_compute_peak_is_explained_by_the_gpu_power_limit() -> None:
    from probes.engine import flops
    from probes.link.protocol import ProfileReport

    report = ProfileReport.from_json((Path(__file__).parent / "data" / "h200_matmul_gelu.json").read_text())
    measurement = next(m for m in report.results if any(r.tflops for r in m.kernels if "mm" in "".join(r.ops)))
    row = max(measurement.kernels, key=lambda r: r.tflops or 0)
    flops.apply_compute_peak(measurement, row.tflops / 1.2)
    (why,) = [line for line in measurement.diagnostics if "of the measured compute peak" in line]
    assert measurement.device.startswith("cuda") and "GPU held near its power limit" in why
