import faulthandler, sys, threading, time, os
t = time.perf_counter()
import torch
import probes.sweep
from probes.protocol import ProfileRequest
print("imported", round(time.perf_counter() - t, 1), "cuda initialized", torch.cuda.is_initialized(), flush=True)
probes.sweep.run_profile(ProfileRequest("t", sys.argv[1], sizes=[64], modes=["compiled"], device="cpu", reps=2), lambda e: print(type(e).__name__, round(time.perf_counter() - t, 1), flush=True))
print("done", round(time.perf_counter() - t, 1), "cuda initialized", torch.cuda.is_initialized(), flush=True)
for th in threading.enumerate():
    print("thread", th.name, "daemon" if th.daemon else "NON-DAEMON", flush=True)
faulthandler.dump_traceback_later(5, repeat=True)
