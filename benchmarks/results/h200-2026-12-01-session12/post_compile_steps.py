"""From a timeline: per new chain, ms of each step of the compile worker between its compile's end
and its rows (medians last)."""
import statistics, sys
rows = sorted((float(t), int(p), e, d) for t, p, e, d in (l.rstrip("\n").split("\t") for l in open(sys.argv[1])))
STEPS = ["compile<", "prepared", "reps chosen", "bytes read", "profile run>", "profile run<", "profile<"]
table = []
for i, (t, p, e, d) in enumerate(rows):
    if e != "compile<":
        continue
    got, times = 0, [t]
    for t2, p2, e2, d2 in rows[i + 1:]:
        if p2 == p and e2 == STEPS[got + 1]:
            got += 1; times.append(t2)
            if got == len(STEPS) - 1:
                break
    if got == len(STEPS) - 1:
        table.append([1000 * (b - a) for a, b in zip(times, times[1:])])
print(" | ".join(f"{a}->{b}" for a, b in zip(STEPS, STEPS[1:])))
for r in table:
    print("  ".join(f"{x:7.1f}" for x in r))
print("median " + "  ".join(f"{statistics.median(c):7.1f}" for c in zip(*table)))
