"""Which part of a profiler session slows later calls? python lab/taint.py VARIANT"""
import json, os, statistics, sys, time
import torch
DEV = torch.device("cuda:0")
g = [torch.randn(100, device=DEV) for _ in range(3)]
c = [torch.randn(100) for _ in range(3)]
def gpu_call(): return (g[0] * g[1] + g[2]).tanh()
def cpu_call(): return (c[0] * c[1] + c[2]).tanh()
def host(fn):
    for _ in range(50): fn()
    torch.cuda.synchronize(); per = []
    for _ in range(20):
        t = time.perf_counter()
        for _ in range(100): fn()
        per.append((time.perf_counter() - t) / 100 * 1e6); torch.cuda.synchronize()
    return round(statistics.median(per), 2)
def probe(tag):
    print(json.dumps({"v": sys.argv[1], "tag": tag, "gpu_ops_us": host(gpu_call), "cpu_ops_us": host(cpu_call),
                      "threads": len(os.listdir("/proc/self/task"))}), flush=True)
probe("fresh")
v = sys.argv[1]
from torch.profiler import profile, ProfilerActivity
if v == "cuda+cpu":
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]): gpu_call(); torch.cuda.synchronize()
elif v == "cuda-only":
    with profile(activities=[ProfilerActivity.CUDA]): gpu_call(); torch.cuda.synchronize()
elif v == "legacy":
    with torch.autograd.profiler.profile(use_kineto=False): gpu_call()
elif v == "record_function":
    with torch.profiler.record_function("x"): gpu_call()
probe("after one session")
time.sleep(5)
probe("after 5 s more")
