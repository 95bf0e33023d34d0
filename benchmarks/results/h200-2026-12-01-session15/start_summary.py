"""Per launch of a frame section's timeline: ms after the app's start to its first worker's start,
to that worker's torch import, its WorkerReady and the first eager rows seen; then the medians
(the first launch, which fills caches, left out)."""
import statistics, sys
sys.path.insert(0, sys.argv[2] if len(sys.argv) > 2 else "benchmarks/timeline")
from show import read

events = read(sys.argv[1])
launches = [t for t, _, event, detail in events if event == "start" and detail.startswith("-m ") and not detail.endswith(".py")]
rows = []
for begin in launches:
    end = next((t for t, _, e, d in events if e == "seen" and t > begin and "eager" in d), None)
    if end is None:
        continue
    inside = [(t, p, e) for t, p, e, d in events if begin < t <= end]
    worker = next(((t, p) for t, p, e in inside if e == "start"), None)
    if worker is None:
        continue
    imported = next((t for t, p, e in inside if e == "torch imported"), None)
    ready = next((t for t, p, e in inside if e == "ready sent"), None)
    rows.append([(x - begin) * 1e3 if x else float("nan") for x in (worker[0], imported, ready, end)])
print("worker start | torch imported | ready sent | eager rows seen  (ms after the app's start)")
for r in rows:
    print("  ".join(f"{x:8.0f}" for x in r))
if len(rows) > 1:
    print("median " + "  ".join(f"{statistics.median(c):8.0f}" for c in zip(*rows[1:])))
