"""A new chain's compile + first call with Inductor's compile pool (TORCHINDUCTOR_COMPILE_THREADS=N, torch's
default on this machine) and without it (=1, the app's workers' setting), bare and through the tool's
_compile, in two warm processes, chain by chain in turns, every chain new to each process's own caches.

    python lab/threads_ab.py [--ops 20] [--threads N]
"""
import argparse, json, os, statistics, subprocess, sys, tempfile, time

OPS = ("tanh", "sigmoid", "exp", "sin", "cos", "neg", "sqrt", "abs", "log1p", "expm1",
       "log", "reciprocal", "sinh", "cosh", "atan", "log2", "exp2", "floor", "ceil", "trunc")

def child():
    sys.path.insert(0, os.getcwd())
    import torch
    from probes.compiling import _compile
    from probes.diagnostics import Diagnostics, capturing
    from probes.expr import parse_chain
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    a, b = torch.randn(1_000_000, device=device), torch.randn(1_000_000, device=device)
    def sync():
        if device.type == "cuda": torch.cuda.synchronize(device)
    def bare(text):
        fn = eval(f"lambda a, b: {text}"); sync(); t = time.perf_counter()
        torch.compile(fn)(a, b); sync(); return time.perf_counter() - t
    def tool(text):
        chain = parse_chain(text); sync(); t = time.perf_counter(); d = Diagnostics()
        with capturing(d):
            _compile(chain, "compiled", [a, b], a.numel(), device, d, None)
        return time.perf_counter() - t
    ways = {"bare": bare, "tool": tool}
    bare("(a / b).erf()"); tool("(a / b).erfc()"); bare("(a - b).relu()"); tool("(a - b).square()")
    import torch._inductor.config as c
    print(json.dumps({"ready": True, "compile_threads": c.compile_threads}), flush=True)
    for line in sys.stdin:
        way, text = line.strip().split(" ", 1)
        print(json.dumps({"s": ways[way](text)}), flush=True)

def main():
    p = argparse.ArgumentParser(); p.add_argument("--ops", type=int, default=20); p.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)))
    p.add_argument("--child", action="store_true"); args = p.parse_args()
    if args.child:
        return child()
    procs = {}
    for label, threads in (("pool", args.threads), ("one", 1)):
        env = dict(os.environ, TORCHINDUCTOR_COMPILE_THREADS=str(threads), TORCHINDUCTOR_CACHE_DIR=tempfile.mkdtemp(), TRITON_CACHE_DIR=tempfile.mkdtemp())
        procs[label] = subprocess.Popen([sys.executable, __file__, "--child"], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    for label, proc in procs.items():
        print(label, proc.stdout.readline().strip(), flush=True)
    got = {(l, w): [] for l in procs for w in ("bare", "tool")}
    for i, op in enumerate(OPS[: args.ops]):
        order = [("pool", "bare"), ("one", "bare"), ("pool", "tool"), ("one", "tool")]
        if i % 2: order = [order[1], order[0], order[3], order[2]]
        if i % 4 >= 2: order = order[2:] + order[:2]
        line = []
        for label, way in order:
            text = ("(a + b).{op}()" if way == "bare" else "(a * b).{op}()").format(op=op)
            procs[label].stdin.write(f"{way} {text}\n"); procs[label].stdin.flush()
            s = json.loads(procs[label].stdout.readline())["s"]
            got[(label, way)].append(s); line.append(f"{label}/{way} {1e3*s:6.1f}")
        print(f"{op:11s}", " | ".join(line), flush=True)
    for proc in procs.values():
        proc.stdin.close(); proc.wait(timeout=60)
    for (label, way), v in got.items():
        q = statistics.quantiles(v, n=4)
        print(f"{label}/{way}: median {1e3*statistics.median(v):.1f} ms (p25-p75 {1e3*q[0]:.1f}-{1e3*q[2]:.1f}) n={len(v)}")
    for way in ("bare", "tool"):
        r = [p / o for p, o in zip(got[("pool", way)], got[("one", way)])]
        q = statistics.quantiles(r, n=4)
        print(f"{way}: pool over one, chain by chain: median {statistics.median(r):.3f}x (p25-p75 {q[0]:.3f}-{q[2]:.3f})")

main()
