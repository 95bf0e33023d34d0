"""``torch.nn`` layers in chains (probes.chain.layers, probes.engine.inputs): each runs what torch's
own module runs, its tensors are made once per size on the run's device and dtype, and a chain with
``nn.Linear(64, 128)(x)`` measures the same kernels, counts, bytes and FLOPs as ``F.linear(x, w, b)``
with the same tensors as inputs."""

from __future__ import annotations

import warnings
from typing import Any

import pytest
import torch
import torch.nn.functional as F

from probes.chain.expr import ChainError, ParsedChain, op_words, parse_chain
from probes.chain.layers import LAYERS
from probes.engine import inputs as engine_inputs
from probes.engine.inputs import differentiable, input_specs, make_inputs, make_layer_tensors
from probes.engine.sweep import run_profile
from probes.engine.trace import recording_ops
from probes.link.kernel_names import strip_graph_prefix
from probes.link.protocol import Measurement, MeasurementResult, ProfileRequest, RequestDone, RequestFailed

NAMESPACE: dict[str, object] = {"torch": torch, "F": F}
CPU = torch.device("cpu")

# (a chain constructing one layer and calling it on x, x's shape, x's dtype)
LAYER_CASES: list[tuple[str, tuple[int, ...], torch.dtype]] = [
    ("nn.Linear(16, 8)(x)", (4, 16), torch.float32),
    ("nn.Linear(16, 8, bias=False)(x)", (4, 16), torch.float32),
    ("torch.nn.Linear(16, 8, False)(x)", (4, 16), torch.float32),
    ("nn.LayerNorm(16)(x)", (4, 16), torch.float32),
    ("nn.LayerNorm((4, 16), eps=1e-6, bias=False)(x)", (2, 4, 16), torch.float32),
    ("nn.LayerNorm(16, elementwise_affine=False)(x)", (4, 16), torch.float32),
    ("nn.RMSNorm(16)(x)", (4, 16), torch.float32),
    ("nn.RMSNorm(16, eps=1e-6, elementwise_affine=False)(x)", (4, 16), torch.float32),
    ("nn.GroupNorm(4, 16)(x)", (2, 16, 5), torch.float32),
    ("nn.BatchNorm1d(16)(x)", (4, 16), torch.float32),
    ("nn.BatchNorm1d(16, affine=False, momentum=0.2)(x)", (4, 16, 3), torch.float32),
    ("nn.BatchNorm2d(16, track_running_stats=False)(x)", (2, 16, 3, 3), torch.float32),
    ("nn.Conv1d(16, 8, 3)(x)", (2, 16, 10), torch.float32),
    ("nn.Conv1d(16, 16, 3, padding='same', groups=4, bias=False)(x)", (2, 16, 10), torch.float32),
    ("nn.Conv2d(3, 8, (3, 5), stride=2, padding=(1, 2), dilation=1)(x)", (2, 3, 9, 9), torch.float32),
    ("nn.Embedding(50, 16)(x)", (4, 7), torch.int64),
    ("nn.Embedding(50, 16, padding_idx=-1)(x)", (4, 7), torch.int64),
    ("nn.Dropout(0.25)(x)", (4, 16), torch.float32),
    ("nn.ReLU()(x)", (4, 16), torch.float32),
    ("nn.SiLU()(x)", (4, 16), torch.float32),
    ("nn.GELU(approximate='tanh')(x)", (4, 16), torch.float32),
    ("nn.LeakyReLU(0.2)(x)", (4, 16), torch.float32),
    ("nn.Tanh()(x)", (4, 16), torch.float32),
    ("nn.Sigmoid()(x)", (4, 16), torch.float32),
    ("nn.Softmax(dim=-1)(x)", (4, 16), torch.float32),
    ("nn.LogSoftmax(1)(x)", (4, 16), torch.float32),
]


def real_module(chain: ParsedChain) -> torch.nn.Module:
    """torch's own module for the chain's one layer, with the tensors the engine made for it."""
    (layer,) = chain.layers
    cls = getattr(torch.nn, layer.name)
    module: torch.nn.Module = cls(**layer.kwargs())
    made = make_layer_tensors(layer, CPU, torch.float32)
    with torch.no_grad():
        for name, tensor in module.named_parameters():
            tensor.copy_(made[name])
        for name, tensor in module.named_buffers():
            tensor.copy_(made[name])
    return module.requires_grad_(False)  # as the engine's tensors without grad


def test_every_allowed_layer_has_a_case() -> None:
    constructed = {parse_chain(f"x: [4]\n{call}").layers[0].name for call, _, _ in LAYER_CASES}
    assert constructed == set(LAYERS)


@pytest.mark.parametrize(("call", "shape", "dtype"), LAYER_CASES, ids=[case[0] for case in LAYER_CASES])
def test_a_layer_names_the_tensors_torchs_module_holds(call: str, shape: tuple[int, ...], dtype: torch.dtype) -> None:
    """The tensors the chain language expects (the chain function's parameters) are exactly the
    module's parameters and buffers, with the module's shapes, roles and dtypes."""
    chain = parse_chain(f"x: [4]\n{call}")
    (layer,) = chain.layers
    module = getattr(torch.nn, layer.name)(**layer.kwargs())
    parameters = {name: tuple(t.shape) for name, t in module.named_parameters()}
    buffers = {name: tuple(t.shape) for name, t in module.named_buffers()}
    assert {name for name, role in layer.tensors if role == "parameter"} == set(parameters)
    assert {name for name, role in layer.tensors if role == "buffer"} == set(buffers)
    specs = [spec for spec in input_specs(chain, 4, "bf16") if spec.layer is not None]
    assert {spec.tensor: spec.shape for spec in specs} == parameters | buffers
    for spec in specs:
        assert spec.dtype == (torch.int64 if spec.tensor == "num_batches_tracked" else torch.bfloat16)


@pytest.mark.parametrize(("call", "shape", "dtype"), LAYER_CASES, ids=[case[0] for case in LAYER_CASES])
def test_a_layer_in_a_chain_runs_the_ops_of_torchs_module(
    call: str, shape: tuple[int, ...], dtype: torch.dtype
) -> None:
    """The chain's call of a layer runs the same ATen ops, in the same order, with the same result
    (and the same updated running stats) as calling torch's module on the same tensors."""
    declared = ", ".join(str(d) for d in shape)
    chain = parse_chain(f"x: [{declared}] {'int64' if dtype == torch.int64 else 'fp32'}\n{call}")
    x = torch.randint(0, 50, shape) if dtype == torch.int64 else torch.randn(shape)
    module = real_module(chain)
    tensors = make_inputs(input_specs(chain, 1, "fp32"), CPU, 1)[1:]
    function = chain.build_function(NAMESPACE)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.manual_seed(1)
        with recording_ops() as ours:
            got = function(x, *tensors, N=1)
        torch.manual_seed(1)
        with recording_ops() as theirs:
            expected = module(x)
    assert [op.op for op in ours.ops] == [op.op for op in theirs.ops]
    torch.testing.assert_close(got, expected)
    held = dict(module.named_parameters()) | dict(module.named_buffers())
    for (name, _), tensor in zip(chain.layers[0].tensors, tensors, strict=True):
        torch.testing.assert_close(tensor, held[name].detach(), msg=name)


def test_a_named_layer_called_twice_shares_its_tensors() -> None:
    chain = parse_chain("x: [N, 8]\nlin = nn.Linear(8, 8)\nlin(lin(x)).relu()")
    assert len(chain.layers) == 1 and chain.layer_tensor_names() == ["_kt_layer0_weight", "_kt_layer0_bias"]
    x, w, b = torch.randn(3, 8), torch.randn(8, 8), torch.randn(8)
    torch.testing.assert_close(chain.build_function(NAMESPACE)(x, w, b, N=3), F.linear(F.linear(x, w, b), w, b).relu())


def test_layers_compose_with_the_rest_of_a_chain_and_name_it() -> None:
    text = "x: [N, 64]\nh = nn.Linear(64, 256)(x)\nnn.Linear(256, 64)(nn.GELU()(h)) + x"
    assert op_words(text) == ["linear", "gelu", "linear", "add"]
    assert [layer.name for layer in parse_chain(text).layers] == ["Linear", "Linear", "GELU"]


def test_the_built_function_holds_no_module_and_no_nn() -> None:
    """A chain never holds a module object or the torch.nn namespace: each call of a layer is a
    call of its forward, and ``nn.functional`` is ``F``."""
    function = parse_chain("x: [N, 8]\nnn.functional.relu(nn.Linear(8, 8)(x))").build_function(NAMESPACE)
    scope = function.__globals__
    assert "nn" not in scope
    assert not any(isinstance(value, torch.nn.Module) for value in scope.values())
    assert {name for name in scope if name.startswith("_kt_forward")} == {"_kt_forward0"}


def test_a_compiled_chain_of_layers_traces_in_one_graph() -> None:
    chain = parse_chain("x: [N, 16]\nlin = nn.Linear(16, 16)\nnn.LayerNorm(16)(nn.SiLU()(lin(x)))")
    tensors = make_inputs(input_specs(chain, 4, "fp32"), CPU, 4)
    function = chain.build_function(NAMESPACE)
    compiled = torch.compile(function, backend="eager", fullgraph=True)  # a graph break raises
    torch.testing.assert_close(compiled(*tensors, N=4), function(*tensors, N=4))


def test_layer_tensors_are_made_once_per_size_outside_the_timed_calls(monkeypatch: pytest.MonkeyPatch) -> None:
    """A sweep of two sizes in two modes constructs the layer on the device twice (once per
    size; the other constructions are on meta, for the shapes) and never inside a measured call."""
    on_device: list[str] = []
    real = engine_inputs._construct

    def construct(layer: Any, device: torch.device, dtype: torch.dtype) -> torch.nn.Module:
        if device.type != "meta":
            on_device.append(layer.name)
        return real(layer, device, dtype)

    monkeypatch.setattr(engine_inputs, "_construct", construct)
    results, failures = profile("x: [N, 32]\nnn.LayerNorm(32)(x)", [64, 128], ["eager", "eager"])
    assert not failures and len(results) == 2
    assert on_device == ["LayerNorm", "LayerNorm"]
    for m in results:
        assert sorted(k.name for k in m.kernels) == ["aten::native_layer_norm"]  # no fill_ of its init


def test_layer_tensors_are_the_same_every_run_and_leave_torchs_random_state_alone() -> None:
    chain = parse_chain("x: [N, 8]\nnn.Linear(8, 4)(x)")
    torch.manual_seed(7)
    first = make_inputs(input_specs(chain, 2, "fp32"), CPU, 2)
    after_first = torch.rand(3)
    torch.manual_seed(7)
    second = make_inputs(input_specs(chain, 2, "fp32"), CPU, 2)
    assert torch.equal(after_first, torch.rand(3))
    for a, b in zip(first, second, strict=True):
        assert torch.equal(a, b)


def test_with_grad_the_parameters_are_differentiated_and_running_stats_are_not() -> None:
    chain = parse_chain("x: [N, 8]\nnn.BatchNorm1d(8)(nn.Linear(8, 8)(x))")
    tensors = make_inputs(input_specs(chain, 4, "fp32"), CPU, 4)
    names = ["x", *chain.layer_tensor_names()]
    chosen = {id(t) for t in differentiable(chain, tensors)}
    assert [name for name, t in zip(names, tensors, strict=True) if id(t) in chosen] == [
        "x",
        "_kt_layer0_weight",
        "_kt_layer0_bias",
        "_kt_layer1_weight",
        "_kt_layer1_bias",
    ]
    assert not any(t.requires_grad for t in tensors)  # only a training step asks for grad
    # as a module's own: torch.compile keeps their shapes static and CUDA graphs their addresses
    assert all(isinstance(t, torch.nn.Parameter) for t in tensors[1:])


# ---------------------------------------------------------------------------------------------
# The same kernels as the functional chain with explicit tensors
# ---------------------------------------------------------------------------------------------


def profile(
    chain: str, sizes: list[int], modes: list[str], device: str = "cpu", **kwargs: Any
) -> tuple[list[Measurement], list[RequestFailed]]:
    events: list[Any] = []
    request = ProfileRequest("l", chain, sizes=sizes, modes=modes, device=device, reps=3, **kwargs)
    run_profile(request, events.append)
    assert isinstance(events[-1], RequestDone)
    results = [e.measurement for e in events if isinstance(e, MeasurementResult)]
    return results, [e for e in events if isinstance(e, RequestFailed)]


def figures(m: Measurement) -> dict[str, Any]:
    """What must be equal between two spellings of one computation: the kernels (name, pass,
    launches; a compiled kernel's name without the ``graph_N_`` its compile is told apart by), the
    bytes and FLOPs of each pass, the counts, the bytes per call and the input
    bytes; on the CPU each kernel's own bytes and FLOPs too. Where one op launches several CUDA
    kernels (cuBLAS's split-K GEMM and its reduction) the op's bytes and FLOPs are shared among
    them by their measured times, which differ a little from one run to the next."""
    per_kernel = m.device == "cpu"
    by_pass: dict[Any, list[int]] = {}
    for k in m.kernels:
        totals = by_pass.setdefault(k.pass_, [0, 0])
        totals[0] += k.bytes or 0
        totals[1] += k.flops or 0
    return {
        "kernels": sorted(
            (strip_graph_prefix(k.name), k.pass_, k.launches_per_call) + ((k.bytes, k.flops) if per_kernel else ())
            for k in m.kernels
        ),
        "bytes_and_flops_by_pass": by_pass,
        "kernels_per_call": m.kernels_per_call,
        "bytes_per_call": m.bytes_per_call,
        "input_bytes": m.input_bytes,
        "ran_compiled": m.ran_compiled,
    }


LINEAR = "x: [N, 64]\nnn.Linear(64, 128)(x)"
F_LINEAR = "x: [N, 64]\nw: [128, 64]\nb: [128]\nF.linear(x, w, b)"
LAYER_NORM = "x: [N, 64]\nnn.LayerNorm(64)(x)"
F_LAYER_NORM = "x: [N, 64]\nw: [64]\nb: [64]\nF.layer_norm(x, (64,), w, b)"


def same_figures(layer_chain: str, functional_chain: str, modes: list[str], **kwargs: Any) -> None:
    ours, failures = profile(layer_chain, [256], modes, **kwargs)
    assert not failures, [f.error.located() for f in failures]
    theirs, failures = profile(functional_chain, [256], modes, **kwargs)
    assert not failures, [f.error.located() for f in failures]
    assert len(ours) == len(theirs) == len(modes)
    for a, b in zip(ours, theirs, strict=True):
        assert figures(a) == figures(b), a.mode


@pytest.mark.parametrize("grad", [False, True], ids=["forward", "grad"])
@pytest.mark.parametrize(("layer_chain", "functional_chain"), [(LINEAR, F_LINEAR), (LAYER_NORM, F_LAYER_NORM)])
def test_a_layer_measures_as_the_functional_call_with_its_tensors_as_inputs(
    layer_chain: str, functional_chain: str, grad: bool
) -> None:
    """Eager, on the CPU: with grad, the weight's and bias's gradient kernels are there too."""
    same_figures(layer_chain, functional_chain, ["eager"], grad=grad)


def test_with_grad_a_linear_layer_shows_its_weight_gradient_kernels() -> None:
    (m,), failures = profile(LINEAR, [256], ["eager"], grad=True)
    assert not failures
    backward = sorted((k.name, k.launches_per_call) for k in m.kernels if k.pass_ == "backward")
    assert backward == [("aten::mm", 2.0), ("aten::sum", 1.0)]  # input and weight gradients, the bias's


@pytest.mark.slow
@pytest.mark.parametrize("grad", [False, True], ids=["forward", "grad"])
@pytest.mark.parametrize(("layer_chain", "functional_chain"), [(LINEAR, F_LINEAR), (LAYER_NORM, F_LAYER_NORM)])
def test_a_compiled_layer_measures_as_the_compiled_functional_call(
    layer_chain: str, functional_chain: str, grad: bool
) -> None:
    same_figures(layer_chain, functional_chain, ["compiled"], grad=grad)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
@pytest.mark.parametrize("grad", [False, True], ids=["forward", "grad"])
@pytest.mark.parametrize(("layer_chain", "functional_chain"), [(LINEAR, F_LINEAR), (LAYER_NORM, F_LAYER_NORM)])
def test_on_cuda_a_layer_measures_as_the_functional_call(layer_chain: str, functional_chain: str, grad: bool) -> None:
    same_figures(layer_chain, functional_chain, ["eager", "compiled"], device="cuda", dtype="bf16", grad=grad)


# ---------------------------------------------------------------------------------------------
# Refusals
# ---------------------------------------------------------------------------------------------


def test_what_torchs_constructor_refuses_is_one_line_at_the_layer_before_anything_is_allocated() -> None:
    results, failures = profile("x: [N, 64]\ny = x * 2\nnn.GroupNorm(3, 64)(y)", [64], ["eager"])
    assert not results
    (failure,) = failures
    assert failure.error.located() == (
        "line 3, col 1: nn.GroupNorm(3, 64): num_channels (64) must be divisible by num_groups (3)"
    )


def test_a_layer_whose_tensors_do_not_fit_is_refused_naming_it() -> None:
    results, failures = profile("x: [N, 64]\nnn.Linear(1000000, 1000000)(x)", [64], ["eager"])
    assert not results
    (failure,) = failures
    assert failure.error.kind == "memory"
    assert "4000.00 GB for its inputs and layers" in failure.error.message
    assert "nn.Linear(1000000, 1000000) on line 2 holds 4000.00 GB" in failure.error.message


def test_a_layer_refused_while_typing_never_reaches_the_engine() -> None:
    with pytest.raises(ChainError) as caught:
        parse_chain("x: [N, 64]\nnn.Linear(64, 128).weight.data.fill_(0)")
    assert caught.value.info.located().startswith("line 2, col 1: nn.Linear(...) makes a layer")


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_on_cuda_graphs_replay_layers_that_update_their_running_stats() -> None:
    """reduce-overhead replays a CUDA graph over a convolution and a BatchNorm: its parameters and
    running stats are static inputs, as a module's own, so the graph is not skipped for the
    in-place update of the running stats."""
    chain = "x: [N, 64, 16, 16]\nnn.BatchNorm2d(64)(nn.Conv2d(64, 64, 3, padding=1)(x))"
    results, failures = profile(chain, [32], ["compiled", "reduce-overhead"], device="cuda", dtype="bf16")
    assert not failures, [f.error.located() for f in failures]
    compiled, replayed = results
    assert compiled.ran_compiled and replayed.ran_compiled, replayed.fallback_reason
    assert not [line for line in replayed.diagnostics if "skipping cudagraphs" in line]
