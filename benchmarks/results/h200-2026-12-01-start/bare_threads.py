"""Bare torch.compile + first call of 10 new chains in a warm process (arg: label); prints median."""
import os, sys, time, tempfile, statistics
os.environ["TORCHINDUCTOR_CACHE_DIR"] = tempfile.mkdtemp(prefix="kt-bt-")
os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="kt-bt-triton-")
import torch
dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
N = 10**6 if dev.type == "cuda" else 10**4
a = torch.randn(N, device=dev); b = torch.randn(N, device=dev)
OPS = ["tanh", "sigmoid", "exp", "sin", "cos", "neg", "sqrt", "abs", "log1p", "expm1"]
def bare(src):
    fn = eval(f"lambda a, b: {src}")
    torch.cuda.synchronize() if dev.type == "cuda" else None
    t = time.perf_counter()
    torch.compile(fn)(a, b)
    torch.cuda.synchronize() if dev.type == "cuda" else None
    return time.perf_counter() - t
first = bare("(a - b).relu()")
v = [bare(f"(a * b).{op}()") for op in OPS]
print(sys.argv[1], "threads", os.environ.get("TORCHINDUCTOR_COMPILE_THREADS", "default"), "first", round(first*1e3), "each", [round(x*1e3) for x in v], "median", round(statistics.median(v)*1e3))
