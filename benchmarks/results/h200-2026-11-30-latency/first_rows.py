"""A fresh worker: when it is ready, and when the first eager rows arrive (what the app waits for)."""
import asyncio, json, os, sys, time
sys.path.insert(0, os.getcwd())
t0 = time.monotonic()
from probes.client import WorkerClient
from probes.protocol import ProfileRequest
dev = sys.argv[1] if len(sys.argv) > 1 else "cuda"
async def main():
    client = WorkerClient()
    marks = {"client_imported": time.monotonic() - t0}
    ready = await client.start()
    marks["ready"] = time.monotonic() - t0
    async for ev in client.request(ProfileRequest(id=client.new_id(), chain="(a + b).relu()", sizes=[10**6], modes=["eager"], device=dev)):
        name = type(ev).__name__
        marks.setdefault(name + ":" + getattr(ev, "message", "")[:40], time.monotonic() - t0)
    await client.close()
    print(json.dumps({k: round(v, 3) for k, v in marks.items()}))
asyncio.run(main())
