"""The reading of one profiler session's events, old (a copy) against new, in turns: ms per reading."""
import importlib.util, os, statistics, sys, time
sys.path.insert(0, os.getcwd())
import torch
from torch.autograd.profiler import profile, record_function
from probes import profile_events as new
spec = importlib.util.spec_from_file_location("old_pe", sys.argv[1]); old = importlib.util.module_from_spec(spec); sys.modules["old_pe"] = old; spec.loader.exec_module(old)
dev = sys.argv[2] if len(sys.argv) > 2 else "cpu"
a = torch.randn(10000, device=dev); b = torch.randn(10000, device=dev)
with profile(use_device="cuda" if dev == "cuda" else None, use_kineto=True) as prof:
    for _ in range(20):
        with record_function("rep"):
            (a + b).tanh().sum()
    if dev == "cuda": torch.cuda.synchronize()
r = prof.kineto_results
def key(es): return [(e.name, e.start_us, e.end_us, e.thread, e.is_async, e.cpu_parent.name if e.cpu_parent else None) for e in es]
assert key(old.read_events(r)) == key(new.read_events(r)), "readings differ"
t = {"old": [], "new": []}
for i in range(200):
    for name, m in (("old", old), ("new", new)) if i % 2 else (("new", new), ("old", old)):
        s = time.perf_counter(); m.read_events(r); t[name].append((time.perf_counter() - s) * 1000)
print(len(list(r.events())), "events;", {k: round(statistics.median(v), 3) for k, v in t.items()}, "ms")
