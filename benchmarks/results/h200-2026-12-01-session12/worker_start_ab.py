"""A worker's start on this tree against another's (argv[1], a folder holding its probes/), in
turns: launch -> WorkerReady, -> first eager rows (one ProfileRequest), and a WarmupRequest (the
compiler's import and a tiny compile) -> its RequestDone. Each launch a fresh process."""
import os, statistics, subprocess, sys, time
sys.path.insert(0, os.getcwd())
from probes.bytecode_cache import FILL_ENV, with_bytecode_cache
from probes.protocol import ProfileRequest, WarmupRequest, decode, encode

OTHER = sys.argv[1]
TURNS = int(sys.argv[2]) if len(sys.argv) > 2 else 5
N = 10**6 if os.path.exists("/dev/nvidiactl") else 10**4


def one(tree: str) -> tuple[float, float, float]:
    env = with_bytecode_cache(dict(os.environ))
    env = dict(env, PYTHONPATH=os.pathsep.join([tree] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    begin = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "probes.worker"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True, env=env, cwd=tree)
    def until(kind: str) -> float:
        for line in proc.stdout:
            if type(decode(line)).__name__ == kind:
                return time.monotonic() - begin
        raise RuntimeError(f"worker ended before {kind}")
    ready = until("WorkerReady")
    proc.stdin.write(encode(ProfileRequest("r1", "(a + b).relu()", sizes=[N], modes=["eager"])) + "\n"); proc.stdin.flush()
    rows = until("MeasurementResult")
    until("RequestDone")
    sent = time.monotonic() - begin
    proc.stdin.write(encode(WarmupRequest("w1")) + "\n"); proc.stdin.flush()
    warm = until("RequestDone") - sent
    proc.kill(); proc.wait()
    return ready, rows, warm


begin = time.monotonic()
if FILL_ENV in with_bytecode_cache(dict(os.environ)):  # as the app's first launch: fill torch's bytecode cache first
    print("filling the bytecode cache:", one(os.getcwd()))
    while FILL_ENV in with_bytecode_cache(dict(os.environ)) and time.monotonic() - begin < 90:
        time.sleep(0.5)
    print(f"filled: {FILL_ENV not in with_bytecode_cache(dict(os.environ))} after {time.monotonic() - begin:.0f} s")
results = {"this": [], "other": []}
here = os.getcwd()
for turn in range(TURNS):
    for name, tree in (("this", here), ("other", OTHER)) if turn % 2 == 0 else (("other", OTHER), ("this", here)):
        results[name].append(one(tree))
        r = results[name][-1]
        print(f"turn {turn} {name:5s} ready {r[0]*1e3:6.0f} ms  first eager rows {r[1]*1e3:6.0f} ms  warm-up {r[2]*1e3:6.0f} ms", flush=True)
for name, runs in results.items():
    runs = runs[1:] if len(runs) > 2 else runs  # a fresh box's first start fills its caches
    med = [statistics.median(r[i] for r in runs) * 1e3 for i in range(3)]
    print(f"{name:5s} median (first turn left out): ready {med[0]:.0f} ms, first eager rows {med[1]:.0f} ms, warm-up {med[2]:.0f} ms")
