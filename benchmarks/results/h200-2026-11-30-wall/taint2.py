"""Does TEARDOWN_CUPTI=1 cure the profiler's lasting launch cost? python lab/taint2.py (runs variants in children)."""
import json, os, statistics, subprocess, sys, time

def child(variant: str, sessions: int) -> None:
    import torch
    from torch.profiler import profile, ProfilerActivity
    dev = torch.device("cuda:0")
    g = [torch.randn(100, device=dev) for _ in range(3)]
    def call(): return (g[0] * g[1] + g[2]).tanh()
    def host_us():
        for _ in range(50): call()
        torch.cuda.synchronize(); per = []
        for _ in range(30):
            t = time.perf_counter()
            for _ in range(100): call()
            per.append((time.perf_counter() - t) / 100 * 1e6); torch.cuda.synchronize()
        return statistics.median(per)
    def idle_event_us():
        out = []
        for _ in range(300):
            torch.cuda.synchronize()
            s = torch.cuda.Event(enable_timing=True); e = torch.cuda.Event(enable_timing=True)
            s.record(); call(); e.record(); torch.cuda.synchronize()
            out.append(s.elapsed_time(e) * 1e3)
        return statistics.median(out)
    rows = [{"tag": "fresh", "host": host_us(), "idle_event": idle_event_us()}]
    starts = []
    for _ in range(sessions):
        t = time.perf_counter()
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as p:
            call(); torch.cuda.synchronize()
        starts.append((time.perf_counter() - t) * 1e3)
        p.events()
    if sessions:
        rows.append({"tag": f"after {sessions} sessions", "host": host_us(), "idle_event": idle_event_us(),
                     "session_ms_first": starts[0], "session_ms_median": statistics.median(starts)})
    print(json.dumps({"variant": variant, "teardown": os.environ.get("TEARDOWN_CUPTI"), "rows": rows}), flush=True)

if __name__ == "__main__":
    if len(sys.argv) > 1:
        child(sys.argv[1], int(sys.argv[2])); sys.exit()
    for rnd in range(3):
        for variant, sessions, env in (("none", 0, {}), ("profiled", 20, {}), ("teardown", 20, {"TEARDOWN_CUPTI": "1"})):
            subprocess.run([sys.executable, __file__, variant, str(sessions)], env={**os.environ, **env}, timeout=120)
