import os, sys, time, random, json
sys.path.insert(0, os.getcwd())
import torch
import probes.compiling as compiling
from probes.expr import parse_chain
from probes.diagnostics import capturing
from probes.inputs import input_specs, make_inputs
dev = torch.device(sys.argv[1]); n = int(float(sys.argv[2]))
C = random.uniform(1, 2)
ops = ["tanh", "sin", "cos", "exp", "neg", "sqrt", "abs", "sigmoid", "erf", "log1p"]
chain0 = parse_chain("(a + b).relu()")
inputs = make_inputs(input_specs(chain0, n, "fp32"), dev, n)
with capturing() as d:
    compiling._compile(chain0, "compiled", inputs, n, dev, d, None)
def sync():
    if dev.type == "cuda": torch.cuda.synchronize()
for i, op in enumerate(ops):
    text = f"((a + b) * {C + i:.5f}).{op}()"
    t = time.perf_counter()
    if i % 2 == 0:
        chain = parse_chain(text)
        with capturing() as d:
            c = compiling._compile(chain, "compiled", inputs, n, dev, d, None)
        kind = "tool"
    else:
        ns = {"torch": torch}
        exec(f"def f(a, b):\n    return {text}", ns)
        torch.compile(ns["f"], dynamic=False)(*inputs); sync()
        kind = "bare"
    print(json.dumps({"kind": kind, "op": op, "s": round(time.perf_counter() - t, 3)}), flush=True)
