"""Device context made in a thread while the main thread warms the memory guard (sympy etc.)?"""
import os, sys, time, threading
T0 = time.perf_counter()
sys.path.insert(0, os.getcwd())  # run from the repository root
import torch
t_import = time.perf_counter() - T0
from probes.dynamo_deferral import defer_dynamo_import
from probes.expr import parse_chain
from probes.memory_guard import check_memory
defer_dynamo_import()
def ctx():
    torch.ones(1, device="cuda").add_(1); torch.cuda.synchronize()
threaded = sys.argv[1] == "thread"
if threaded:
    th = threading.Thread(target=ctx); th.start()
else:
    ctx()
check_memory(parse_chain("(a + b).relu()"), 8, "fp32", torch.device("meta") if threaded else torch.device("cuda"))
if threaded:
    th.join()
    check_memory(parse_chain("(a + b).relu()"), 8, "fp32", torch.device("cuda"))
print(f"{sys.argv[1]:7} import {t_import*1e3:.0f} ms, after import -> ready {1e3*(time.perf_counter()-T0-t_import):.0f} ms")
