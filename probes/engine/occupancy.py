"""Theoretical occupancy of a CUDA kernel: how many of an SM's warp slots its blocks can fill.

The calculation is CUDA's occupancy calculator's. An SM holds as many blocks of a kernel at once
as the tightest of four limits allows:

- **warps**: the SM's thread slots (``max_threads_per_multi_processor`` / warp size warps) over
  the block's warps;
- **registers**: registers are given out per warp, rounded up to the allocation unit (256 on
  sm_5x-sm_9x), so a warp of ``r``-register threads takes ``ceil(32 r / 256) x 256`` of the SM's
  register file (65,536 on an H200), and a block takes whole warps' worth;
- **shared memory**: the block's static + dynamic shared memory, plus the 1 KiB the runtime
  reserves per block on sm_8x and later, rounded up to 128 bytes, out of the SM's shared memory;
- **blocks**: a fixed number per SM by compute capability (32 on sm_90), not a device property.

Occupancy = resident warps / the SM's warp slots. It is the ceiling a kernel can reach: a grid
too small to give every SM that many blocks reaches less (Kineto's "est. achieved occupancy"
accounts for the grid but reads 0 for cuBLAS's kernels), and low occupancy is not slow by itself:
a matmul that keeps its tiles in registers and shared memory runs fast at 12-19%.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

REGISTER_UNIT = 256
"""Registers are allocated to a warp in units of this many (sm_5x to sm_9x)."""
SHARED_MEMORY_UNIT = 128
SHARED_MEMORY_RESERVED_PER_BLOCK = 1024
"""What the CUDA runtime keeps of an SM's shared memory for each resident block (sm_8x and later)."""

MAX_BLOCKS_PER_SM = {
    (5, 0): 32, (5, 2): 32, (5, 3): 32, (6, 0): 32, (6, 1): 32, (6, 2): 32, (7, 0): 32, (7, 2): 32,
    (7, 5): 16, (8, 0): 32, (8, 6): 16, (8, 7): 16, (8, 9): 24, (9, 0): 32, (10, 0): 32, (10, 3): 32,
    (12, 0): 32,
}  # fmt: skip
"""Resident blocks per SM by compute capability (CUDA Programming Guide, "Compute Capabilities")."""
DEFAULT_MAX_BLOCKS_PER_SM = 32
"""For a compute capability missing from the table: the most common figure."""


@dataclass(frozen=True)
class DeviceLimits:
    """What one SM of a GPU holds (``torch.cuda.get_device_properties`` and the table above)."""

    max_threads_per_sm: int
    registers_per_sm: int
    shared_memory_per_sm: int
    warp_size: int
    max_blocks_per_sm: int
    reserves_shared_memory: bool
    """Whether the runtime keeps ``SHARED_MEMORY_RESERVED_PER_BLOCK`` per block (sm_8x and later)."""

    @classmethod
    def for_capability(
        cls,
        major: int,
        minor: int,
        max_threads_per_sm: int,
        registers_per_sm: int,
        shared_memory_per_sm: int,
        warp_size: int,
    ) -> DeviceLimits:
        return cls(
            max_threads_per_sm=max_threads_per_sm,
            registers_per_sm=registers_per_sm,
            shared_memory_per_sm=shared_memory_per_sm,
            warp_size=warp_size,
            max_blocks_per_sm=MAX_BLOCKS_PER_SM.get((major, minor), DEFAULT_MAX_BLOCKS_PER_SM),
            reserves_shared_memory=major >= 8,
        )

    @property
    def max_warps_per_sm(self) -> int:
        return self.max_threads_per_sm // self.warp_size


H200 = DeviceLimits.for_capability(9, 0, 2048, 65536, 233472, 32)
"""An H200's limits, as torch reports them there (the worked examples in the tests)."""


@dataclass(frozen=True)
class Occupancy:
    blocks_per_sm: int
    occupancy: float
    """Resident warps over the SM's warp slots, 0..1."""
    limit: str
    """The limit that bounds ``blocks_per_sm``: warps, registers, shared memory or blocks."""


def _round_up(value: int, unit: int) -> int:
    return math.ceil(value / unit) * unit


def theoretical_occupancy(
    limits: DeviceLimits, threads_per_block: int, registers_per_thread: int, shared_memory_bytes: int
) -> Occupancy | None:
    """The blocks an SM holds at once and the occupancy they give; None for a block that cannot
    run (no threads, or more than the SM has)."""
    warps_per_block = math.ceil(threads_per_block / limits.warp_size)
    if warps_per_block <= 0 or warps_per_block > limits.max_warps_per_sm:
        return None
    by_limit = {
        "warps": limits.max_warps_per_sm // warps_per_block,
        "blocks": limits.max_blocks_per_sm,
    }
    if registers_per_thread > 0:
        per_warp = _round_up(registers_per_thread * limits.warp_size, REGISTER_UNIT)
        by_limit["registers"] = (limits.registers_per_sm // per_warp) // warps_per_block
    reserved = SHARED_MEMORY_RESERVED_PER_BLOCK if limits.reserves_shared_memory else 0
    per_block = _round_up(shared_memory_bytes + reserved, SHARED_MEMORY_UNIT)
    if per_block > 0:
        by_limit["shared memory"] = limits.shared_memory_per_sm // per_block
    limit = min(by_limit, key=lambda name: by_limit[name])
    blocks = by_limit[limit]
    return Occupancy(blocks, blocks * warps_per_block / limits.max_warps_per_sm, limit)
