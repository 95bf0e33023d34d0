"""The engine on the CPU, in-process: the article's story measured for real.

Eager ``(a + b).relu()`` is two kernels (add, and clamp_min under relu) moving 20N bytes;
compiled it is one ``cpp_fused_add_relu`` kernel moving 12N bytes.
"""

from __future__ import annotations

import pytest

from probes.engine.sweep import run_profile
from probes.link.protocol import Measurement, MeasurementResult, ProfileRequest, Progress, RequestDone, RequestFailed

pytestmark = pytest.mark.slow

N = 1_000_000


def profile(
    chain: str, sizes: list[int], modes: list[str], **kwargs: object
) -> tuple[list[Measurement], list[RequestFailed], list]:
    events: list = []
    run_profile(ProfileRequest(id="t", chain=chain, sizes=sizes, modes=modes, device="cpu", **kwargs), events.append)
    results = [e.measurement for e in events if isinstance(e, MeasurementResult)]
    failures = [e for e in events if isinstance(e, RequestFailed)]
    assert isinstance(events[-1], RequestDone)
    return results, failures, events


@pytest.fixture(scope="module")
def add_relu() -> dict[str, Measurement]:
    results, failures, _ = profile("(a + b).relu()", [N], ["eager", "compiled"], reps=5)
    assert not failures, failures
    return {m.mode: m for m in results}


def test_eager_add_relu_is_two_kernels(add_relu: dict[str, Measurement]) -> None:
    eager = add_relu["eager"]
    names = sorted(k.name for k in eager.kernels)
    assert names == ["aten::add", "aten::clamp_min"]
    assert eager.kernels_per_call == 2
    assert not eager.ran_compiled
    clamp = next(k for k in eager.kernels if k.name == "aten::clamp_min")
    assert clamp.ops == ["aten::relu"]


def test_a_product_with_a_python_number_is_the_mul_kernel_itself() -> None:
    """``* 4`` runs aten::mul, which first converts the 4 into a one-element tensor (aten::to):
    that conversion is setup, and the kernel is the mul with the whole of its time, not the
    conversion of one number (which the table once showed in its place, with the mul's bytes)."""
    (eager,), failures, _ = profile("(a + b) * 4", [N], ["eager"], reps=5)
    assert not failures, failures
    assert sorted(k.name for k in eager.kernels) == ["aten::add", "aten::mul"]
    mul = next(k for k in eager.kernels if k.name == "aten::mul")
    add = next(k for k in eager.kernels if k.name == "aten::add")
    assert mul.ops == ["aten::mul"] and mul.bytes == 8 * N
    assert mul.device_time_us > 0.25 * add.device_time_us, "the mul's own pass over 4 MB is missing from its time"


def test_compiled_add_relu_is_one_fused_kernel(add_relu: dict[str, Measurement]) -> None:
    compiled = add_relu["compiled"]
    assert compiled.ran_compiled and compiled.fallback_reason is None
    assert compiled.kernels_per_call == 1
    (kernel,) = compiled.kernels
    assert kernel.short_name.startswith("cpp_fused_add_relu")
    assert kernel.ops == ["aten::add", "aten::relu"]
    assert compiled.compile is not None and compiled.compile.compile_time_s > 0
    source = compiled.compile.generated_source
    assert any("cpp_fused_add_relu" in name for name in source)
    assert all("extern" in text or "kernel" in text for text in source.values())


def test_on_the_cpu_rows_wait_for_their_wall_time_even_when_early_rows_are_asked() -> None:
    """Early rows are for a GPU: on the CPU the wall-time reps run on every core, and the app
    drawing rows sent before them would land in them; each mode answers once, whole."""
    results, failures, _ = profile("(a - b).abs()", [10_000], ["eager", "compiled"], reps=5, early_rows=True)
    assert not failures, failures
    assert [(m.mode, m.wall_pending) for m in results] == [("eager", False), ("compiled", False)]


def test_early_rows_are_the_rows_then_the_whole_measurement(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where rows go out before their wall time (a GPU; here forced on the CPU), each mode answers
    as soon as its rows are profiled (no wall time yet), then whole, with the same rows."""
    monkeypatch.setattr(ProfileRequest, "rows_before_wall_time", lambda self, device: self.early_rows)
    results, failures, events = profile("(a - b).abs()", [10_000], ["eager", "compiled"], reps=5, early_rows=True)
    assert not failures, failures
    assert [(m.mode, m.wall_pending) for m in results] == [
        ("eager", True),
        ("eager", False),
        ("compiled", True),
        ("compiled", False),
    ]
    for early, whole in (results[0:2], results[2:4]):
        assert [k.name for k in early.kernels] == [k.name for k in whole.kernels]
        assert early.device_time_us == whole.device_time_us and early.bytes_per_call == whole.bytes_per_call
        assert early.wall_time_us_iqr is None and whole.wall_time_us > 0
    answers = [i for i, e in enumerate(events) if isinstance(e, MeasurementResult)]
    between = events[answers[2] + 1 : answers[3]]
    assert [e.stage for e in between if isinstance(e, Progress)] == ["measuring"]  # timing the wall time


def test_bytes_are_20n_eager_and_12n_compiled(add_relu: dict[str, Measurement]) -> None:
    assert add_relu["eager"].bytes_per_call == 20 * N
    assert add_relu["compiled"].bytes_per_call == 12 * N


def test_times_are_positive_and_per_call(add_relu: dict[str, Measurement]) -> None:
    for m in add_relu.values():
        assert m.device_time_us > 0 and m.wall_time_us > 0
        assert m.reps >= 1
        share = sum(k.share for k in m.kernels)
        assert share == pytest.approx(1.0, abs=1e-6)
        for k in m.kernels:
            assert k.gbps is not None and k.gbps > 0
            assert k.pct_of_peak is not None


def test_op_chain_ties_ops_to_kernels(add_relu: dict[str, Measurement]) -> None:
    ops = add_relu["eager"].ops
    assert [op.op for op in ops] == ["aten::add", "aten::relu"]
    assert ops[0].shape == [N] and ops[0].bytes_out == 4 * N
    assert ops[0].eager_kernels == ["aten::add"]
    compiled_ops = add_relu["compiled"].ops
    assert {op.compiled_kernel for op in compiled_ops} == {"cpp_fused_add_relu_0"}


def test_reduction_broadcast_and_matmul() -> None:
    chains = {
        "(a * b).sum()": (["eager", "compiled"], None),
        "x: [N, 64]\ny: [64]\nx * y": (["eager"], None),
        "x: [N, 64]\nw: [64, 32]\nx @ w": (["eager"], None),
    }
    for chain, (modes, _) in chains.items():
        results, failures, _ = profile(chain, [4096], modes, reps=3)
        assert not failures, (chain, failures)
        by_mode = {m.mode: m for m in results}
        if chain.startswith("(a * b)"):
            assert by_mode["eager"].kernels_per_call == 2
            # sum does its own work (its fill_/copy_ are set-up): it is the kernel, not them
            assert sorted(k.name for k in by_mode["eager"].kernels) == ["aten::mul", "aten::sum"]
            assert by_mode["eager"].bytes_per_call == (3 + 1) * 4096 * 4 + 4
            assert by_mode["compiled"].kernels_per_call == 1
            assert "sum" in by_mode["compiled"].kernels[0].short_name
        elif "x * y" in chain:
            # x is read once (64N floats), y once (64 floats, broadcast), the output written once.
            assert by_mode["eager"].bytes_per_call == (64 * 4096 + 64 + 64 * 4096) * 4
        else:
            (kernel,) = by_mode["eager"].kernels
            assert kernel.ops and kernel.ops[0] in ("aten::mm", "aten::matmul")
            assert by_mode["eager"].bytes_per_call == (4096 * 64 + 64 * 32 + 4096 * 32) * 4


def test_sweep_order_does_not_change_kernel_counts() -> None:
    forward, _, _ = profile("(a + b).relu()", [1000, 100_000], ["compiled"], reps=3)
    backward, _, _ = profile("(a + b).relu()", [100_000, 1000], ["compiled"], reps=3)
    counts = lambda results: {m.size: (m.kernels_per_call, m.bytes_per_call, m.ran_compiled) for m in results}  # noqa: E731
    assert counts(forward) == counts(backward)


def test_graph_break_fallback_is_flagged_not_reported_as_compiled() -> None:
    results, failures, _ = profile("torch.nonzero(a)", [1000], ["compiled"], reps=3)
    assert not failures
    (m,) = results
    assert not m.ran_compiled
    assert m.fallback_reason and "ran eager" in m.fallback_reason


def test_memory_guard_refuses_with_estimate() -> None:
    results, failures, _ = profile("(a + b).relu()", [10**12], ["eager"])
    assert not results
    (failure,) = failures
    assert failure.error.kind == "memory"
    assert "needs about" in failure.error.message and "free" in failure.error.message


def test_shape_mismatch_is_a_plain_runtime_error() -> None:
    results, failures, _ = profile("x: [N, 3]\ny: [N, 4]\nx + y", [100], ["eager"])
    assert not results
    (failure,) = failures
    assert failure.error.kind == "runtime"
    assert "size" in failure.error.message and "Traceback" not in failure.error.message
    assert failure.error.line == 3


def test_remeasuring_a_chain_reuses_its_compiled_code() -> None:
    first, _, _ = profile("(a - b).abs()", [2048], ["compiled"], reps=3)
    again, _, _ = profile("(a - b).abs()", [2048], ["compiled"], reps=3)
    assert not first[0].compile.cached and again[0].compile.cached
    assert again[0].compile.compile_time_s == first[0].compile.compile_time_s
    assert [k.name for k in again[0].kernels] == [k.name for k in first[0].kernels]


def test_a_new_chain_compiles_through_the_wrapper_made_while_idle_and_only_that_chain(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A worker that compiles makes the next compile's ``torch.compile`` wrapper while it has
    nothing to do (milliseconds of a new chain's way to its rows); the chain that takes
    it compiles as a fresh ``torch.compile`` would, with kernels of its own, and the next wrapper
    carries nothing of it."""
    import torch

    from probes.engine.compiling import make_spare_wrapper

    made: list[object] = []
    real = torch.compile
    monkeypatch.setattr(torch, "compile", lambda *args, **kwargs: made.append(args) or real(*args, **kwargs))
    make_spare_wrapper()
    assert len(made) == 1
    (tanh,), failures, _ = profile("(a * b).tanh()", [4096], ["compiled"], reps=3)
    assert not failures and len(made) == 1, "the new chain made a wrapper of its own on its way to its rows"
    make_spare_wrapper()
    (neg,), failures, _ = profile("(a * b).neg()", [4096], ["compiled"], reps=3)
    assert not failures and len(made) == 2
    assert tanh.ran_compiled and neg.ran_compiled and not tanh.compile.cached and not neg.compile.cached
    assert [k.name for k in tanh.kernels] != [k.name for k in neg.kernels]
    assert all("tanh" in k.name for k in tanh.kernels) and all("neg" in k.name for k in neg.kernels)
    (dynamic,), failures, _ = profile("(a * b).sin()", [4096], ["dynamic"], reps=3)
    assert not failures and dynamic.ran_compiled and len(made) == 3, "a dynamic compile took the default mode's wrapper"


def test_a_size_at_which_an_input_has_no_rows_is_skipped_the_others_measured() -> None:
    results, failures, _ = profile(
        "x: [N // 1024, 1024]\ntorch.softmax(x, dim=-1)", [100, 2048, 4096], ["eager"], reps=1
    )
    assert [m.size for m in results] == [2048, 4096]
    (failure,) = failures
    assert failure.size == 100 and failure.error.kind == "input" and "'N // 1024' is 0" in failure.error.message


def test_a_chain_error_at_every_size_stops_the_sweep_at_the_first() -> None:
    results, failures, _ = profile("x: [N, 3]\ny: [4]\nx + y", [100, 1000], ["eager"], reps=1)
    assert results == [] and [f.size for f in failures] == [100]
