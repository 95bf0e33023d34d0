"""Input tensors for a chain at one size: the defaults a, b, c, whatever the user declared, and
the tensors of the ``torch.nn`` layers the chain constructs (probes.chain.layers).

A layer's tensors (parameters and buffers) are inputs of the chain function like any other: they
are made here once per (chain, size, dtype, device), outside every timed call, so that a measured
call runs the layer's forward and never its initialisation; the memory guard counts them with the
inputs; with grad the parameters require grad as the float inputs do (``differentiable``), the
buffers (BatchNorm's running stats) never. They are made by constructing the real ``torch.nn``
module on the device, in the run's dtype, with torch's own initialisation from a fixed seed; their
shapes come from the same constructor run on meta tensors, which allocates nothing and raises
what torch's constructor raises (``GroupNorm(3, 64)``) before anything is allocated.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import torch

from probes.chain.expr import ChainError, Layer, ParsedChain, layer_tensor_name
from probes.link.protocol import ChainErrorInfo, ErrorKind
from probes.link.safe_text import inert_line

TORCH_DTYPES: dict[str, torch.dtype] = {
    "fp32": torch.float32,
    "bf16": torch.bfloat16,
    "fp16": torch.float16,
    "fp64": torch.float64,
    "int64": torch.int64,
    "int32": torch.int32,
    "int16": torch.int16,
    "int8": torch.int8,
    "uint8": torch.uint8,
    "bool": torch.bool,
}

SEED = 0
_META = torch.device("meta")


@dataclass(frozen=True)
class LayerSlot:
    """A layer of a chain, as its tensors are made: its index in the chain, the layer, the run's dtype."""

    index: int
    layer: Layer
    dtype: torch.dtype


@dataclass(frozen=True)
class InputSpec:
    name: str
    shape: tuple[int, ...]
    dtype: torch.dtype
    layer: LayerSlot | None = None
    """For a layer's tensor: the layer it belongs to (None for an input)."""
    tensor: str = ""
    """For a layer's tensor: its name in the module (``weight``, ``running_mean``...)."""

    @property
    def nbytes(self) -> int:
        count = 1
        for dim in self.shape:
            count *= dim
        return count * torch.empty((), dtype=self.dtype).element_size()


def input_specs(chain: ParsedChain, n: int, dtype: str) -> list[InputSpec]:
    """Shapes and dtypes of the chain function's tensors at size N=n: the inputs it uses
    (declarations override ``dtype``), then each layer's tensors, in the run's ``dtype``."""
    specs = [InputSpec(decl.name, decl.shape(n), TORCH_DTYPES[decl.dtype or dtype]) for decl in chain.inputs]
    for index, layer in enumerate(chain.layers):
        slot = LayerSlot(index, layer, TORCH_DTYPES[dtype])
        for tensor, shape, tensor_dtype in _layer_tensors(layer, slot.dtype):
            specs.append(InputSpec(layer_tensor_name(index, tensor), shape, tensor_dtype, slot, tensor))
    return specs


def meta_inputs(specs: list[InputSpec]) -> list[torch.Tensor]:
    return [torch.empty(spec.shape, dtype=spec.dtype, device=_META) for spec in specs]


def layer_bytes(specs: list[InputSpec]) -> int:
    """The bytes of the layers' tensors among ``specs``."""
    return sum(spec.nbytes for spec in specs if spec.layer is not None)


def _construct(layer: Layer, device: torch.device, dtype: torch.dtype) -> torch.nn.Module:
    cls = getattr(torch.nn, layer.name)
    factory = {"device": device, "dtype": dtype} if layer.cls.factory else {}
    module: torch.nn.Module = cls(**layer.kwargs(), **factory)
    return module


@functools.lru_cache(maxsize=256)
def _layer_tensors(layer: Layer, dtype: torch.dtype) -> tuple[tuple[str, tuple[int, ...], torch.dtype], ...]:
    """(name, shape, dtype) of each of the layer's tensors, from torch's constructor on meta
    tensors; ChainError (placed at the layer) with what the constructor refused."""
    try:
        module = _construct(layer, _META, dtype)
    except Exception as exc:  # whatever torch's constructor raises, as one line at the layer
        text = str(exc).strip() or type(exc).__name__
        if "overflow" in text:
            kind: ErrorKind = "memory"
            text = f"its tensors would be too large for any device (torch: {text})"
        else:
            kind = "input"
        raise ChainError(ChainErrorInfo(kind, inert_line(f"{layer.text()}: {text}"), layer.line, layer.col)) from None
    held = dict(module.named_parameters()) | dict(module.named_buffers())
    return tuple((name, tuple(held[name].shape), held[name].dtype) for name, _ in layer.tensors)


@contextmanager
def _seeded(device: torch.device) -> Iterator[None]:
    """torch's random state seeded with SEED for the block and restored after: a layer's initial
    values are the same in every run, and the chain's own random ops see the state they would."""
    cuda = [device.index if device.index is not None else torch.cuda.current_device()] if device.type == "cuda" else []
    with torch.random.fork_rng(devices=cuda):
        torch.default_generator.manual_seed(SEED)
        if cuda:
            with torch.cuda.device(cuda[0]):
                torch.cuda.manual_seed(SEED)
        yield


def make_layer_tensors(layer: Layer, device: torch.device, dtype: torch.dtype) -> dict[str, torch.Tensor]:
    """The layer's tensors as torch's module makes them on ``device`` in ``dtype``, by name, each
    an ``nn.Parameter`` that requires grad only where the run asks (``differentiable``).

    Parameters, buffers too: torch.compile treats a Parameter given to a function as it treats a
    module's parameters and buffers (static shapes under ``dynamic``, static addresses that CUDA
    graphs neither copy nor refuse to see updated in place), where a plain tensor would be an
    ordinary input."""
    with _seeded(device):
        module = _construct(layer, device, dtype)
    held = dict(module.named_parameters()) | dict(module.named_buffers())
    return {name: torch.nn.Parameter(held[name].detach(), requires_grad=False) for name, _ in layer.tensors}


def make_inputs(specs: list[InputSpec], device: torch.device, n: int) -> list[torch.Tensor]:
    """Random inputs on ``device``: floats ~ randn, integers in [0, N) (valid indices), bools fair;
    a layer's tensors as its module makes them (each layer constructed once)."""
    generator = torch.Generator(device=device).manual_seed(SEED)
    tensors = []
    made: dict[int, dict[str, torch.Tensor]] = {}
    for spec in specs:
        if spec.layer is not None:
            slot = spec.layer
            if slot.index not in made:
                made[slot.index] = make_layer_tensors(slot.layer, device, slot.dtype)
            tensor = made[slot.index][spec.tensor]
        elif spec.dtype.is_floating_point:
            tensor = torch.randn(spec.shape, dtype=spec.dtype, device=device, generator=generator)
        elif spec.dtype == torch.bool:
            tensor = torch.rand(spec.shape, device=device, generator=generator) > 0.5
        else:
            high = max(2, min(n, torch.iinfo(spec.dtype).max))
            tensor = torch.randint(0, high, spec.shape, dtype=spec.dtype, device=device, generator=generator)
        tensors.append(tensor)
    return tensors


def differentiable(chain: ParsedChain, inputs: list[torch.Tensor]) -> list[torch.Tensor]:
    """What a training step differentiates: the float inputs and the layers' parameters, never a
    layer's buffers (BatchNorm's running stats, which its forward updates in place)."""
    roles = ["input"] * len(chain.inputs) + [role for layer in chain.layers for _, role in layer.tensors]
    return [t for t, role in zip(inputs, roles, strict=True) if role != "buffer" and t.is_floating_point()]
