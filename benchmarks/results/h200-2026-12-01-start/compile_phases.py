"""Where a new chain's compiled rows go, in a warm process: the worker's run_profile for
'compiled' with each phase timed, beside a bare torch.compile + first call of a sibling chain."""
import os, sys, time, tempfile, statistics, json
os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", tempfile.mkdtemp(prefix="kt-phase-"))
sys.path.insert(0, os.getcwd())  # run from the repository root
import torch
from probes import measure as M, compiling as C, timing as T, sweep as S, memory_guard as G, bytes_moved as B
from probes.protocol import ProfileRequest, MeasurementResult

device = S.resolve_device(None)
N = int(sys.argv[1]) if len(sys.argv) > 1 else (10**6 if device.type == "cuda" else 10**4)
OPS = ["tanh", "sigmoid", "exp", "sin", "cos", "neg", "sqrt", "abs", "log1p", "expm1"]
times = {}
def wrap(mod, name, label):
    orig = getattr(mod, name)
    def w(*a, **k):
        t = time.perf_counter()
        try:
            return orig(*a, **k)
        finally:
            times.setdefault(label, []).append(time.perf_counter() - t)
    setattr(mod, name, w)
wrap(S, "check_memory", "guard")
wrap(M, "prepare", "prepare(compile+4 calls)")
wrap(C, "_compile", "_compile")
wrap(M, "choose_reps", "choose_reps")
wrap(M, "compiled_bytes", "compiled_bytes")
wrap(M, "recording_ops", "recording_ops")
wrap(M, "profile_run", "profile_run")
wrap(M, "measure_wall_time", "wall")
wrap(M, "_flops", "flops")
wrap(C.inductor, "generated_kernels", "generated_kernels")
wrap(C.inductor, "launch_config", "launch_config")

def run(chain):
    got = []
    t = time.perf_counter()
    S.run_profile(ProfileRequest("x", chain, sizes=[N], modes=["compiled"]), got.append)
    total = time.perf_counter() - t
    m = [e for e in got if isinstance(e, MeasurementResult)]
    return total, (m[0].measurement.compile.compile_time_s if m else None)

def bare(chain):
    a = torch.randn(N, device=device); b = torch.randn(N, device=device)
    fn = eval(f"lambda a, b: {chain}")
    if device.type == "cuda": torch.cuda.synchronize()
    t = time.perf_counter()
    torch.compile(fn)(a, b)
    if device.type == "cuda": torch.cuda.synchronize()
    return time.perf_counter() - t

run("(a + b).relu()"); bare("(a - b).relu()")
times.clear()
rows = []
for op in OPS:
    total, ct = run(f"(a + b).{op}()")
    b = bare(f"(a * b).{op}()")
    rows.append((op, total, ct, b))
    print(f"{op:6} tool {total*1e3:6.0f} ms (compile_time_s {ct*1e3:5.0f})  bare {b*1e3:6.0f} ms  ratio {total/b:.2f}", flush=True)
print("median tool", statistics.median(r[1] for r in rows)*1e3, "bare", statistics.median(r[3] for r in rows)*1e3)
for k, v in times.items():
    print(f"  {k:28} median {statistics.median(v)*1e3:7.1f} ms  n={len(v)}")
