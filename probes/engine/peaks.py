"""The device's measured peaks for one request: the figures a result's % of peak is against.

The peak bandwidth is measured (or read from its cache, ``probes.engine.bandwidth``) before the
request's first size, each dtype's compute peak (``probes.engine.compute_peak``) before the first
result that does FLOPs in it; either is measured again when a kernel beats it by more than the
margin and the cached figure is due a refresh. Each measurement of a peak is said as a step of
its own, so that a wait of a second is never silent: ``ready`` and ``complete`` yield the words
for each before they take it, and the caller says them.
"""

from __future__ import annotations

from collections.abc import Iterator

import torch

from probes.engine import bandwidth, flops
from probes.engine.attribute import apply_peak
from probes.engine.compute_peak import compute_peak, compute_refresh_due
from probes.link.protocol import Measurement


class RequestPeaks:
    """The peaks of one request's device, measured as its results need them."""

    def __init__(self, device: torch.device) -> None:
        self.device = device
        self.bandwidth: float | None = None
        self.compute: dict[str, float] = {}

    def ready(self) -> Iterator[str]:
        """The peak bandwidth, before the first measurement of the request."""
        if self.bandwidth is None:
            yield f"measuring {self.device}'s peak bandwidth (once, cached)"
            self.bandwidth = bandwidth.peak(self.device).value

    def early(self, m: Measurement) -> None:
        """The rows before their wall time: the compute peak where this request has it already."""
        dtype = flops.flop_dtype(m)
        if dtype in self.compute:
            flops.apply_compute_peak(m, self.compute[dtype])

    def complete(self, m: Measurement) -> Iterator[str]:
        """``m`` against the peaks, each measured again first where a kernel of ``m`` beat it."""
        device = self.device
        if bandwidth.beaten(self.bandwidth, [k.gbps for k in m.kernels if k.gbps]) and bandwidth.refresh_due(
            bandwidth.device_key(device)
        ):
            yield f"a kernel beat {device}'s cached peak bandwidth: measuring it again"
            self.bandwidth = bandwidth.peak(device, refresh=True).value
            apply_peak(m, self.bandwidth, device)
        dtype = flops.flop_dtype(m)
        if dtype is None:
            return
        if dtype not in self.compute:
            yield f"measuring {device}'s {dtype} compute peak (once, cached)"
            self.compute[dtype] = compute_peak(device, dtype).value
        if bandwidth.beaten(self.compute[dtype], [k.tflops for k in m.kernels if k.tflops]) and compute_refresh_due(
            device, dtype
        ):
            yield f"a kernel beat {device}'s cached {dtype} compute peak: measuring it again"
            self.compute[dtype] = compute_peak(device, dtype, refresh=True).value
        flops.apply_compute_peak(m, self.compute[dtype])
