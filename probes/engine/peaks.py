"""The device's measured peaks for one request: the figures a result's % of peak is against.

The peak bandwidth is measured (or read from its cache, ``probes.engine.bandwidth``) before the
request's first size, each dtype's compute peak (``probes.engine.compute_peak``) before the first
result that does FLOPs in it; either is measured again when a kernel beats it by more than the
margin and the cached figure is due a refresh. Each measurement of a peak is said as a step of
its own, so that a wait of a second is never silent.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from probes.engine import bandwidth, flops
from probes.engine.attribute import apply_peak
from probes.engine.compute_peak import compute_peak, compute_refresh_due
from probes.link.protocol import Measurement

Say = Callable[[str, str | None, int], None]
"""Says a step of the request (its words, the mode or None, the size)."""


class RequestPeaks:
    """The peaks of one request's device, measured as its results need them."""

    def __init__(self, device: torch.device, say: Say) -> None:
        self.device = device
        self.say = say
        self.bandwidth: float | None = None
        self.compute: dict[str, float] = {}

    def ready(self, n: int) -> None:
        """The peak bandwidth, before the first measurement of the request (at size ``n``)."""
        if self.bandwidth is None:
            self.say(f"measuring {self.device}'s peak bandwidth (once, cached)", None, n)
            self.bandwidth = bandwidth.peak(self.device).value

    def early(self, m: Measurement) -> None:
        """The rows before their wall time: the compute peak where this request has it already."""
        dtype = flops.flop_dtype(m)
        if dtype in self.compute:
            flops.apply_compute_peak(m, self.compute[dtype])

    def complete(self, m: Measurement) -> None:
        """``m`` against the peaks, each measured again first where a kernel of ``m`` beat it."""
        device = self.device
        if bandwidth.beaten(self.bandwidth, [k.gbps for k in m.kernels if k.gbps]) and bandwidth.refresh_due(
            bandwidth.device_key(device)
        ):
            self.say(f"a kernel beat {device}'s cached peak bandwidth: measuring it again", m.mode, m.size)
            self.bandwidth = bandwidth.peak(device, refresh=True).value
            apply_peak(m, self.bandwidth, device)
        dtype = flops.flop_dtype(m)
        if dtype is None:
            return
        if dtype not in self.compute:
            self.say(f"measuring {device}'s {dtype} compute peak (once, cached)", m.mode, m.size)
            self.compute[dtype] = compute_peak(device, dtype).value
        if bandwidth.beaten(self.compute[dtype], [k.tflops for k in m.kernels if k.tflops]) and compute_refresh_due(
            device, dtype
        ):
            self.say(f"a kernel beat {device}'s cached {dtype} compute peak: measuring it again", m.mode, m.size)
            self.compute[dtype] = compute_peak(device, dtype, refresh=True).value
        flops.apply_compute_peak(m, self.compute[dtype])
