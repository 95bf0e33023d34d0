"""The bf16 compute peak measured between CUDA events (the old way) and from the profiler's kernel
times (the new), in turns in one process; the host's launch time of one mm, and the flush's device time."""
import time, statistics, torch
from probes.compute_peak import _measure_compute_peak
from probes.timing import L2Flusher, WARMUP_MIN_S, sync
from probes.noise import quartiles
dev = torch.device("cuda")
def old_way(dtype="bf16"):
    size = 4096
    a = torch.randn(size, size, device=dev).to(torch.bfloat16); b = torch.randn(size, size, device=dev).to(torch.bfloat16)
    flush = L2Flusher(dev); flops = 2 * size**3
    begin = time.perf_counter()
    while time.perf_counter() - begin < WARMUP_MIN_S:
        torch.mm(a, b); sync(dev)
    rates = []
    for _ in range(10):
        flush()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record(); torch.mm(a, b); e.record(); e.synchronize()
        rates.append(flops / (s.elapsed_time(e) * 1e-3) / 1e12)
    return quartiles(rates)[1]
for r in range(4):
    new = _measure_compute_peak(dev, "bf16").value
    old = old_way()
    print(f"round {r}: profiler kernels {new:.0f} TFLOP/s, CUDA events {old:.0f} TFLOP/s", flush=True)
a = torch.randn(4096, 4096, device=dev).to(torch.bfloat16); b = a.clone(); flush = L2Flusher(dev)
launch = []
for _ in range(20):
    flush(); t = time.perf_counter(); torch.mm(a, b); launch.append((time.perf_counter() - t) * 1e6); sync(dev)
s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
fl = []
for _ in range(10):
    s.record(); flush(); e.record(); e.synchronize(); fl.append(s.elapsed_time(e) * 1e3)
print(f"host time to launch one mm: median {statistics.median(launch):.1f} us (min {min(launch):.1f}); the flush on the device: median {statistics.median(fl):.1f} us")
