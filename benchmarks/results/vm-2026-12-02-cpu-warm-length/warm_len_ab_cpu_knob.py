"""On the CPU: the warm-up before each measurement at 25 ms (as committed) and at a shorter length,
in turns, on pairs of new chains that differ only by a constant, each request (eager + compiled,
as an edit sends them) after a 0.4 s pause (a typist's; PAUSE_S). Prints per pair the device times, their
IQR relative to the median, the noisy flags, and the time to each mode's rows."""
import json, os, statistics, sys, tempfile, time
os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", tempfile.mkdtemp(prefix="kt-warm-"))
from probes import timing
from probes.protocol import MeasurementResult, ProfileRequest
from probes.sweep import run_profile
ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 3
SHORT = float(sys.argv[2]) if len(sys.argv) > 2 else 0.005
N = int(float(sys.argv[3])) if len(sys.argv) > 3 else 10_000
PAUSE_S = float(os.environ.get("PAUSE_S", "0.4"))
OPS = ["tanh", "sigmoid", "exp", "sin", "neg", "sqrt", "abs", "log1p"]
ARMS = {"long": timing.WARMUP_MIN_S, "short": SHORT}
KNOB = "CPU_WARMUP_MIN_S"
rows = []
k = 0
run_profile(ProfileRequest("w", "(a + b).cos()", sizes=[N], modes=["eager", "compiled"], device="cpu"), lambda e: None)
for r in range(ROUNDS):
    for i, op in enumerate(OPS):
        order = ["long", "short"] if (r + i) % 2 == 0 else ["short", "long"]
        pair = {}
        for arm in order:
            k += 1
            setattr(timing, KNOB, ARMS[arm])
            time.sleep(PAUSE_S)
            got = {}
            t = time.perf_counter()
            def seen(e):
                if isinstance(e, MeasurementResult) and e.measurement.mode not in got:
                    got[e.measurement.mode] = (time.perf_counter() - t, e.measurement)
            run_profile(ProfileRequest(f"r{k}", f"(a * {k + 1.5} + b).{op}()", sizes=[N], modes=["eager", "compiled"], device="cpu"), seen)
            pair[arm] = {mode: {"rows_s": s, "dev": m.device_time_us, "iqr": m.device_time_us_iqr, "noisy": m.noisy}
                         for mode, (s, m) in got.items()}
        rows.append({"op": op, "round": r, **pair})
        L, S = pair["long"], pair["short"]
        print(f"{op:8} " + "  ".join(f"{mode}: long {L[mode]['dev']:7.2f} ({1000*L[mode]['rows_s']:4.0f} ms{' N' if L[mode]['noisy'] else ''}) short {S[mode]['dev']:7.2f} ({1000*S[mode]['rows_s']:4.0f} ms{' N' if S[mode]['noisy'] else ''})" for mode in ("eager", "compiled")), flush=True)
setattr(timing, KNOB, ARMS["short"])
print(f"\nshort = {SHORT*1000:.0f} ms, long = {ARMS['long']*1000:.0f} ms; {len(rows)} pairs at N={N}, each request after {PAUSE_S} s idle, compile caches of its own")
for mode in ("eager", "compiled"):
    ratio = [x["short"][mode]["dev"] / x["long"][mode]["dev"] for x in rows]
    far = lambda arm, other: sum(1 for x in rows if x[arm][mode]["dev"] > 1.5 * x[other][mode]["dev"])
    rel = lambda arm: statistics.median((x[arm][mode]["iqr"][1] - x[arm][mode]["iqr"][0]) / x[arm][mode]["dev"] for x in rows if x[arm][mode]["iqr"])
    noisy = lambda arm: sum(x[arm][mode]["noisy"] for x in rows)
    when = lambda arm: statistics.median(x[arm][mode]["rows_s"] for x in rows) * 1000
    print(f"{mode:8} device short/long median {statistics.median(ratio):.3f} (p25-p75 {statistics.quantiles(ratio, n=4)[0]:.2f}-{statistics.quantiles(ratio, n=4)[2]:.2f}); "
          f"> 1.5x its pair: long {far('long', 'short')}, short {far('short', 'long')}; IQR/median long {rel('long'):.3f} short {rel('short'):.3f}; "
          f"noisy long {noisy('long')} short {noisy('short')}; rows at long {when('long'):.0f} short {when('short'):.0f} ms")
if len(sys.argv) > 4:
    json.dump(rows, open(sys.argv[4], "w"), indent=1)
