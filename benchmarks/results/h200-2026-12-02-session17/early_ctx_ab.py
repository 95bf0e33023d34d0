"""A worker's start with the CUDA driver's context made through libcuda on a thread beside
`import torch` (early) against as now, in fresh processes, in turns. Each child prints
import torch, the rest of the start (_initialise_device), and the context's own time."""
import json, os, subprocess, sys, statistics

CHILD = r'''
import os, sys, time, threading, json
t0 = time.perf_counter()
ctx_s = [None]
if os.environ.get("EARLY") == "1":
    import ctypes
    os.environ.setdefault("CUDA_MODULE_LOADING", "LAZY")
    def early():
        t = time.perf_counter()
        lib = ctypes.CDLL("libcuda.so.1")
        lib.cuInit(0)
        dev = ctypes.c_int(); lib.cuDeviceGet(ctypes.byref(dev), 0)
        ctx = ctypes.c_void_p(); lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev)
        ctx_s[0] = time.perf_counter() - t
    th = threading.Thread(target=early, daemon=True); th.start()
import torch
t1 = time.perf_counter()
sys.path.insert(0, os.getcwd())
from probes.worker import _initialise_device
if os.environ.get("PART") == "ctx":
    torch.ones(1, device="cuda").add_(1); torch.cuda.synchronize()
else:
    _initialise_device()
t2 = time.perf_counter()
print(json.dumps({"import": t1 - t0, "rest": t2 - t1, "total": t2 - t0, "early_ctx": ctx_s[0]}))
'''
rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 6
variants = {"now": {}, "early": {"EARLY": "1"}, "ctx-only": {"PART": "ctx"}, "early ctx-only": {"EARLY": "1", "PART": "ctx"}}
got = {k: [] for k in variants}
for r in range(rounds):
    names = list(variants)
    names = names[r % 4:] + names[:r % 4]
    for name in names:
        out = subprocess.run([sys.executable, "-c", CHILD], env={**os.environ, **variants[name]}, capture_output=True, text=True)
        line = out.stdout.strip().splitlines()[-1] if out.stdout.strip() else out.stderr[-300:]
        try:
            d = json.loads(line)
        except ValueError:
            print(name, "failed:", line); continue
        got[name].append(d)
        print(f"{name:15} import {d['import']*1e3:6.0f}  rest {d['rest']*1e3:6.0f}  total {d['total']*1e3:6.0f}  early ctx {d['early_ctx'] and round(d['early_ctx']*1e3)}", flush=True)
for name, ds in got.items():
    if ds:
        print(f"{name:15} median import {statistics.median(d['import'] for d in ds)*1e3:6.0f}  rest {statistics.median(d['rest'] for d in ds)*1e3:6.0f}  total {statistics.median(d['total'] for d in ds)*1e3:6.0f}")
