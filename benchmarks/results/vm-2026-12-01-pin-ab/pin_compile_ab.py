"""Does the malloc pin (or the fault filter) slow a new chain's compiled request on the CPU?
Processes in turns: run_profile of 6 new chains' compiled mode at 1e4 after one eager request."""
import sys, time, subprocess, json, statistics, os
if len(sys.argv) > 1 and sys.argv[1] == "child":
    sys.path.insert(0, "/work/main")
    from probes import measure
    if sys.argv[2] == "off":
        measure.pin_malloc_thresholds = lambda: False
        every = measure.profile_run
        measure.profile_run = lambda *a, faults_per_call=None, **k: every(*a, **k)
    from probes.protocol import ProfileRequest, MeasurementResult
    from probes.sweep import run_profile
    run_profile(ProfileRequest("w", "(a + b).relu()", sizes=[10**4], modes=["eager"], device="cpu"), lambda e: None)
    out = []
    for k in range(6):
        chain = f"(a * {k + 2} + b).tanh().mul({k + 3})"
        t = time.perf_counter()
        run_profile(ProfileRequest("c", chain, sizes=[10**4], modes=["eager", "compiled"], device="cpu"), lambda e: None)
        out.append(round((time.perf_counter() - t) * 1000))
    print(json.dumps(out)); sys.stdout.flush(); os._exit(0)
res = {"on": [], "off": []}
for i in range(3):
    for s in ("off", "on"):
        import tempfile
        r = subprocess.run([sys.executable, __file__, "child", s], capture_output=True, text=True, env={**os.environ, "TORCHINDUCTOR_CACHE_DIR": tempfile.mkdtemp()})
        ms = json.loads(r.stdout.strip().splitlines()[-1]); res[s] += ms[1:]
        print(s, ms, flush=True)
for s in res: print(s, "median", statistics.median(res[s]))
