import faulthandler, sys, time
faulthandler.dump_traceback_later(float(sys.argv[1]), exit=True)
t = time.perf_counter()
import logging, warnings
import torch, torch._inductor.config as config
import probes.measure, probes.sweep
from probes.protocol import ProfileRequest
print("imported", round(time.perf_counter() - t, 1), flush=True)
probes.sweep.run_profile(ProfileRequest("t", "F.softmax(a) + 1", sizes=[64], modes=["compiled"], device="cpu", reps=2), lambda e: print(type(e).__name__, round(time.perf_counter() - t, 1), flush=True))
print("done", round(time.perf_counter() - t, 1), flush=True)
