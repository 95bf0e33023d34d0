"""Does a compiled call's host time grow as a process compiles other chains (A) or runs profiler
sessions (B)? One fresh process per variant; the same compiled call timed fresh and after.

    python lab/s24/drift.py compiles|profiles|none [cpu|cuda] [K]
"""
import os, sys, tempfile, statistics
os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", tempfile.mkdtemp(prefix="kt-drift-"))
os.environ.setdefault("TRITON_CACHE_DIR", tempfile.mkdtemp(prefix="kt-drift-tr-"))
os.environ.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")
import torch
from torch.utils.benchmark import Timer

variant = sys.argv[1]
device = sys.argv[2] if len(sys.argv) > 2 else "cpu"
K = int(sys.argv[3]) if len(sys.argv) > 3 else 20
a = torch.randn(100, device=device); b = torch.randn(100, device=device)

def probe_fn(x, y):
    return (x + y).relu()

probe = torch.compile(probe_fn)
probe(a, b); probe(a, b)

def per_call_us():
    sync = "torch.cuda.synchronize()" if device == "cuda" else ""
    runs = [Timer(f"probe(a, b); {sync}", globals={"probe": probe, "a": a, "b": b, "torch": torch}).blocked_autorange(min_run_time=0.3).median * 1e6 for _ in range(5)]
    return statistics.median(runs)

fresh = per_call_us()
OPS = ["tanh", "sigmoid", "exp", "sin", "cos", "neg", "sqrt", "abs", "log1p", "expm1", "erf", "reciprocal",
       "log", "sinh", "cosh", "atan", "log2", "exp2", "floor", "ceil", "trunc", "rsqrt", "asin", "acos"]
for i in range(K):
    if variant == "compiles":
        op = OPS[i % len(OPS)]
        src = f"def chain_{i}(x, y):\n    return (x * y + {i}).{op}()\n"
        ns = {}
        exec(src, ns)
        torch.compile(ns[f"chain_{i}"])(a, b)
    elif variant == "profiles":
        with torch.profiler.profile() as prof:
            for _ in range(20):
                probe(a, b)
        prof.key_averages()
after = per_call_us()
again_fresh_ref = per_call_us()
print(f"{variant} {device} K={K}: fresh {fresh:.2f} us, after {after:.2f} us ({after / fresh:.3f}x), again {again_fresh_ref:.2f} us", flush=True)
