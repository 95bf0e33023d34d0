"""Can a profiler session be prepared ahead (CUPTI set up while the worker idles) and started later,
with nothing from before its start in its events, and what does a prepared-but-idle CUPTI cost launches?"""
import os, time, statistics, json, sys
os.environ.setdefault("TEARDOWN_CUPTI", "1")
import torch
from torch.autograd.profiler import profile, record_function

dev = torch.device("cuda")
a = torch.randn(1_000_000, device=dev); b = torch.randn(1_000_000, device=dev)
f = lambda: (a + b).relu()
print("torch", torch.__version__, "has _prepare_trace", hasattr(profile, "_prepare_trace"), flush=True)

def kernels(prof):
    ev = prof.function_events
    cuda = [e for e in ev if e.device_type == torch.autograd.DeviceType.CUDA and not e.name.startswith("kernel_tui")]
    reps = sorted((e for e in ev if e.name == "rep" and e.device_type == torch.autograd.DeviceType.CPU), key=lambda e: e.time_range.start)
    first = reps[0].time_range.start if reps else 0
    runtime = [e for e in ev if e.device_type == torch.autograd.DeviceType.CPU and e.name.startswith("cuda")]
    return len(cuda), sum(1 for e in cuda if e.time_range.start < first), len(runtime), len(ev)

def body(fn, reps=10):
    for _ in range(reps):
        with record_function("rep"):
            fn()
    torch.cuda.synchronize()

def stats(p):
    s = p._stats
    return {k: round(getattr(s, f, 0) / 1000, 1) for k, f in (("prepare", "profiler_prepare_call_duration_us"), ("enable", "profiler_enable_call_duration_us"), ("disable", "profiler_disable_call_duration_us"), ("parse", "parse_kineto_call_duration_us"))}

for _ in range(20): f()
torch.cuda.synchronize()
print("== normal sessions")
for i in range(6):
    t0 = time.perf_counter()
    with profile(use_device="cuda", use_kineto=True) as p:
        t1 = time.perf_counter()
        body(f)
        t2 = time.perf_counter()
    t3 = time.perf_counter()
    k = kernels(p)
    t4 = time.perf_counter()
    print(f"enter {1000*(t1-t0):.1f} body {1000*(t2-t1):.1f} exit {1000*(t3-t2):.1f} events {1000*(t4-t3):.1f} ms; kernels/before/runtime/events {k} {stats(p)}", flush=True)
    time.sleep(0.2)

print("== standby sessions: prepared, 300 calls and 0.3 s idle, then started")
for i in range(6):
    p = profile(use_device="cuda", use_kineto=True)
    t0 = time.perf_counter(); p._prepare_trace(); t1 = time.perf_counter()
    for _ in range(300): f()
    torch.cuda.synchronize()
    time.sleep(0.3)
    t2 = time.perf_counter(); p._start_trace(); t3 = time.perf_counter()
    body(f)
    t4 = time.perf_counter()
    p.__exit__(None, None, None)
    t5 = time.perf_counter()
    k = kernels(p)
    print(f"prepare {1000*(t1-t0):.1f} start {1000*(t3-t2):.1f} body {1000*(t4-t3):.1f} exit {1000*(t5-t4):.1f}; kernels/before/runtime/events {k} {stats(p)}", flush=True)

def loop_us(n=3000):
    torch.cuda.synchronize(); t = time.perf_counter()
    for _ in range(n): f()
    torch.cuda.synchronize(); return (time.perf_counter() - t) / n * 1e6

def launch_us(n=3000):
    c = torch.empty(1, device=dev)
    torch.cuda.synchronize(); t = time.perf_counter()
    for _ in range(n): c.add_(1)
    el = time.perf_counter() - t
    torch.cuda.synchronize(); return el / n * 1e6

print("== launch cost: clean / prepared idle / after its session")
for rnd in range(3):
    clean = (loop_us(), launch_us())
    p = profile(use_device="cuda", use_kineto=True); p._prepare_trace()
    prepared = (loop_us(), launch_us())
    p._start_trace(); body(f); p.__exit__(None, None, None); kernels(p)
    after = (loop_us(), launch_us())
    print(f"loop of (a+b).relu() us/call, add_ launch us: clean {clean[0]:.2f}/{clean[1]:.2f} prepared {prepared[0]:.2f}/{prepared[1]:.2f} after {after[0]:.2f}/{after[1]:.2f}", flush=True)

print("== a compile while prepared")
for i in range(4):
    c = float(i + 2.5)
    g = torch.compile(lambda x, y: (x * y).sigmoid() * c)
    p = profile(use_device="cuda", use_kineto=True); p._prepare_trace()
    t0 = time.perf_counter(); g(a, b); torch.cuda.synchronize(); t1 = time.perf_counter()
    p._start_trace(); body(lambda: g(a, b)); p.__exit__(None, None, None)
    k = kernels(p)
    g2 = torch.compile(lambda x, y: (x * y).cos() * c)
    t2 = time.perf_counter(); g2(a, b); torch.cuda.synchronize(); t3 = time.perf_counter()
    names = sorted({e.name for e in p.function_events if e.device_type == torch.autograd.DeviceType.CUDA})
    print(f"compile+first call while prepared {1000*(t1-t0):.0f} ms, not prepared {1000*(t3-t2):.0f} ms; kernels/before/runtime/events {k} {names}", flush=True)
sys.stdout.flush()
os._exit(0)  # a process that profiled can hang ~50 s in the interpreter's exit on that box
