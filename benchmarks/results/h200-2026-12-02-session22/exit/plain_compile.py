import time; t = time.perf_counter()
import torch
f = torch.compile(lambda a: (a + 1).tanh())
f(torch.randn(64))
print("done", round(time.perf_counter() - t, 1), "cuda initialized", torch.cuda.is_initialized(), flush=True)
