"""The memory guard's meta run (probes.engine.memory_guard) and the plain-Python watch (probes.engine.watchdog):
what it sizes, what it refuses before anything is allocated, and that it cannot be bypassed."""

from __future__ import annotations

import threading
import time

import pytest
import torch

from probes.chain.expr import ChainError, parse_chain
from probes.engine import memory_guard
from probes.engine.errors import MeasureError
from probes.engine.inputs import input_specs
from probes.engine.memory_guard import MAX_PIECES, MAX_TRACED_OPS, check_memory, trace_on_meta
from probes.engine.watchdog import WATCH, ChainStuck, PlainPythonWatch

CPU = torch.device("cpu")


def guard(text: str, n: int = 1000):
    chain = parse_chain(text)
    return check_memory(chain, input_specs(chain, n, "fp32"), n, CPU)


def refusal(text: str, n: int = 1000) -> str:
    with pytest.raises((ChainError, MeasureError)) as caught:
        guard(text, n)
    return caught.value.info.located()


@pytest.mark.parametrize(
    "text",
    [
        "torch.ones(N * N, device='cpu').sum() + a",
        "torch.empty(N, N, device=a.device).sum()",
        "torch.zeros(N, N, dtype=torch.float64, device=torch.device('cpu'))",
        "a.to('cpu').repeat(N)",
        "torch.full((N, N), 1.0, device='cpu', pin_memory=False)",
    ],
)
def test_factories_are_sized_on_meta_whatever_their_device(text: str) -> None:
    """Each would allocate about 8 TB for real at N=1e6: the guard sizes it without allocating."""
    message = refusal(text, 10**6)
    assert "needs about" in message and "intermediates" in message


def test_the_trace_sizes_every_intermediate() -> None:
    trace = guard("t = torch.ones(N * 4, device='cpu')\n(t[:N] + a).relu()")
    assert [op.op for op in trace.ops] == ["aten::ones", "aten::slice", "aten::add", "aten::relu"]
    assert trace.output_bytes_total == 4000 * 4 + 1000 * 4 * 2


@pytest.mark.parametrize(
    ("text", "bound"),
    [
        ("torch.nonzero(a > 0)", 1000 * 8),
        ("a[a > 0]", 1000 * 4),
        ("a.masked_select(b > 0)", 1000 * 4),
        ("torch.unique(a)", 1000 * 4),
    ],
)
def test_sizes_that_depend_on_the_data_are_bounded(text: str, bound: int) -> None:
    trace = guard(text)
    assert trace.ops[-1].bytes_out >= bound


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("a if a.sum() > 0 else b", "reads a tensor's values in Python"),
        ("torch.zeros(int(a.sum()))", "reads a tensor's values in Python"),
        ("i: [N] int64\ntorch.repeat_interleave(a, i)", "give output_size="),
        ("torch.bincount(a.long().abs())", "'bincount' cannot run on meta tensors"),
        ("torch.tensor_split(a, 10 ** 9)", "would return 1,000,000,000 tensors"),
    ],
)
def test_what_cannot_be_sized_is_not_run(text: str, words: str) -> None:
    assert words in refusal(text)


def test_split_refusal_counts_what_the_split_would_make() -> None:
    guard(f"a.split(N // {MAX_PIECES})[0]", 1000 * MAX_PIECES)  # exactly MAX_PIECES views: fine
    assert f"over {MAX_PIECES:,}" in refusal("a.split(1)[0]", MAX_PIECES + 1)


def test_a_chain_that_would_fail_is_refused_before_it_allocates() -> None:
    message = refusal("t = torch.ones(N, 20000)\nt @ a", 10**5)
    assert message.startswith("line 2: ") and "size mismatch" in message


def test_memory_held_by_garbage_is_collected_before_a_size_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """Between runs the engine collects only the young generations (a full collection costs ~0.1 s
    after a few compiles); cycles a stopped run left may still hold memory, so the guard collects
    everything before it says no."""
    collections: list[tuple] = []
    monkeypatch.setattr(memory_guard.gc, "collect", lambda *generation: collections.append(generation) or 0)
    monkeypatch.setattr(memory_guard, "free_memory", lambda device: (10**12 if collections else 10**3, 10**12))
    add_relu = parse_chain("(a + b).relu()")
    check_memory(add_relu, input_specs(add_relu, 10**6, "fp32"), 10**6, torch.device("cpu"))
    assert collections == [()]  # one full collection, and then the size fits
    monkeypatch.setattr(memory_guard, "free_memory", lambda device: (10**3, 10**12))
    with pytest.raises(MeasureError, match="free"):
        check_memory(add_relu, input_specs(add_relu, 10**6, "fp32"), 10**6, torch.device("cpu"))


def test_a_layers_tensors_count_against_free_memory_as_inputs_do(monkeypatch: pytest.MonkeyPatch) -> None:
    """``x`` is 4 MB and fits in 10 MB; ``nn.Linear(2048, 2048)`` adds its 16.8 MB weight and bias,
    and the chain is refused, naming the layer, before anything is allocated."""
    monkeypatch.setattr(memory_guard, "free_memory", lambda device: (10**7 / memory_guard.MEMORY_HEADROOM, 10**12))
    monkeypatch.setattr(memory_guard.gc, "collect", lambda *generation: 0)
    guard("x: [N, 1000]\nx * 2")
    message = refusal("x: [N, 1000]\nnn.Linear(2048, 2048)(x)")
    assert message == (
        "the chain needs about 20.8 MB for its inputs and layers (layers 16.8 MB; nn.Linear(2048, 2048) "
        "on line 2 holds 16.8 MB) but cpu has 11.1 MB free"
    )


def test_a_layers_output_counts_with_the_intermediates() -> None:
    trace = guard("x: [N, 64]\ny = nn.Linear(64, 256)(x)\nnn.GELU()(y)")
    assert [op.op for op in trace.ops if not op.is_view] == ["aten::addmm", "aten::gelu"]
    assert trace.output_bytes_total == 2 * 1000 * 256 * 4


def test_a_huge_layer_is_refused_on_meta_whatever_its_size() -> None:
    """Constructed on meta only: 8.6 PB of weights are sized, not made; a weight of more bytes than
    a tensor can hold is refused as such."""
    assert "for its inputs and layers" in refusal("x: [N, 64]\nnn.Linear(2147483647, 1000000)(x)")
    message = refusal("x: [N, 3, 8, 8]\nnn.Conv2d(2147483647, 2147483647, 2147483647)(x)")
    assert message.startswith(
        "line 2, col 1: nn.Conv2d(2147483647, 2147483647, 2147483647): its tensors would be too large for any device"
    )


def test_shape_errors_read_as_the_device_words_them() -> None:
    assert refusal("x: [N + 1]\na + x").endswith(
        "The size of tensor a (1000) must match the size of tensor b (1001) at non-singleton dimension 0"
    )
    assert "mat1 and mat2 shapes cannot be multiplied ([1000, 3] @ [1000, 4])" in refusal("x: [N, 3]\ny: [N, 4]\nx @ y")


def test_runaway_op_counts_are_refused() -> None:
    def many_ops(a: torch.Tensor, N: int) -> torch.Tensor:
        for _ in range(MAX_TRACED_OPS + 1):
            a = a + 1
        return a

    with pytest.raises(ChainError, match=f"over {MAX_TRACED_OPS:,} tensor ops"):
        trace_on_meta(many_ops, [torch.empty(4, device="meta")], 4)


def test_plain_python_without_a_tensor_op_is_stopped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(WATCH, "limit_s", 0.5)

    def spins(a: torch.Tensor, N: int) -> torch.Tensor:
        a = a + 1
        while True:
            pass

    begin = time.monotonic()
    with pytest.raises(ChainError) as caught:
        trace_on_meta(spins, [torch.empty(4, device="meta")], 4)
    assert caught.value.info.kind == "stuck"
    assert str(caught.value) == "the chain ran plain Python for 0.5 s without reaching a tensor op: stopped"
    assert time.monotonic() - begin < 5
    guard("(a + b).relu()")  # and the guard works after


def test_a_watch_that_cannot_stop_its_thread_calls_its_last_resort() -> None:
    watch = PlainPythonWatch(limit_s=0.2, grace_s=0.3)
    called = threading.Event()
    release = threading.Event()
    watch.on_unstoppable = lambda message: (called.set(), release.set())

    stopped: list[BaseException] = []

    def blocked() -> None:  # waits in C (a lock), where the stop cannot reach it
        try:
            with watch.watching():
                release.wait()
        except ChainStuck as exc:  # the stop it was sent, taken once it is back in Python
            stopped.append(exc)

    thread = threading.Thread(target=blocked)
    thread.start()
    assert called.wait(10), "the last resort was never called"
    thread.join(10)
    assert not thread.is_alive() and len(stopped) == 1


def test_the_watch_leaves_code_that_reaches_tensor_ops_alone() -> None:
    watch = PlainPythonWatch(limit_s=0.3)
    with watch.watching() as tick:
        deadline = time.monotonic() + 1.0
        while time.monotonic() < deadline:  # a second of work, ticking as tensor ops would
            tick()
            time.sleep(0.01)
