"""Worker start phases on the device: import torch, CUDA context, torch._dynamo (the meta run's), first requests."""
import sys, time, threading
t0 = time.perf_counter()
mode = sys.argv[1]
def mark(name): print(f"{mode:12s} {name:28s} {time.perf_counter()-t0:7.3f}", flush=True)
import torch; mark("import torch")
dev = torch.device(sys.argv[3] if len(sys.argv) > 3 else "cuda")
def ctx():
    torch.ones(1, device=dev).add_(1); dev.type == "cuda" and torch.cuda.synchronize(dev)
def dyn():
    import torch._dynamo  # noqa
if mode == "seq":
    ctx(); mark("cuda ctx")
    dyn(); mark("import dynamo")
elif mode == "bg-cuda":
    th = threading.Thread(target=ctx); th.start()
    dyn(); mark("import dynamo")
    th.join(); mark("cuda ctx joined")
elif mode == "bg-dynamo":
    th = threading.Thread(target=dyn); th.start()
    ctx(); mark("cuda ctx")
    th.join(); mark("dynamo joined")
from probes.expr import parse_chain
from probes.memory_guard import check_memory
check_memory(parse_chain("(a + b).relu()"), 8, "fp32", dev); mark("meta check")
from probes.protocol import ProfileRequest
from probes.sweep import run_profile
events = []
run_profile(ProfileRequest(id="1", chain="(a + b).relu()", modes=["eager"]), events.append); mark("first eager request")
run_profile(ProfileRequest(id="2", chain="(a * b).sigmoid()", modes=["eager"]), events.append); mark("second eager request")
if len(sys.argv) > 2:
    import cProfile, pstats
    chains = ["(a - b).tanh()", "(a * 2.5).exp()", "torch.maximum(a, b) + 1", "(a / (b + 1)).abs()", "a.sin() * b.cos()", "(a + b * 3).relu()"]
    times = []
    pr = cProfile.Profile()
    for i, c in enumerate(chains):
        s = time.perf_counter()
        pr.enable()
        run_profile(ProfileRequest(id=f"p{i}", chain=c, modes=["eager"]), events.append)
        pr.disable()
        times.append(round((time.perf_counter() - s) * 1e3, 1))
    print("new eager requests ms:", times, flush=True)
    pstats.Stats(pr).sort_stats("cumulative").print_stats(45)
