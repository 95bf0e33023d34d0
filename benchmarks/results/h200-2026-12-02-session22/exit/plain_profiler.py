import time; t = time.perf_counter()
import torch
from torch.autograd.profiler import profile
f = torch.compile(lambda a: (a + 1).tanh())
x = torch.randn(64)
f(x)
with profile(use_device=None, use_kineto=True) as p:
    f(x)
print("done", round(time.perf_counter() - t, 1), "cuda initialized", torch.cuda.is_initialized(), len(p.function_events), flush=True)
