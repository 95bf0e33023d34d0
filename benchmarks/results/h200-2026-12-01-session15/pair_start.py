"""Does the compile worker, started with the eager worker (as the app does on a GPU), slow the
eager worker's start? In turns: one worker alone, or two launched at once; launch -> WorkerReady and
-> first eager rows of the first one (and WorkerReady of the second). Each launch fresh processes."""
import os, statistics, subprocess, sys, time
sys.path.insert(0, os.getcwd())
from probes.bytecode_cache import FILL_ENV, with_bytecode_cache
from probes.protocol import ProfileRequest, decode, encode
from probes.worker_process import worker_environment

TURNS = int(sys.argv[1]) if len(sys.argv) > 1 else 6
N = 10**6 if os.path.exists("/dev/nvidiactl") else 10**4
ARGV = [sys.executable, "-m", "probes.worker"]


def launch():
    return subprocess.Popen(ARGV, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            text=True, env=worker_environment(ARGV), start_new_session=True)


def until(proc, kind, begin):
    for line in proc.stdout:
        if type(decode(line)).__name__ == kind:
            return time.monotonic() - begin
    raise RuntimeError(f"worker ended before {kind}")


def one(pair: bool):
    begin = time.monotonic()
    first = launch()
    second = launch() if pair else None
    ready = until(first, "WorkerReady", begin)
    first.stdin.write(encode(ProfileRequest("r1", "(a + b).relu()", sizes=[N], modes=["eager"])) + "\n"); first.stdin.flush()
    rows = until(first, "MeasurementResult", begin)
    other = until(second, "WorkerReady", begin) if second else float("nan")
    for p in (first, second):
        if p:
            p.kill(); p.wait()
    return ready, rows, other


begin = time.monotonic()
if FILL_ENV in worker_environment(ARGV):  # as the app's first launch: the worker lives until torch's bytecode is cached
    filler = launch()
    until(filler, "WorkerReady", begin)
    filler.stdin.write(encode(ProfileRequest("r0", "(a + b).relu()", sizes=[N], modes=["eager"])) + "\n"); filler.stdin.flush()
    until(filler, "RequestDone", begin)  # the filler starts once the first request is done
    while FILL_ENV in worker_environment(ARGV) and time.monotonic() - begin < 120:
        time.sleep(0.5)
    filler.kill(); filler.wait()
    print(f"bytecode cache filled: {FILL_ENV not in worker_environment(ARGV)} after {time.monotonic() - begin:.0f} s", flush=True)
one(True)  # a warm-up launch, not counted
results = {"alone": [], "pair": []}
for turn in range(TURNS):
    for name in ("alone", "pair") if turn % 2 == 0 else ("pair", "alone"):
        r = one(name == "pair")
        results[name].append(r)
        print(f"turn {turn} {name:5s} ready {r[0]*1e3:6.0f} ms  first eager rows {r[1]*1e3:6.0f} ms  second ready {r[2]*1e3:6.0f} ms", flush=True)
for name, runs in results.items():
    med = [statistics.median(r[i] for r in runs) * 1e3 for i in range(3)]
    print(f"{name:5s} median of {len(runs)}: ready {med[0]:.0f} ms, first eager rows {med[1]:.0f} ms, second ready {med[2]:.0f} ms")
