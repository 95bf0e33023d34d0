"""Input tensors for a chain at one size: the defaults a, b, c and whatever the user declared."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from probes.chain.expr import ParsedChain

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


@dataclass(frozen=True)
class InputSpec:
    name: str
    shape: tuple[int, ...]
    dtype: torch.dtype

    @property
    def nbytes(self) -> int:
        count = 1
        for dim in self.shape:
            count *= dim
        return count * torch.empty((), dtype=self.dtype).element_size()


def input_specs(chain: ParsedChain, n: int, dtype: str) -> list[InputSpec]:
    """Shapes and dtypes of the inputs the chain uses, at size N=n (declarations override ``dtype``)."""
    return [InputSpec(decl.name, decl.shape(n), TORCH_DTYPES[decl.dtype or dtype]) for decl in chain.inputs]


def meta_inputs(specs: list[InputSpec]) -> list[torch.Tensor]:
    return [torch.empty(spec.shape, dtype=spec.dtype, device="meta") for spec in specs]


def make_inputs(specs: list[InputSpec], device: torch.device, n: int) -> list[torch.Tensor]:
    """Random inputs on ``device``: floats ~ randn, integers in [0, N) (valid indices), bools fair."""
    generator = torch.Generator(device=device).manual_seed(SEED)
    tensors = []
    for spec in specs:
        if spec.dtype.is_floating_point:
            tensor = torch.randn(spec.shape, dtype=spec.dtype, device=device, generator=generator)
        elif spec.dtype == torch.bool:
            tensor = torch.rand(spec.shape, device=device, generator=generator) > 0.5
        else:
            high = max(2, min(n, torch.iinfo(spec.dtype).max))
            tensor = torch.randint(0, high, spec.shape, dtype=spec.dtype, device=device, generator=generator)
        tensors.append(tensor)
    return tensors
