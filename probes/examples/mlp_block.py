"""A function and a small ``nn.Module``, as a user's model file holds them.

Profile either with ``kernel-tui`` (the app, re-measured on every save of this file) or headless::

    kernel-tui profile probes/examples/mlp_block.py:bias_gelu --input 'x: [N // 1024, 1024]' --input 'b: [1024]'
    kernel-tui profile probes/examples/mlp_block.py:MlpBlock --input 'x: [N // 256, 256]' --grad
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


def bias_gelu(x: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """A bias and a GELU: two kernels in eager mode, one fused kernel under torch.compile."""
    return F.gelu(x + b)


class MlpBlock(nn.Module):
    """Linear, GELU, Linear: a transformer's MLP, small."""

    def __init__(self, width: int = 256, hidden: int = 1024) -> None:
        super().__init__()
        self.up = nn.Linear(width, hidden)
        self.down = nn.Linear(hidden, width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out: torch.Tensor = self.down(F.gelu(self.up(x)))
        return out
