import time; t = time.perf_counter()
import torch, probes.sweep
from probes.protocol import ProfileRequest
probes.sweep.run_profile(ProfileRequest("t", "(a + 1).tanh()", sizes=[64], modes=["compiled"], device="cpu"), lambda e: None)
print("done", round(time.perf_counter() - t, 1), "cuda initialized", torch.cuda.is_initialized(), flush=True)
