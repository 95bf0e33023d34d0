"""How much of a warm process's compile is the garbage collector's: bare torch.compile + first call
of new chains, GC pauses summed per compile (gc.callbacks); with argv[1]=='freeze', gc.freeze()
after the first compile (everything alive then is never scanned again)."""
import gc, os, sys, time, tempfile, statistics
os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", tempfile.mkdtemp(prefix="kt-gc-"))
os.environ.setdefault("TRITON_CACHE_DIR", tempfile.mkdtemp(prefix="kt-gct-"))
os.environ.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")
import torch
freeze = len(sys.argv) > 1 and sys.argv[1] == "freeze"
salt = sys.argv[2] if len(sys.argv) > 2 else "1"
pause_s = float(sys.argv[3]) if len(sys.argv) > 3 else 0.0
dev = "cuda" if torch.cuda.is_available() else "cpu"
N = 10**6 if dev == "cuda" else 10**4
a = torch.randn(N, device=dev); b = torch.randn(N, device=dev)
pauses = {0: [0.0, 0], 1: [0.0, 0], 2: [0.0, 0]}
start = [0.0]
def cb(phase, info):
    if phase == "start":
        start[0] = time.perf_counter()
    else:
        p = pauses[info["generation"]]
        p[0] += time.perf_counter() - start[0]; p[1] += 1
gc.callbacks.append(cb)
def compile_once(src):
    fn = eval(f"lambda a, b: {src}")
    t = time.perf_counter()
    torch.compile(fn)(a, b)
    if dev == "cuda":
        torch.cuda.synchronize()
    return time.perf_counter() - t
compile_once(f"(a - b).relu() * {salt}")
if freeze:
    gc.freeze()
OPS = ["tanh", "sigmoid", "exp", "sin", "cos", "neg", "sqrt", "abs", "log1p", "expm1"]
rows = []
for op in OPS:
    time.sleep(pause_s)  # a user's typing between compiles: the process idles
    for p in pauses.values():
        p[0], p[1] = 0.0, 0
    s = compile_once(f"(a * b).{op}() * {salt}")
    rows.append((s, {g: (round(p[0] * 1e3, 1), p[1]) for g, p in pauses.items()}))
print(f"freeze={freeze} pause_s={pause_s} objects={len(gc.get_objects())} frozen={gc.get_freeze_count()}")
for (s, g), op in zip(rows, OPS):
    print(f"  {op:8s} {s*1e3:7.1f} ms  gc ms/count by gen {g}")
print(f"  median {statistics.median(r[0] for r in rows)*1e3:.1f} ms; gc total median "
      f"{statistics.median(sum(v[0] for v in r[1].values()) for r in rows):.1f} ms")
