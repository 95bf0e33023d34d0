"""Which part of the tool's compile makes it slower than a bare one (fresh chains, interleaved)."""
import os, sys, time, random, json, statistics
sys.path.insert(0, os.getcwd())
import torch
import probes.compiling as compiling
from probes.expr import parse_chain
from probes.diagnostics import capturing
from probes.inputs import input_specs, make_inputs
dev = torch.device(sys.argv[1] if len(sys.argv) > 1 else "cuda"); n = 10**6
C = random.uniform(1, 2); k = [0]
ops = ["tanh", "sin", "cos", "exp", "neg", "sqrt", "abs", "sigmoid", "erf", "log1p", "expm1", "exp2", "rsqrt", "sinh", "cosh", "atan", "asinh", "trunc", "frac", "ceil", "floor", "round"]
def fresh():
    k[0] += 1
    return f"((a + b) * {C + k[0]:.5f}).{ops[k[0] % len(ops)]}()"
chain0 = parse_chain("(a + b).relu()")
inputs = make_inputs(input_specs(chain0, n, "fp32"), dev, n)
def sync(): torch.cuda.synchronize() if dev.type == "cuda" else None
def timed(f):
    t = time.perf_counter(); f(); sync(); return time.perf_counter() - t
def bare():
    ns = {"torch": torch}; exec(f"def f(a, b):\n    return {fresh()}", ns)
    return timed(lambda: torch.compile(ns["f"], dynamic=False)(*inputs))
def framed():
    fn = parse_chain(fresh()).build_function(compiling.CHAIN_NAMESPACE)
    frame = compiling.own_frame(fn)
    return timed(lambda: torch.compile(frame, dynamic=False)(*inputs, N=n))
def captured():
    with capturing():
        return bare()
def settings():
    with compiling.tool_compile_settings("compiled", dev):
        return bare()
def tool():
    with capturing() as d:
        c = compiling._compile(parse_chain(fresh()), "compiled", inputs, n, dev, d, None)
    return c.info.compile_time_s
kinds = {"bare": bare, "framed": framed, "captured": captured, "settings": settings, "tool": tool}
tool(); bare()
res = {name: [] for name in kinds}
for r in range(int(sys.argv[2]) if len(sys.argv) > 2 else 4):
    for name, f in kinds.items():
        res[name].append(round(f(), 3))
print(json.dumps({"device": str(dev), **{k: {"median": statistics.median(v), "all": v} for k, v in res.items()}}), flush=True)
