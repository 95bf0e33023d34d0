import os, time; t = time.perf_counter()
import torch
from torch.autograd.profiler import profile
x = torch.randn(64)
with profile(use_device=None, use_kineto=True) as p:
    (x + 1).tanh()
print("done", round(time.perf_counter() - t, 1), "TEARDOWN_CUPTI", os.environ.get("TEARDOWN_CUPTI"), "cuda initialized", torch.cuda.is_initialized(), len(p.function_events), flush=True)
