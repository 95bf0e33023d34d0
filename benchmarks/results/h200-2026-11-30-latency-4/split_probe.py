"""Why does one process read ~43 µs and another ~70 µs per compiled call at 1e7 on the H200?
Per fresh process: device time of the kernel, host enqueue time per call, wall per call in a
back-to-back loop, Python speed of the core, the CPU it ran on."""
import json, os, sys, time
import torch
N = 10**7
dev = torch.device("cuda")
a, b, c = (torch.randn(N, device=dev) for _ in range(3))
f = torch.compile(lambda a, b, c: (a * b + c).tanh())
f(a, b, c); torch.cuda.synchronize()
def py_speed():
    t = time.perf_counter(); s = 0
    for i in range(200_000): s += i
    return round((time.perf_counter() - t) * 1e3, 2)
def wall(k=200):
    torch.cuda.synchronize(); t = time.perf_counter()
    for _ in range(k): f(a, b, c)
    torch.cuda.synchronize(); return round((time.perf_counter() - t) / k * 1e6, 2)
def host(k=200):
    torch.cuda.synchronize(); t = time.perf_counter()
    for _ in range(k): f(a, b, c)
    e = time.perf_counter(); torch.cuda.synchronize(); return round((e - t) / k * 1e6, 2)
for _ in range(50): f(a, b, c)
from torch.profiler import profile, ProfilerActivity
with profile(activities=[ProfilerActivity.CUDA]) as p:
    for _ in range(20): f(a, b, c)
    torch.cuda.synchronize()
kern = [(e.key[:60], round(e.device_time, 2)) for e in p.key_averages() if e.device_time > 0]
ev = [e for e in p.events() if e.device_type.name == "CUDA"]
stat = open("/proc/self/stat").read().split()
from torch._inductor import config as ic
print(json.dumps({"pid": os.getpid(), "cpu": int(stat[38]), "affinity": len(os.sched_getaffinity(0)),
    "py_ms": [py_speed() for _ in range(3)], "wall_us": [wall() for _ in range(3)], "host_us": [host() for _ in range(3)],
    "kernels": kern[:3], "cpp_wrapper": ic.cpp_wrapper, "triton_cudagraphs": ic.triton.cudagraphs,
    "launcher": os.environ.get("TORCHINDUCTOR_USE_STATIC_CUDA_LAUNCHER")}), flush=True)
# the engine's own reading of the same chain in this process (what the GPU test compares)
sys.path.insert(0, os.getcwd())
from probes.protocol import ProfileRequest, MeasurementResult
from probes.sweep import run_profile
ev = []
run_profile(ProfileRequest(id="s", chain="(a * b + c).tanh()", sizes=[N], modes=["compiled"], device="cuda"), ev.append)
for e in ev:
    if isinstance(e, MeasurementResult):
        m = e.measurement
        print(json.dumps({"engine_wall_us": round(m.wall_time_us, 2), "engine_device_us": round(m.device_time_us, 2),
                          "iqr": m.wall_time_us_iqr, "kernels": [(k.short_name, round(k.time_per_call_us, 2)) for k in m.kernels]}), flush=True)
