"""Does the warm-up before each measurement change its figures when the device was busy a moment
ago (as while a user types), or after a pause? Measured in one process, in turns.

    python benchmarks/warmup_ab.py [--device cuda] [--rounds 15] [--pause-s 3] [--out FILE]

For each chain, requests of its eager rows at one size (probes.engine.sweep.run_profile, as the worker
runs them) alternate between the engine's warm-up (WARMUP_MIN_S of back-to-back calls,
CPU_WARMUP_MIN_S on the CPU) and none (one call), each right after the previous request; then a
few pairs after ``--pause-s`` of idle. Prints per case the median wall time per call, device time
per call, their spread (p25-p75) and the request's own time.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from probes.engine import timing  # noqa: E402
from probes.engine.sweep import run_profile  # noqa: E402
from probes.link.protocol import MeasurementResult, ProfileRequest  # noqa: E402

CASES = (("(a + b).tanh()", 1_000_000), ("(a + b).tanh()", 10_000_000), ("(a * b).sum()", 1_000_000))


ENGINE_WARMUP_S = (timing.WARMUP_MIN_S, timing.CPU_WARMUP_MIN_S)


def measure(chain: str, n: int, device: str, warm: bool) -> dict[str, float]:
    timing.WARM_FOR_S = 0.0  # the warm-up as it was before it was skipped after recent reps
    timing.WARMUP_MIN_S, timing.CPU_WARMUP_MIN_S = ENGINE_WARMUP_S if warm else (0.0, 0.0)
    events: list = []
    begin = time.perf_counter()
    run_profile(ProfileRequest("ab", chain, sizes=[n], modes=["eager"], device=device), events.append)
    took = time.perf_counter() - begin
    (m,) = [e.measurement for e in events if isinstance(e, MeasurementResult)]
    return {"wall_us": m.wall_time_us, "device_us": m.device_time_us, "request_ms": 1000 * took}


def summary(rows: list[dict[str, float]]) -> dict[str, object]:
    out: dict[str, object] = {"n": len(rows)}
    for key in ("wall_us", "device_us", "request_ms"):
        values = sorted(r[key] for r in rows)
        q = statistics.quantiles(values, n=4) if len(values) >= 2 else [values[0]] * 3
        out[key] = {"median": statistics.median(values), "p25": q[0], "p75": q[2]}
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--pause-s", type=float, default=3.0)
    parser.add_argument("--pauses", type=int, default=4)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    report: dict[str, object] = {"date": time.strftime("%Y-%m-%d %H:%M:%S"), "device": args.device}
    for chain, n in CASES:
        measure(chain, n, args.device, True)  # the chain's first calls, the peak: not in the figures
        busy: dict[bool, list] = {True: [], False: []}
        for _ in range(args.rounds):
            for warm in (True, False):
                busy[warm].append(measure(chain, n, args.device, warm))
        idle: dict[bool, list] = {True: [], False: []}
        for _ in range(args.pauses):
            for warm in (True, False):
                time.sleep(args.pause_s)
                idle[warm].append(measure(chain, n, args.device, warm))
        key = f"{chain} N={n:.0e}"
        report[key] = {
            f"{when}, {'warm-up' if warm else 'none'}": summary(rows)
            for when, cases in (("busy", busy), (f"after {args.pause_s:g} s", idle))
            for warm, rows in cases.items()
            if rows
        }
        for case, s in report[key].items():  # type: ignore[union-attr]
            w, d, r = s["wall_us"], s["device_us"], s["request_ms"]
            print(
                f"{key:28} {case:26} wall {w['median']:8.2f} µs ({w['p25']:.2f}-{w['p75']:.2f})  "
                f"device {d['median']:8.2f} µs ({d['p25']:.2f}-{d['p75']:.2f})  request {r['median']:6.1f} ms  n={s['n']}"
            )
    if args.out:
        args.out.write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
