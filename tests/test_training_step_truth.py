"""Training steps (``--grad``) measured as a user reads them: each kernel row's bytes and FLOPs are
its own launches', in the pass it ran in, each counted once; the backward starts from a
materialised gradient of the output. Every figure below is worked out from the shapes.

A corpus of steps (the matmul family with and without an operand copy, elementwise ops,
normalisations; fp32 and bf16; eager and compiled) runs on the CPU, and again on CUDA where
there is one (the ``gpu`` marker)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import pytest
import torch

from probes.engine.sweep import run_profile
from probes.engine.training_step import GRAD_SEED
from probes.link.kernel_names import strip_graph_prefix
from probes.link.protocol import Measurement, MeasurementResult, ProfileRequest, RequestFailed

N = 128
SIZES = {"fp32": 4, "bf16": 2}

Rows = dict[tuple[str, tuple[str, ...]], tuple[int, int | None]]
"""(pass, ops) -> (bytes, FLOPs) per call, summed over the rows with those ops in that pass (a
CUDA matmul may run as two kernels of one op; their sum is exact)."""


@dataclass
class Step:
    chain: str
    eager: Rows
    compiled_flops: dict[str, int]
    """FLOPs per pass of the compiled step (its fused kernels' ops read from the compile)."""
    extern: Rows
    """The compiled step's matmuls that ATen runs: the same bytes and FLOPs as eager."""


def _matmul(m: int, k: int, n: int, e: int, batch: int = 1) -> tuple[int, int]:
    """Bytes and FLOPs of one [m, k] @ [k, n] (per batch), reading both operands once."""
    return e * batch * (m * k + k * n + m * n), 2 * batch * m * k * n


def corpus(dtype: str, device: str) -> dict[str, Step]:
    e = SIZES[dtype]
    stats = e if device == "cpu" else 4  # a CUDA layer norm keeps its mean and rstd in fp32
    mm_bytes, mm_flops = _matmul(N, 64, 32, e)
    bmm_bytes, bmm_flops = _matmul(N, 16, 8, e, batch=4)
    fwd, bwd = "forward", "backward"
    mm, addmm, bmm = ("aten::mm",), ("aten::addmm",), ("aten::bmm",)
    ln_fwd = e * (2 * N * 64 + 2 * 64) + stats * 2 * N
    ln_bwd = e * (3 * N * 64 + 4 * 64) + stats * 2 * N  # grad, x, w, b in; grad x, w, b out
    return {
        "mm": Step(
            "x: [N, 64]\nw: [64, 32]\nx @ w",
            {(fwd, mm): (mm_bytes, mm_flops), (bwd, mm): (2 * mm_bytes, 2 * mm_flops)},
            {fwd: mm_flops, bwd: 2 * mm_flops},
            {(fwd, mm): (mm_bytes, mm_flops), (bwd, mm): (2 * mm_bytes, 2 * mm_flops)},
        ),
        "bmm": Step(
            "x: [4, N, 16]\nw: [4, 16, 8]\nx @ w",
            {(fwd, bmm): (bmm_bytes, bmm_flops), (bwd, bmm): (2 * bmm_bytes, 2 * bmm_flops)},
            {fwd: bmm_flops, bwd: 2 * bmm_flops},
            {(fwd, bmm): (bmm_bytes, bmm_flops), (bwd, bmm): (2 * bmm_bytes, 2 * bmm_flops)},
        ),
        "linear": Step(
            "x: [N, 64]\nw: [32, 64]\nb: [32]\nF.linear(x, w, b)",
            {
                (fwd, addmm): (mm_bytes + e * 32, mm_flops),
                (bwd, mm): (2 * mm_bytes, 2 * mm_flops),
                (bwd, ("aten::sum",)): (e * (N * 32 + 32), N * 32 - 32),  # the bias's gradient
            },
            {fwd: mm_flops, bwd: 2 * mm_flops + N * 32 - 32},
            {(bwd, mm): (2 * mm_bytes, 2 * mm_flops)},
        ),
        "strided matmul": Step(  # the operand is copied to a contiguous one (compiled); its gradient scattered
            "x: [N, 128]\nw: [64, 32]\nx[:, ::2] @ w",
            {
                (fwd, mm): (mm_bytes, mm_flops),
                (bwd, mm): (2 * mm_bytes, 2 * mm_flops),
                (bwd, ("aten::slice_backward",)): (e * (N * 64 + N * 128), None),
            },
            {fwd: mm_flops, bwd: 2 * mm_flops},
            {(fwd, mm): (mm_bytes, mm_flops), (bwd, mm): (2 * mm_bytes, 2 * mm_flops)},
        ),
        "elementwise": Step(
            "(a * b).relu()",
            {
                (fwd, ("aten::mul",)): (3 * N * e, N),
                (fwd, ("aten::relu",)): (2 * N * e, N),
                (bwd, ("aten::threshold_backward",)): (3 * N * e, N),
                (bwd, ("aten::mul",)): (6 * N * e, 2 * N),  # the gradients of a and of b
            },
            {fwd: 2 * N, bwd: 3 * N},
            {},
        ),
        "softmax": Step(
            "x: [N, 64]\nF.softmax(x, -1)",
            {
                (fwd, ("aten::_softmax",)): (2 * N * 64 * e, 5 * N * 64),
                (bwd, ("aten::_softmax_backward_data",)): (3 * N * 64 * e, 4 * N * 64),
            },
            {fwd: 5 * N * 64, bwd: 4 * N * 64},
            {},
        ),
        "layer norm": Step(
            "x: [N, 64]\nw: [64]\nb: [64]\nF.layer_norm(x, [64], w, b)",
            {
                (fwd, ("aten::native_layer_norm",)): (ln_fwd, 8 * N * 64),
                (bwd, ("aten::native_layer_norm_backward",)): (ln_bwd, 13 * N * 64),
            },
            {fwd: 8 * N * 64, bwd: 13 * N * 64},
            {},
        ),
    }


def _steps(device: str, dtype: str, chain: str) -> dict[str, Measurement]:
    events: list = []
    request = ProfileRequest(
        id="t", chain=chain, sizes=[N], modes=["eager", "compiled"], device=device, dtype=dtype, grad=True, reps=3
    )
    run_profile(request, events.append)
    failures = [e for e in events if isinstance(e, RequestFailed)]
    assert not failures, failures
    return {e.measurement.mode: e.measurement for e in events if isinstance(e, MeasurementResult)}


def _by_ops(measurement: Measurement, aten_only: bool = False) -> Rows:
    """``aten_only``: leave out the kernels the compile generated."""
    generated = set(measurement.compile.generated_source) if aten_only and measurement.compile else set()
    summed: dict[tuple[str, tuple[str, ...]], list[int | None]] = defaultdict(lambda: [0, 0])
    for row in (k for k in measurement.kernels if strip_graph_prefix(k.name) not in generated):
        total = summed[(row.pass_ or "", tuple(row.ops))]
        total[0] = None if row.bytes is None or total[0] is None else total[0] + row.bytes
        if row.flops is not None:  # a copy an op runs has none; the op's work has them all
            total[1] = (total[1] or 0) + row.flops
    return {key: (b, f or None) for key, (b, f) in summed.items()}  # type: ignore[misc]


def _per_pass(rows: Rows) -> dict[str, tuple[int, int]]:
    """Bytes and FLOPs per pass: on CUDA one kernel (a copy) may serve two ops, so rows are
    compared pass by pass there."""
    totals: dict[str, tuple[int, int]] = {}
    for (pass_, _), (nbytes, nflops) in rows.items():
        before = totals.get(pass_, (0, 0))
        totals[pass_] = (before[0] + (nbytes or 0), before[1] + (nflops or 0))
    return totals


def _check_corpus(device: str, dtype: str) -> None:
    for name, step in corpus(dtype, device).items():
        measured = _steps(device, dtype, step.chain)
        eager, compiled = measured["eager"], measured["compiled"]
        for m in (eager, compiled):
            assert m.grad_seed == GRAD_SEED, name
            assert all(k.bytes is not None for k in m.kernels), (name, m.mode, [k.name for k in m.kernels])
            assert m.bytes_per_call == sum(k.bytes or 0 for k in m.kernels), name
        if device == "cpu":
            assert _by_ops(eager) == step.eager, name
        else:
            assert _per_pass(_by_ops(eager)) == _per_pass(step.eager), name
        flops_by_pass = {p: sum(k.flops or 0 for k in compiled.kernels if k.pass_ == p) for p in step.compiled_flops}
        assert flops_by_pass == step.compiled_flops, (name, [(k.name, k.ops, k.flops) for k in compiled.kernels])
        extern = {key: value for key, value in _by_ops(compiled, aten_only=True).items() if key in step.extern}
        assert extern == step.extern, name


pytestmark = pytest.mark.slow


@pytest.mark.parametrize("dtype", ["fp32", "bf16"])
def test_every_row_of_a_cpu_training_step_has_its_own_bytes_and_flops(dtype: str) -> None:
    _check_corpus("cpu", dtype)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
@pytest.mark.parametrize("dtype", ["fp32", "bf16"])
def test_every_row_of_a_cuda_training_step_has_its_own_bytes_and_flops(dtype: str) -> None:
    _check_corpus("cuda", dtype)


def test_a_product_with_grad_counts_each_passes_bytes_once() -> None:
    """``a * b`` at 1e6 fp32: the forward mul reads two inputs and writes one (12 MB); the
    backward's two muls each read the seed and the other input and write a gradient (24 MB);
    the call is their sum, with no reduction or seed kernel of the tool's among its rows.
    Compiled, the forward and backward kernels share a name (``cpp_fused_mul_0``) and still
    each have their own pass's bytes: 12 MB, and 20 MB (the seed, a and b in; two gradients out)."""
    n = 1_000_000
    events: list = []
    run_profile(
        ProfileRequest(id="t", chain="a * b", sizes=[n], modes=["eager", "compiled"], device="cpu", grad=True, reps=3),
        events.append,
    )
    measured, compiled = [e.measurement for e in events if isinstance(e, MeasurementResult)]
    assert {k.pass_: (k.bytes, k.flops) for k in compiled.kernels} == {
        "forward": (12 * n, n),
        "backward": (20 * n, 2 * n),
    }
    assert compiled.bytes_per_call == 32 * n
    rows = {(k.pass_, k.name): (k.bytes, k.flops, k.launches_per_call) for k in measured.kernels}
    assert rows == {("forward", "aten::mul"): (12 * n, n, 1.0), ("backward", "aten::mul"): (24 * n, 2 * n, 2.0)}
    assert measured.bytes_per_call == 36 * n
    assert measured.grad_seed == "materialised ones of the output's shape and dtype"


def test_a_cuda_matmul_that_copies_an_operand_gives_its_flops_to_the_gemm_only() -> None:
    """The rule as a CUDA backward ``aten::mm`` runs it: a copy kernel launched under
    ``aten::copy_`` (its operand made contiguous), then the gemm launched under ``aten::mm``.
    The gemm gets the matmul's FLOPs, the copy none; their bytes add up to the op's."""
    from probes.engine.bytes_moved import eager_bytes
    from probes.engine.launches import Launch
    from probes.engine.trace import OpTrace, TracedOp

    trace = OpTrace([TracedOp(0, "aten::mm", [64, 32], "float32", 1000, 301, False, flops=2 * 64 * 16 * 32)])
    launches = [
        Launch("copy_kernel", 1.0, None, 0, "aten::copy_", "backward"),
        Launch("gemm_kernel", 2.0, None, 0, "aten::mm", "backward"),
    ]
    got = eager_bytes(trace, launches)
    assert got.flops == {("gemm_kernel", "backward"): 2 * 64 * 16 * 32}
    assert sum(got.bytes.values()) == 1301 and got.ops[("copy_kernel", "backward")] == ["aten::mm"]


def test_a_fused_softmax_with_inductors_prim_beside_it_gets_the_softmaxs_flops() -> None:
    from probes.engine.flops import assign
    from probes.link.protocol import KernelRow

    row = KernelRow(
        name="triton_per_fused__softmax_exp_prepare_softmax_online_sub_0",
        short_name="softmax",
        kind="kernel",
        launches_per_call=1.0,
        device_time_us=5.0,
        time_per_call_us=5.0,
        share=1.0,
        bytes=2 * N * 64 * 4,
        gbps=None,
        pct_of_peak=None,
        ops=["prims.prepare_softmax_online", "aten::sub", "aten::exp", "aten::_softmax"],
        pass_="forward",
    )
    assign([row], {"forward": {"aten::_softmax": [5 * N * 64]}}, frozenset({row.name}))
    assert row.flops == 5 * N * 64


def test_a_compiled_matmul_run_fewer_times_than_eager_claims_no_eager_figures() -> None:
    """Inductor turns the first of two ``addmm`` into an ``mm`` (its bias fused into the next
    kernel): the one compiled ``addmm`` kernel ran one of eager's two calls, so neither their sum
    nor a guess is its figure: its FLOPs and bytes stay unknown."""
    from probes.engine import attribute
    from probes.engine.flops import assign
    from probes.link.protocol import KernelRow

    def gemm(op: str) -> KernelRow:
        return KernelRow(f"gemm_{op}", f"gemm_{op}", "kernel", 1.0, 50.0, 50.0, 0.5, None, None, None, ops=[op])

    mm, addmm = gemm("aten::mm"), gemm("aten::addmm")
    two_calls = {None: {"aten::addmm": [21_100_000, 21_000_000]}}
    assign([mm, addmm], two_calls, frozenset())
    attribute._extern_bytes([mm, addmm], two_calls)
    assert (addmm.flops, addmm.bytes) == (None, None)
    assert (mm.flops, mm.bytes) == (None, None)

    twice = gemm("aten::addmm")
    twice.launches_per_call = 2.0
    assign([twice], two_calls, frozenset())
    attribute._extern_bytes([twice], two_calls)
    assert (twice.flops, twice.bytes) == (42_100_000, 42_100_000), "a kernel that ran both calls has both"
