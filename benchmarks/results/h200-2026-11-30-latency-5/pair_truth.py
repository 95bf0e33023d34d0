"""Eager readings alone and beside a compile worker compiling new chains: with the shared device lock,
and (control) with each worker on its own lock file (no exclusion)."""
import asyncio, json, statistics, sys, time
sys.path.insert(0, ".")
from probes.protocol import MeasurementResult, ProfileRequest
from probes.worker_pair import WorkerPair

N = 10_000_000
EAGER = "(a * b + c).tanh()"

async def reading(pair, rid):
    req = ProfileRequest(rid, EAGER, sizes=[N], modes=["eager"], device="cuda")
    [m] = [e.measurement async for e in pair.request(req) if isinstance(e, MeasurementResult)]
    return round(m.device_time_us, 1), round(m.wall_time_us, 1)

async def run(shared: bool, tag: str):
    pair = WorkerPair(compile_worker=True)
    if not shared:
        pair.compiler.env = {"KERNEL_TUI_CACHE_DIR": f"/tmp/kt-nolock-{tag}"}
    await pair.start()
    alone = [await reading(pair, f"a{i}") for i in range(3)]
    async def comp():
        out = []
        for i in range(4):
            chain = f"(a * {i + 2}.{25 if shared else 75} + b).sigmoid() * c - {i}"
            t = time.monotonic()
            req = ProfileRequest(f"c{i}", chain, sizes=[N], modes=["compiled"], device="cuda")
            ms = [e.measurement async for e in pair.request(req) if isinstance(e, MeasurementResult)]
            out.append((round(time.monotonic() - t, 3), ms[0].ran_compiled if ms else None))
        return out
    task = asyncio.ensure_future(comp())
    beside = []
    while not task.done():
        beside.append(await reading(pair, f"b{len(beside)}"))
    compiled = await task
    await pair.close()
    print(json.dumps({"shared_lock": shared, "alone": alone, "beside": beside, "compiles_s": compiled}), flush=True)

async def main():
    await run(True, "x")
    await run(False, "y")
asyncio.run(main())
