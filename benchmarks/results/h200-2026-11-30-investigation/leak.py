"""What makes plain calls slower in a process that has run the engine? python lab/leak.py VARIANT"""
import json, os, statistics, sys, time
import torch

DEV = torch.device("cuda:0")
a, b, c = (torch.randn(100, device=DEV) for _ in range(3))
plain = lambda: (a * b + c).tanh()


def probe(tag):
    for _ in range(50):
        plain()
    torch.cuda.synchronize()
    per = []
    for _ in range(20):
        t = time.perf_counter()
        for _ in range(100):
            plain()
        per.append((time.perf_counter() - t) / 100 * 1e6)
        torch.cuda.synchronize()
    print(json.dumps({"variant": sys.argv[1], "tag": tag, "host_us": round(statistics.median(per), 2),
                      "cb": torch.autograd.profiler._is_profiler_enabled}), flush=True)


def engine(n_runs, mode="eager"):
    from probes.expr import parse_chain
    from probes.measure import measure
    chain = parse_chain("(a * b + c).tanh()")
    done = 0
    for target in n_runs:
        while done < target:
            measure(chain, mode, 100, DEV, "fp32", [a, b, c])
            done += 1
        probe(f"after {done} engine {mode} measures")


def bare_profiler(n_runs):
    from torch.profiler import ProfilerActivity, profile
    done = 0
    for target in n_runs:
        while done < target:
            with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]):
                for _ in range(10):
                    plain()
                torch.cuda.synchronize()
            done += 1
        probe(f"after {done} bare profiler sessions")


def cpu_profiler(n_runs):
    from torch.profiler import ProfilerActivity, profile
    done = 0
    for target in n_runs:
        while done < target:
            with profile(activities=[ProfilerActivity.CPU]):
                for _ in range(10):
                    plain()
                torch.cuda.synchronize()
            done += 1
        probe(f"after {done} CPU-only profiler sessions")


def compiles(n_runs):
    done = 0
    for target in n_runs:
        while done < target:
            f = torch.compile(eval(f"lambda x: (x * {done + 2}.5).tanh()"))
            f(a)
            done += 1
        probe(f"after {done} compiles")


probe("fresh")
v = sys.argv[1]
steps = [1, 5, 20, 40]
if v.startswith("engine"):
    engine(steps)
elif v == "bare":
    bare_profiler(steps)
elif v == "cpuprof":
    cpu_profiler(steps)
elif v == "compiles":
    compiles([1, 5, 20])
