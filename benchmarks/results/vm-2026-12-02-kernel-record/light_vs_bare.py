"""A kernel built with the light range runs as a user's own: the tool's compiled CPU measurement
against a bare compile timed by torch.utils.benchmark, same chain, same size."""
import torch, torch.utils.benchmark as tb
from probes.expr import parse_chain
from probes.measure import measure
from probes.inputs import input_specs, make_inputs
dev = torch.device("cpu"); n = 10**6
for src in ["(a + b).tanh()", "(a * b).sin() * 3", "(a - b).relu()"]:
    chain = parse_chain(src)
    inputs = make_inputs(input_specs(chain, n, "fp32"), dev, n)
    m = measure(chain, "compiled", n, dev, "fp32", inputs)
    fn = torch.compile(eval("lambda a, b: " + src))
    fn(*inputs)
    t = tb.Timer("fn(a, b)", globals={"fn": fn, "a": inputs[0], "b": inputs[1]}, num_threads=torch.get_num_threads()).blocked_autorange(min_run_time=1.0)
    print(f"{src:22s} tool: device {m.device_time_us:7.1f} µs wall {m.wall_time_us:7.1f} µs | bare compile, Timer: {t.median*1e6:7.1f} µs")
