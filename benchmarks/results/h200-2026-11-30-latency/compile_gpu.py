"""Where _compile's time goes beyond compile + first call, on the device."""
import os, sys, time, random, json
sys.path.insert(0, os.getcwd())
import torch
import probes.compiling as compiling
import probes.compiled as inductor
from probes.expr import parse_chain
from probes.diagnostics import capturing
from probes.inputs import input_specs, make_inputs
acc = {}
def wrap(mod, name):
    fn = getattr(mod, name)
    def w(*a, **k):
        t = time.perf_counter()
        try: return fn(*a, **k)
        finally: acc[name] = acc.get(name, 0) + time.perf_counter() - t
    setattr(mod, name, w)
for name in ("wrapper_modules_since", "generated_kernels", "launch_config", "loaded_module_count"):
    wrap(inductor, name)
for name in ("_counted_since", "cache_entries", "_dynamo_counters", "_fallback_reason"):
    wrap(compiling, name)
dev = torch.device(sys.argv[1]); n = 10**6
C = random.uniform(1, 2)
for op in ["relu", "tanh", "sin", "cos", "exp"]:
    chain = parse_chain(f"((a + b) * {C:.5f}).{op}()")
    inputs = make_inputs(input_specs(chain, n, "fp32"), dev, n)
    acc.clear()
    with capturing() as d:
        t = time.perf_counter()
        c = compiling._compile(chain, "compiled", inputs, n, dev, d, None)
    print(json.dumps({"op": op, "total": round(time.perf_counter() - t, 3), "compile_time_s": round(c.info.compile_time_s, 3), **{k: round(v, 3) for k, v in acc.items()}}), flush=True)
