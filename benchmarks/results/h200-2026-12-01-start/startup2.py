"""The worker's start as it now runs, step by step, then its first two eager requests."""
import os, sys, time
T0 = time.perf_counter()
sys.path.insert(0, os.getcwd())  # run from the repository root
out = []
def mark(label): out.append((label, time.perf_counter() - T0))
import torch
mark("import torch")
from probes.dynamo_deferral import defer_dynamo_import
from probes.expr import parse_chain
from probes.memory_guard import check_memory
from probes.sweep import default_device, run_profile
from probes.protocol import ProfileRequest
mark("import probes")
n = defer_dynamo_import()
mark(f"defer ({n})")
dev = torch.device(default_device())
torch.ones(1, device=dev).add_(1)
torch.cuda.synchronize() if dev.type == "cuda" else None
mark("device context")
check_memory(parse_chain("(a + b).relu()"), 8, "fp32", dev)
mark(f"guard warm (dynamo {'torch._dynamo' in sys.modules})")
for chain in ("(a + b).relu()", "(a + b).tanh()"):
    run_profile(ProfileRequest("r", chain, sizes=[10**6 if dev.type == "cuda" else 10**4], modes=["eager"]), lambda e: None)
    mark(f"eager {chain} (dynamo {'torch._dynamo' in sys.modules})")
prev = 0
for label, t in out:
    print(f"{t*1e3:7.0f} ms (+{(t-prev)*1e3:5.0f}) {label}"); prev = t
