"""The bf16 compute peak measured four ways, in one process, alternating, on the device."""
import json, time, torch
from probes.compute_peak import measure_compute_peak
from probes.timing import L2Flusher
dev = torch.device("cuda")
def burst(size, per_rep, flush_between):
    a = torch.randn(size, size, device=dev).bfloat16(); b = torch.randn(size, size, device=dev).bfloat16()
    flush = L2Flusher(dev); t = time.perf_counter()
    while time.perf_counter() - t < 0.1:
        torch.mm(a, b); torch.cuda.synchronize()
    rates = []
    for _ in range(10):
        if flush_between: flush()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        for _ in range(per_rep): torch.mm(a, b)
        e.record(); e.synchronize()
        rates.append(2 * size**3 * per_rep / (s.elapsed_time(e) * 1e-3) / 1e12)
    rates.sort()
    return round(rates[5], 1), round(rates[-1], 1)
for round_ in range(2):
    print(json.dumps({"round": round_, "tool_now": round(measure_compute_peak(dev, "bf16").value, 1),
                      "8192_x5_back_to_back": burst(8192, 5, False), "8192_flush_each": burst(8192, 1, True),
                      "4096_flush_each": burst(4096, 1, True), "4096_x5_back_to_back": burst(4096, 5, False)}), flush=True)
