"""SIGKILL -> reaped, for a ready worker (and one warmed up): what a quit that waits for it pays."""
import asyncio, os, signal, sys, time, json
sys.path.insert(0, os.getcwd())
from probes.client import WorkerClient
from probes.protocol import ProfileRequest
dev = sys.argv[1] if len(sys.argv) > 1 else "cpu"
async def one(warm):
    c = WorkerClient(); await c.start()
    async for _ in c.request(ProfileRequest(id=c.new_id(), chain="(a + b).relu()", sizes=[10**4], modes=["eager", "compiled"] if warm else ["eager"], device=dev)):
        pass
    p = c._process
    t = time.monotonic(); os.killpg(p.pid, signal.SIGKILL); await p.wait(); k = time.monotonic() - t
    return k
async def main():
    out = {"ready_eager": [], "after_compile": []}
    for i in range(int(sys.argv[2]) if len(sys.argv) > 2 else 3):
        out["ready_eager"].append(round(await one(False) * 1e3, 1))
        out["after_compile"].append(round(await one(True) * 1e3, 1))
    print(json.dumps({"device": dev, "sigkill_to_reaped_ms": out}))
asyncio.run(main())
