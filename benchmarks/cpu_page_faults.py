"""Do a CPU measurement's kernel rows read the kernels, or page faults? Fresh processes, in turns:
as the engine measures (glibc's malloc thresholds pinned, ``probes.engine.host_heap``, and profiled reps
that fault in fresh pages left out, ``probes.engine.timing``), with the pin only, and with neither.

    python benchmarks/cpu_page_faults.py [--processes 5] [--requests 5] [--out FILE]

Each process measures the eager rows of each chain at one size ``--requests`` times, as the
worker does (``probes.engine.sweep.run_profile``), counting the page faults of each request. Prints per
request the faults, each kernel's median time and the wall time per call; then per setting, how
many requests read a device time (the sum of the kernel rows) above twice the wall time, which a
call whose kernels run one after another cannot do.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CASES = (("(a + b).relu()", 1_000_000), ("F.gelu(a * b + c)", 1_000_000), ("(a * b).sum()", 2_000_000))


SETTINGS = ("neither", "pin only", "engine")


def child(setting: str, requests: int) -> None:
    """One process's requests, one JSON line each."""
    sys.path.insert(0, str(ROOT))
    from probes.engine import host_heap, measure
    from probes.engine.sweep import run_profile
    from probes.engine.timing import page_faults
    from probes.link.protocol import MeasurementResult, ProfileRequest

    def pinned() -> bool:
        """Whether the engine fixed the thresholds (asked without fixing them where it did not)."""
        return host_heap.pin_malloc_thresholds.cache_info().currsize > 0 and host_heap.pin_malloc_thresholds()

    if setting == "neither":
        measure.pin_malloc_thresholds = lambda: False  # glibc's own adjustment
    if setting != "engine":
        every_rep = measure.profile_run
        measure.profile_run = lambda *args, faults_per_call=None, **kwargs: every_rep(*args, **kwargs)
    for chain, n in CASES:
        for i in range(requests):
            events: list = []
            faults, begin = page_faults(), time.perf_counter()
            run_profile(ProfileRequest("faults", chain, sizes=[n], modes=["eager"], device="cpu"), events.append)
            faults, took = page_faults() - faults, time.perf_counter() - begin
            (m,) = [e.measurement for e in events if isinstance(e, MeasurementResult)]
            print(
                json.dumps(
                    {
                        "chain": chain,
                        "n": n,
                        "request": i,
                        "faults": faults,
                        "request_s": round(took, 3),
                        "pinned": pinned(),
                        "kernels_us": [round(k.device_time_us, 1) for k in m.kernels],
                        "device_us": m.device_time_us,
                        "wall_us": m.wall_time_us,
                    }
                ),
                flush=True,
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--processes", type=int, default=5)
    parser.add_argument("--requests", type=int, default=5)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--child", choices=SETTINGS, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.requests)
        sys.stdout.flush()
        # Leave as the tool's own commands do: after CPU profiling on a machine with a GPU, the
        # interpreter's teardown can hang for most of a minute.
        os._exit(0)
    rows = []
    for process in range(args.processes):
        for setting in SETTINGS:
            out = subprocess.run(
                [sys.executable, __file__, "--child", setting, "--requests", str(args.requests)],
                capture_output=True,
                text=True,
                check=True,
            ).stdout
            for line in out.splitlines():
                row = json.loads(line) | {"setting": setting, "process": process}
                rows.append(row)
                print(
                    f"{setting:8} p{process} {row['chain']:18} N={row['n']:.0e} #{row['request']}  "
                    f"faults {row['faults']:7d}  "
                    f"kernels {row['kernels_us']} µs  device {row['device_us']:8.1f}  wall {row['wall_us']:8.1f}",
                    flush=True,
                )
    print()
    typical = {
        chain: {
            what: statistics.median(r[what] for r in rows if r["chain"] == chain) for what in ("device_us", "wall_us")
        }
        for chain, _ in CASES
    }
    for setting in SETTINGS:
        mine = [r for r in rows if r["setting"] == setting]
        wrong = [r for r in mine if r["device_us"] > 2 * r["wall_us"]]
        slow = {what: sum(r[what] > 2 * typical[r["chain"]][what] for r in mine) for what in ("device_us", "wall_us")}
        ratio = statistics.median(r["device_us"] / r["wall_us"] for r in mine)
        worst = max(r["device_us"] / r["wall_us"] for r in mine)
        faults = [r["faults"] for r in mine]
        print(
            f"{setting:8}: {len(wrong)} of {len(mine)} requests read device > 2x wall (worst {worst:.1f}x); "
            f"device > 2x its chain's median (all settings) in {slow['device_us']}, wall in {slow['wall_us']}; "
            f"median device/wall {ratio:.2f}; "
            f"page faults a request: median {statistics.median(faults):.0f}, max {max(faults)}"
        )
    if args.out:
        args.out.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
