"""Launch -> WorkerReady -> first eager rows, through the real worker and client (as the app)."""
import asyncio, os, sys, time
sys.path.insert(0, os.getcwd())  # run from the repository root
T0 = time.monotonic()
from probes.worker_process import EarlyWorker
from probes.client import WorkerClient
from probes.protocol import ProfileRequest, MeasurementResult, Progress

async def main():
    early = EarlyWorker(None)
    client = WorkerClient(None, early=early)
    ready = await client.start()
    print(f"{(time.monotonic()-T0)*1e3:7.0f} ms ready")
    n = 10**6 if any(d.startswith("cuda") for d in [str(x) for x in getattr(ready, 'devices', [])]) or os.path.exists("/dev/nvidiactl") else 10**4
    for chain in ("(a + b).relu()", "(a + b).tanh()"):
        t = time.monotonic()
        async for event in client.request(ProfileRequest(client.new_id(), chain, sizes=[n], modes=["eager"])):
            label = type(event).__name__ + (" " + event.message if isinstance(event, Progress) else "")
            print(f"{(time.monotonic()-T0)*1e3:7.0f} ms (+{(time.monotonic()-t)*1e3:5.0f}) {label}")
    await client.close()
asyncio.run(main())
