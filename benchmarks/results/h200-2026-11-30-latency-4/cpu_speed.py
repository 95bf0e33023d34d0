"""Per-core Python speed on this box (ms for a fixed loop), twice, and /proc/stat steal over the run."""
import os, time, json
def loop():
    t = time.perf_counter(); s = 0
    for i in range(200_000): s += i
    return round((time.perf_counter() - t) * 1e3, 2)
def stat():
    return [int(x) for x in open("/proc/stat").readline().split()[1:]]
s0 = stat(); t0 = time.time()
res = {}
cpus = sorted(os.sched_getaffinity(0))
for rnd in range(3):
    for cpu in cpus:
        os.sched_setaffinity(0, {cpu}); loop()
        res.setdefault(cpu, []).append(loop())
s1 = stat()
d = [b - a for a, b in zip(s0, s1)]
print(json.dumps({"per_cpu_ms": res, "jiffies": dict(zip(["user","nice","system","idle","iowait","irq","softirq","steal"], d)), "s": round(time.time() - t0, 1)}))
