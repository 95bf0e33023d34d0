"""A fresh worker's start, step by step (what the app waits for before the first eager rows)."""
import json, os, sys, time
t0 = time.monotonic()
marks = {}
def mark(name): marks[name] = round(time.monotonic() - t0, 3)
sys.path.insert(0, os.getcwd())
import torch
mark("import torch")
dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
torch.ones(1, device=dev).add_(1)
if dev.type == "cuda":
    torch.cuda.synchronize(dev)
mark("device context")
from probes.expr import parse_chain
from probes.memory_guard import check_memory
from probes.sweep import default_device, list_devices
mark("import probes")
check_memory(parse_chain("(a + b).relu()"), 8, "fp32", dev)
mark("first meta run")
list_devices(measure_peak=False)
mark("list devices")
import torch.profiler
mark("import profiler")
print(json.dumps(marks), flush=True)
