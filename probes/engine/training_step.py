"""A training step, as the build stage makes it and the measure stage runs it: forward, then
backward from a materialised gradient of the output's shape (see ``GRAD_SEED``)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch

from probes.engine.launches import BACKWARD_LABEL

GRAD_SEED = "materialised ones of the output's shape and dtype"
"""How a training step's backward is seeded (the ``grad_seed`` of a measurement with grad)."""


def outputs_of(result: Any) -> list[torch.Tensor]:
    """The chain's result as a list of tensors (a tuple's parts)."""
    return [result] if isinstance(result, torch.Tensor) else list(result)


def seeds_for(outputs: list[torch.Tensor]) -> list[torch.Tensor]:
    """The upstream gradient of each output as a loss would hand it over: a tensor of ones at the
    output's shape and dtype, materialised (not ``.sum()``'s expanded scalar, which a matmul's
    backward copies to a contiguous tensor that no real loss makes it copy)."""
    return [torch.ones_like(out, memory_format=torch.contiguous_format) for out in outputs]


def backward_of(result: Any, seeds: list[torch.Tensor]) -> None:
    """The backward of the chain's result from the given seeds."""
    torch.autograd.backward(outputs_of(result), seeds)


@dataclass
class GradStep:
    """One training step: forward, then backward from the output's materialised gradient
    (gradients reset first, so that no accumulation kernel joins the second and later calls).
    The seeds are made once, on the first call (a warm-up), and kept: their set-up kernel is the
    tool's and runs outside every measured call."""

    forward: Callable[[], Any]
    leaves: list[torch.Tensor]
    labelled: bool = False
    """Mark the backward with a profiler label (the profiled reps), or not (the timed reps)."""
    seeds: list[torch.Tensor] = field(default_factory=list)
    """Shared with the step's labelled twin (``labelled_twin``)."""

    def __call__(self) -> None:
        for leaf in self.leaves:
            leaf.grad = None
        result = self.forward()
        if not self.seeds:
            with torch.no_grad():
                self.seeds.extend(seeds_for(outputs_of(result)))
        if self.labelled:
            with torch.profiler.record_function(BACKWARD_LABEL):
                backward_of(result, self.seeds)
        else:
            backward_of(result, self.seeds)

    def labelled_twin(self) -> GradStep:
        """The same step with its backward labelled for the profiler, sharing the seeds."""
        return dataclasses.replace(self, labelled=True)
