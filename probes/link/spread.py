"""``--spread``: a sweep's (size, mode) pairs shared out among devices of one kind, the one rule
``kernel-tui profile`` and the app both follow (``probes.several_devices``, ``tui.session_devices``).

Torch-free and light: the app imports it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

from probes.link.protocol import ProfileRequest
from probes.link.summary import format_size

Pair = tuple[int, str]
"""One (size, mode) of a sweep."""

COMPILE_COST = 20.0
"""What a compiled pair is expected to cost, in eager measurements: a compile takes seconds at any
size, where an eager measurement's reps are sized to a fraction of a second."""
SIZE_COST = 1e8
"""The size N whose inputs and reps are expected to cost as much again as a small eager
measurement: making inputs and running reps grow with N."""


def expected_cost(size: int, mode: str) -> float:
    """A (size, mode) pair's expected time, in eager measurements of a small size: rough, as it
    only has to rank the pairs (``share_out``)."""
    return (1.0 if mode == "eager" else COMPILE_COST) + size / SIZE_COST


def share_out(pairs: Iterable[Pair], count: int) -> list[list[Pair]]:
    """The pairs shared out among ``count`` devices, greedily by expected cost: the costliest
    first, each to the device with the least expected work so far (ties to the first device).

    Greedy rather than round-robin because the costs are lopsided: a compiled pair costs tens of
    eager ones, and round-robin over a sweep's size-major order (eager, compiled, eager, ...)
    would give every compile to the same device of two. Each device's pairs keep the sweep's order."""
    ordered = list(pairs)
    shares: list[list[Pair]] = [[] for _ in range(count)]
    loads = [0.0] * count
    for pair in sorted(ordered, key=lambda p: -expected_cost(*p)):
        least = min(range(count), key=lambda index: loads[index])
        shares[least].append(pair)
        loads[least] += expected_cost(*pair)
    return [sorted(share, key=ordered.index) for share in shares]


def share_requests(request: ProfileRequest, share: list[Pair], tag: str) -> list[ProfileRequest]:
    """One device's share as requests: the sizes that take the same modes in one request each."""
    sizes_by_modes: dict[tuple[str, ...], list[int]] = {}
    for size in dict.fromkeys(size for size, _ in share):
        modes = tuple(mode for mode in request.modes if (size, mode) in share)
        sizes_by_modes.setdefault(modes, []).append(size)
    return [
        dataclasses.replace(request, id=f"{request.id}-{tag}-{index}", sizes=sizes, modes=list(modes))
        for index, (modes, sizes) in enumerate(sizes_by_modes.items())
    ]


def not_measured_text(pairs: Iterable[Pair]) -> str:
    """``not measured: eager N=1e4, compiled N=1e6``: what a device that dropped leaves undone."""
    return "not measured: " + ", ".join(f"{mode} N={format_size(size)}" for size, mode in pairs)
