"""The worker process and its client: answers, cancels, heartbeats, and survives crashes, hangs,
stuck chains and kills; close() never waits long."""

from __future__ import annotations

import asyncio
import os
import re
import sys
import time
from pathlib import Path

import pytest

from probes.engine.worker import TEST_FAULT_ENV
from probes.link.client import WorkerClient
from probes.link.protocol import (
    PROTOCOL_VERSION,
    MeasurementResult,
    ProfileRequest,
    Progress,
    RequestDone,
    RequestFailed,
    WarmupRequest,
    WorkerReady,
    encode,
)
from probes.link.settings import MAX_SIZES

CHAIN = "(a + b).relu()"
WAIT_S = 120
"""Upper bound on anything a test waits for (a cold compile on a loaded two-core machine)."""
CLOSE_S = 10.0
"""close() kills the worker rather than waiting for it: one holding the GIL would not end for an
hour. The kill takes milliseconds; the quit-time target lives in benchmarks/tui_latency.py."""


async def collect(client: WorkerClient, request: ProfileRequest | WarmupRequest) -> list:
    async def gather() -> list:
        return [event async for event in client.request(request)]

    return await asyncio.wait_for(gather(), WAIT_S)


def eager_request(client: WorkerClient, sizes: list[int] | None = None, chain: str = CHAIN) -> ProfileRequest:
    return ProfileRequest(client.new_id(), chain, sizes=sizes or [1000], modes=["eager"], device="cpu", reps=3)


def compiled_request(client: WorkerClient, chain: str) -> ProfileRequest:
    return ProfileRequest(client.new_id(), chain, sizes=[1000], modes=["compiled"], device="cpu", reps=3)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


async def until(condition, timeout_s: float = WAIT_S) -> None:
    """Wait for ``condition()`` to hold, polling (no fixed pause)."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting"
        await asyncio.sleep(0.02)


def worker_command(*flags: str) -> list[str]:
    return [sys.executable, "-m", "probes.engine.worker", *flags]


async def assert_next_chain_works(client: WorkerClient) -> None:
    again = await collect(client, eager_request(client))
    assert any(isinstance(e, MeasurementResult) for e in again), again


@pytest.fixture
async def client(tmp_path: Path):
    client = WorkerClient(env={"KERNEL_TUI_CACHE_DIR": str(tmp_path / "cache")})
    yield client
    await client.close()


async def test_worker_answers_a_request_with_tagged_events(client: WorkerClient) -> None:
    ready = await client.start()
    assert ready.torch_version and any(d.name == "cpu" for d in ready.devices)
    request = eager_request(client)
    events = await collect(client, request)
    assert all(e.id == request.id for e in events)
    assert isinstance(events[-1], RequestDone) and not events[-1].cancelled
    results = [e for e in events if isinstance(e, MeasurementResult)]
    assert len(results) == 1 and results[0].measurement.kernels_per_call == 2
    assert any(isinstance(e, Progress) for e in events)


async def test_bad_chain_answers_failed_with_position(client: WorkerClient) -> None:
    await client.start()
    request = ProfileRequest(client.new_id(), "(a + b).relu(", device="cpu")
    events = await collect(client, request)
    (failure,) = [e for e in events if isinstance(e, RequestFailed)]
    assert failure.error.kind == "syntax" and failure.error.line == 1
    assert isinstance(events[-1], RequestDone)


async def test_cancel_stops_a_running_sweep(client: WorkerClient) -> None:
    await client.start()
    request = eager_request(client, sizes=[1000] * 30)
    events = []
    async for event in client.request(request):
        events.append(event)
        if isinstance(event, MeasurementResult) and len(events) < 10:
            await client.cancel(request.id)
    done = events[-1]
    assert isinstance(done, RequestDone) and done.cancelled
    assert len([e for e in events if isinstance(e, MeasurementResult)]) < 30
    assert client.restarts == 0


async def test_a_request_cancelled_before_it_is_sent_is_never_run(client: WorkerClient) -> None:
    await client.start()
    request = eager_request(client)
    await client.cancel(request.id)
    assert await collect(client, request) == [RequestDone(request.id, cancelled=True)]
    await assert_next_chain_works(client)


@pytest.mark.parametrize("fault", ["crash", "exit-in-compile"])
async def test_a_worker_that_dies_is_restarted_and_says_why(tmp_path: Path, fault: str) -> None:
    marker = tmp_path / "fired"
    client = WorkerClient(env={TEST_FAULT_ENV: f"{fault}:{marker}"})
    try:
        await client.start()
        modes = ["compiled"] if fault == "exit-in-compile" else ["eager"]
        request = ProfileRequest(client.new_id(), CHAIN, sizes=[1000], modes=modes, device="cpu", reps=3)
        events = await collect(client, request)
        (failure,) = [e for e in events if isinstance(e, RequestFailed)]
        assert failure.error.kind == "worker"
        expected = {"crash": "signal 9", "exit-in-compile": "exited (code 1)"}[fault]
        assert expected in failure.error.message  # the cause: whether the restart worked is the state's to say
        assert isinstance(events[-1], RequestDone)
        assert marker.exists() and client.restarts == 1
        await assert_next_chain_works(client)
    finally:
        await client.close()


async def test_a_worker_that_holds_the_gil_goes_silent_and_is_restarted(tmp_path: Path) -> None:
    """One long C call that keeps the GIL (like arithmetic on a huge Python integer) stops the
    heartbeats: the client restarts the worker after silence_s and says so in one line."""
    marker = tmp_path / "fired"
    client = WorkerClient(env={TEST_FAULT_ENV: f"hold-gil:{marker}"}, silence_s=2)
    try:
        await client.start()
        first_pid = client.pid
        begin = time.monotonic()
        events = await collect(client, eager_request(client))
        (failure,) = [e for e in events if isinstance(e, RequestFailed)]
        assert failure.error.kind == "stuck" and "sent nothing for 2 s" in failure.error.message
        assert "\n" not in failure.error.message and isinstance(events[-1], RequestDone)
        assert time.monotonic() - begin < 15
        assert client.restarts == 1 and first_pid is not None and not alive(first_pid)
        await assert_next_chain_works(client)
    finally:
        await client.close()


async def test_a_worker_idle_for_longer_than_the_silence_limit_is_not_taken_for_stuck() -> None:
    """Silence counts from a request's send: an idle worker says nothing, and the first edit after
    a pause of silence_s (15 s in the app) failed at once as "sent nothing for 15 s", the worker
    restarted (seen in a terminal after a pause)."""
    client = WorkerClient(silence_s=2)
    try:
        await client.start()
        await assert_next_chain_works(client)
        while time.monotonic() < client._lines.last_heard + client.silence_s + 0.1:  # the pause: silent past the limit
            await asyncio.sleep(0.05)
        events = await collect(client, eager_request(client))
        assert not [e for e in events if isinstance(e, RequestFailed)], events
        assert any(isinstance(e, MeasurementResult) for e in events) and client.restarts == 0
    finally:
        await client.close()


async def test_a_request_that_ignores_its_cancel_is_killed_within_the_grace(tmp_path: Path) -> None:
    """The worker sleeps in C with the GIL released: it keeps beating, so it is not silent, but a
    cancel cannot reach it. The client gives it cancel_ack_s, then restarts it."""
    marker = tmp_path / "fired"
    client = WorkerClient(env={TEST_FAULT_ENV: f"hang:{marker}"}, silence_s=5, cancel_ack_s=1)
    try:
        await client.start()
        request = eager_request(client)
        events: list = []
        done_at: list[float] = []

        async def stream() -> None:
            async for event in client.request(request):
                events.append(event)
                done_at.append(time.monotonic())

        streaming = asyncio.ensure_future(stream())
        await until(marker.exists)
        cancelled_at = time.monotonic()
        await client.cancel(request.id)
        await asyncio.wait_for(streaming, WAIT_S)
        assert done_at[-1] - cancelled_at >= client.cancel_ack_s, "stopped before its grace ran out"
        assert events[-1] == RequestDone(request.id, cancelled=True)
        assert not [e for e in events if isinstance(e, RequestFailed)]
        await until(lambda: client.state == "ready")
        assert client.restarts == 1
        await assert_next_chain_works(client)
    finally:
        await client.close()


async def test_a_watched_python_loop_is_stopped_in_one_line_and_the_worker_lives_on(tmp_path: Path) -> None:
    marker = tmp_path / "fired"
    client = WorkerClient(worker_command("--stuck-s", "1"), env={TEST_FAULT_ENV: f"spin:{marker}"})
    try:
        await client.start()
        pid = client.pid
        events = await collect(client, eager_request(client))
        (failure,) = [e for e in events if isinstance(e, RequestFailed)]
        assert failure.error.kind == "stuck"
        assert failure.error.message == "the chain ran plain Python for 1 s without reaching a tensor op: stopped"
        assert isinstance(events[-1], RequestDone)
        assert client.pid == pid and client.restarts == 0
        await assert_next_chain_works(client)
    finally:
        await client.close()


async def test_a_watched_chain_that_cannot_be_stopped_ends_its_worker_in_one_line(tmp_path: Path) -> None:
    """Stuck in a C call that never returns to Python, the chain cannot take the stop: the worker
    says so once and exits with EXIT_STUCK; the client restarts it without a second message."""
    marker = tmp_path / "fired"
    client = WorkerClient(worker_command("--stuck-s", "1"), env={TEST_FAULT_ENV: f"c-loop:{marker}"})
    try:
        await client.start()
        events = await collect(client, eager_request(client))
        failures = [e for e in events if isinstance(e, RequestFailed)]
        assert [f.error.kind for f in failures] == ["stuck"], failures
        assert failures[0].error.message.startswith("the chain ran plain Python for 1 s without reaching a tensor op")
        assert isinstance(events[-1], RequestDone)
        assert client.restarts == 1
        await assert_next_chain_works(client)
    finally:
        await client.close()


async def test_killed_mid_request_then_next_request_works(client: WorkerClient) -> None:
    await client.start()
    first_pid = client.pid
    request = eager_request(client, sizes=[1000] * 50)
    events = []
    async for event in client.request(request):
        events.append(event)
        if isinstance(event, MeasurementResult) and len(events) < 5:
            await client.kill_worker()
    assert any(isinstance(e, RequestFailed) and "signal 9" in e.error.message for e in events)
    assert client.pid != first_pid
    await assert_next_chain_works(client)


async def test_an_idle_worker_that_dies_is_replaced_before_the_next_request(client: WorkerClient) -> None:
    """The OOM killer or a kill from outside while nothing runs: the client says so ("lost") and
    starts another at once, so the next request neither fails nor waits for a start."""
    states: list[tuple[str, str]] = []
    client.on_state = lambda state, detail: states.append((state, detail))
    await client.start()
    first_pid = client.pid
    await client.kill_worker()
    await until(lambda: client.state == "ready" and client.pid != first_pid)
    assert ("lost", "the worker was killed by signal 9") in states
    assert alive(client.pid) and client.restarts == 1
    events = await collect(client, eager_request(client))
    assert not [e for e in events if isinstance(e, RequestFailed)] and client.restarts == 1


async def test_a_worker_that_dies_each_time_it_is_ready_is_left_stopped() -> None:
    """Replacing an idle worker that died is not a loop: after MAX_REPLACEMENTS in a row, the
    client stops, and says why."""
    from probes.link.client import MAX_REPLACEMENTS

    ready = WorkerReady(pid=1, torch_version="2.0", devices=[], default_device="cpu", protocol=PROTOCOL_VERSION)
    states: list[tuple[str, str]] = []
    client = WorkerClient(
        [sys.executable, "-c", f"print({encode(ready)!r}, flush=True)"],
        on_state=lambda state, detail: states.append((state, detail)),
    )
    try:
        await client.start()
        await until(lambda: client.state == "stopped")
        assert client.restarts == MAX_REPLACEMENTS
        assert "left stopped" in states[-1][1]
    finally:
        await client.close()


async def test_a_worker_that_dies_as_soon_as_it_is_ready_is_still_replaced() -> None:
    """The worker's end can reach the client before ``start()`` has marked it ready (all of its
    output already read, as on a loaded machine); that death still counts, so the client
    neither waits on a dead worker as if it were ready nor misses the replacements' limit."""
    from probes.link.client import MAX_REPLACEMENTS
    from probes.link.worker_process import EarlyWorker

    ready = WorkerReady(pid=1, torch_version="2.0", devices=[], default_device="cpu", protocol=PROTOCOL_VERSION)
    command = [sys.executable, "-c", f"print({encode(ready)!r}, flush=True)"]
    early = EarlyWorker(command)
    early.popen.wait()
    client = WorkerClient(command, early=early)
    try:
        await client.start()
        await until(lambda: client.state == "stopped", 30)
        assert client.restarts == MAX_REPLACEMENTS
    finally:
        await client.close()


async def test_a_worker_started_before_the_event_loop_is_adopted_then_restarted_as_usual() -> None:
    """The app starts its worker before it imports Textual (no event loop yet); the client adopts
    that process, talks to it like one it started, and after it dies starts the next the usual way."""
    from probes.link.worker_process import EarlyWorker

    early = EarlyWorker(None)
    client = WorkerClient(early=early)
    try:
        ready = await client.start()
        assert client.pid == early.popen.pid == ready.pid
        assert any(isinstance(e, MeasurementResult) for e in await collect(client, eager_request(client)))
        await client.kill_worker()
        await until(lambda: not alive(early.popen.pid), 2)
        await assert_next_chain_works(client)
        assert client.pid != early.popen.pid and client.restarts == 1
    finally:
        await client.close()
    await until(lambda: not alive(early.popen.pid), 2)


async def test_close_leaves_no_worker_behind(client: WorkerClient) -> None:
    await client.start()
    pid = client.pid
    assert pid is not None and alive(pid)
    await client.close()
    await until(lambda: not alive(pid), 2)


async def test_close_is_quick_in_every_state(tmp_path: Path) -> None:
    """Idle, mid-sweep and mid-request stuck in C: close() kills the worker at once (no grace to
    wait out), and leaves no worker."""
    marker = tmp_path / "fired"
    for state in ("idle", "mid-sweep", "holding the GIL"):
        env = {TEST_FAULT_ENV: f"hold-gil:{marker}"} if state == "holding the GIL" else {}
        client = WorkerClient(env=env)
        await client.start()
        pid = client.pid
        assert pid is not None
        stream = None
        if state != "idle":
            request = eager_request(client, sizes=[100_000] * MAX_SIZES)
            stream = asyncio.ensure_future(collect(client, request))
            await until(
                lambda state=state, client=client: (
                    marker.exists() if state == "holding the GIL" else client.state == "busy"
                )
            )
        begin = time.monotonic()
        await client.close()
        elapsed = time.monotonic() - begin
        assert elapsed < CLOSE_S, f"close() took {elapsed:.2f} s {state}"
        await until(lambda pid=pid: not alive(pid), 2)
        if stream is not None:
            events = await stream
            assert isinstance(events[-1], RequestDone) and not [e for e in events if isinstance(e, RequestFailed)]
            assert client.restarts == 0, "a closing client must not restart its worker"


async def test_a_worker_of_another_protocol_is_refused_in_one_line() -> None:
    ready = WorkerReady(pid=1, torch_version="2.0", devices=[], default_device="cpu", protocol=1)
    fake = [sys.executable, "-c", f"import sys; print({encode(ready)!r}, flush=True); sys.stdin.read()"]
    client = WorkerClient(fake)
    with pytest.raises(RuntimeError) as caught:
        await client.start()
    message = str(caught.value)
    assert "protocol 1" in message and "same kernel-tui version" in message and "\n" not in message
    assert client.ready is None
    await client.close()


@pytest.mark.slow
async def test_a_long_compile_keeps_beating_and_is_never_killed(tmp_path: Path) -> None:
    """A compile sends no event for seconds, but it releases the GIL: its heartbeats keep a
    client whose silence limit is far shorter than the compile from restarting it."""
    cold = {"KERNEL_TUI_CACHE_DIR": str(tmp_path / "cache"), "TORCHINDUCTOR_CACHE_DIR": str(tmp_path / "inductor")}
    client = WorkerClient(worker_command("--heartbeat-s", "0.1"), env=cold, silence_s=0.6)
    try:
        await client.start()
        events = await collect(client, compiled_request(client, "(a * 3 - b).sin().sum()"))
        results = [e for e in events if isinstance(e, MeasurementResult)]
        assert results and results[0].measurement.ran_compiled, events
        assert results[0].measurement.compile_time_s > 2 * 0.6, "the compile was too quick to show anything"
        assert client.restarts == 0
    finally:
        await client.close()


@pytest.mark.slow
async def test_a_compile_stops_soon_after_a_cancel_and_the_worker_compiles_again(tmp_path: Path) -> None:
    client = WorkerClient(env={"KERNEL_TUI_CACHE_DIR": str(tmp_path / "cache")}, cancel_ack_s=3)
    try:
        await client.start()
        request = compiled_request(client, "(a - b).cos().relu() * 2")
        events, cancelled_at = [], None
        async for event in client.request(request):
            events.append(event)
            if isinstance(event, Progress) and event.stage == "compiling" and cancelled_at is None:
                cancelled_at = time.monotonic()
                await client.cancel(request.id)
        assert cancelled_at is not None and events[-1] == RequestDone(request.id, cancelled=True)
        assert client.restarts == 0, "the compile did not stop within the cancel grace: its worker was restarted"
        assert not any(isinstance(e, MeasurementResult) for e in events)
        again = await collect(client, compiled_request(client, "(a - b).cos().relu() * 2"))
        results = [e for e in again if isinstance(e, MeasurementResult)]
        assert results and results[0].measurement.ran_compiled, again
    finally:
        await client.close()


def compilers_of(group: int) -> list[str]:
    return [
        command
        for command in live_processes_of_group(group).values()
        if re.search(r"\b(cc1plus|g\+\+|c\+\+)\b", command)
    ]


@pytest.mark.slow
async def test_a_compile_cancelled_while_it_waits_for_its_compiler_stops_at_once_and_kills_it(tmp_path: Path) -> None:
    """On the CPU most of a compile is g++ (a process the worker waits for): a stop raised in the
    worker fired only when g++ ended (most of a second, the next edit's eager rows behind it); the
    stop's signal takes it inside the wait, and the compiler is killed on the way out: it never
    writes its kernel, as it would if the stop waited for it or left it running."""
    inductor = tmp_path / "inductor"
    env = {"KERNEL_TUI_CACHE_DIR": str(tmp_path / "cache"), "TORCHINDUCTOR_CACHE_DIR": str(inductor)}
    client = WorkerClient(env=env, cancel_ack_s=3)
    try:
        await client.start()
        await collect(client, compiled_request(client, "(a + b).relu()"))  # the compiler imported
        kernels = set(inductor.rglob("*.so"))
        assert kernels, "a compiled kernel is a .so in the Inductor cache"
        group = client.pid
        assert group is not None
        request = compiled_request(client, "(a - b).cos().sin() * 5")
        events: list = []

        async def stream() -> None:
            async for event in client.request(request):
                events.append(event)

        streaming = asyncio.ensure_future(stream())
        await until(lambda: bool(compilers_of(group)), timeout_s=60)
        await client.cancel(request.id)
        await asyncio.wait_for(streaming, WAIT_S)
        assert events[-1] == RequestDone(request.id, cancelled=True)
        await until(lambda: compilers_of(group) == [])
        assert set(inductor.rglob("*.so")) == kernels, "the compiler ran to its end"
        assert client.restarts == 0
    finally:
        await client.close()


async def test_a_cancel_while_the_worker_imports_the_compiler_waits_for_the_import(tmp_path: Path) -> None:
    """A worker imports Dynamo and Inductor with its first compile (a second or several, on a cold
    machine) and cannot stop inside an import: the client does not count that time against the
    cancel's deadline (else it would restart the worker), and the worker stops as soon as the
    import ends, its modules whole for the next compile."""
    client = WorkerClient(env={"KERNEL_TUI_CACHE_DIR": str(tmp_path / "cache")}, cancel_ack_s=0.2)
    try:
        await client.start()
        request = compiled_request(client, "(a - b).sin() * 3")
        events, after_import = [], None
        async for event in client.request(request):
            events.append(event)
            if isinstance(event, Progress) and event.stage == "importing":
                await client.cancel(request.id)
            elif after_import is None and any(isinstance(e, Progress) and e.stage == "importing" for e in events):
                after_import = event
        assert any(isinstance(e, Progress) and e.stage == "importing" for e in events), events
        assert after_import == RequestDone(request.id, cancelled=True), "the request went on past the import"
        assert client.restarts == 0
        again = await collect(client, compiled_request(client, "(a - b).sin() * 3"))
        results = [e for e in again if isinstance(e, MeasurementResult)]
        assert results and results[0].measurement.ran_compiled, again
        assert not any(isinstance(e, Progress) and e.stage == "importing" for e in again), "imported twice"
    finally:
        await client.close()


@pytest.mark.parametrize("compiling", [True, False])
def test_a_compile_is_stopped_without_waiting_for_a_safe_point(compiling: bool) -> None:
    """A measurement reaches a safe point (between sizes and modes) within the grace and ends
    there, whole (a profile is not cut); a compile has none, so waiting out the grace
    would only delay the next edit's rows."""
    import contextlib
    import io
    import threading

    from probes.engine.compiling import compile_window
    from probes.engine.worker import CANCEL_SAFE_POINT_S, Worker

    worker = Worker(io.StringIO())
    stopped = threading.Event()
    woken: list[bool] = []

    def stop(request_id: str, *, interrupt: object = None) -> None:
        woken.append(interrupt is not None)
        stopped.set()

    worker._stop = type("Stop", (), {"stop": staticmethod(stop)})()
    worker._current = ProfileRequest("r1", CHAIN)
    with compile_window() if compiling else contextlib.nullcontext():
        worker._cancel("r1", CANCEL_SAFE_POINT_S)
    assert stopped.wait(CANCEL_SAFE_POINT_S * 0.8) is compiling
    assert stopped.wait(CANCEL_SAFE_POINT_S * 5), "the stop never came"
    assert woken == [compiling]  # only a compile's stop reaches into a blocking call (the compiler's wait)


@pytest.mark.slow
async def test_a_warm_up_gives_way_to_a_real_request_at_once(tmp_path: Path) -> None:
    client = WorkerClient(env={"KERNEL_TUI_CACHE_DIR": str(tmp_path / "cache")})
    try:
        await client.start()
        warm = WarmupRequest(client.new_id(), "cpu")
        warm_events: list = []

        async def warm_up() -> None:
            async for event in client.request(warm):
                warm_events.append(event)

        warming = asyncio.ensure_future(warm_up())
        await until(lambda: any(isinstance(e, Progress) and "compiling" in e.message for e in warm_events))
        events = await collect(client, eager_request(client))
        assert any(isinstance(e, MeasurementResult) for e in events)
        await warming
        assert warm_events[-1] == RequestDone(warm.id, cancelled=True), "the warm-up held the worker to its end"
        assert client.restarts == 0
        await client.warm_up("cpu")  # a full warm-up, after an interrupted one
        compiled = await collect(client, compiled_request(client, CHAIN))
        assert any(isinstance(e, MeasurementResult) and e.measurement.ran_compiled for e in compiled), compiled
    finally:
        await client.close()


async def test_worker_command_is_configurable_like_ssh() -> None:
    # A stand-in for `ssh gpu-box python -m probes.engine.worker`: any command that speaks the protocol.
    command = f"env KERNEL_TUI_VIA=stand-in-ssh {sys.executable} -m probes.engine.worker"
    client = WorkerClient(command)
    try:
        ready = await client.start()
        assert ready.pid != os.getpid()
        await assert_next_chain_works(client)
    finally:
        await client.close()


async def test_the_replay_worker_honours_cancel() -> None:
    recording = Path(__file__).parent / "data" / "h200_add_relu_sweep.json"
    client = WorkerClient([sys.executable, "-m", "probes.link.replay", str(recording), "--delay", "0.5"])
    try:
        await client.start()
        request = ProfileRequest(
            client.new_id(), CHAIN, sizes=[100, 10_000, 1_000_000, 10**7, 10**8], modes=["eager", "compiled"]
        )
        events: list = []
        async for event in client.request(request):
            events.append(event)
            if isinstance(event, MeasurementResult):
                await client.cancel(request.id)
        assert events[-1] == RequestDone(request.id, cancelled=True)
        assert len([e for e in events if isinstance(e, MeasurementResult)]) == 1
        assert client.restarts == 0
    finally:
        await client.close()


async def test_an_abandoned_request_that_will_not_stop_is_cleared_before_the_next(tmp_path: Path) -> None:
    """What the app does on Stop or a new edit: it drops the stream of the running request and
    cancels it. If the worker cannot stop it, the next request restarts the worker (within the
    grace) instead of waiting behind it."""
    marker = tmp_path / "fired"
    client = WorkerClient(env={TEST_FAULT_ENV: f"hang:{marker}"}, cancel_ack_s=1)
    try:
        await client.start()
        first = eager_request(client)
        stream = asyncio.ensure_future(collect(client, first))
        await until(marker.exists)
        stream.cancel()
        await client.cancel(first.id)
        begin = time.monotonic()
        events = await collect(client, eager_request(client))
        assert any(isinstance(e, MeasurementResult) for e in events), events
        assert client.restarts == 1 and time.monotonic() - begin < WAIT_S
    finally:
        await client.close()


def live_processes_of_group(pgid: int) -> dict[int, str]:
    """The processes of a process group that are not zombies, with their command lines (from /proc)."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        state, _, group = stat[stat.rindex(")") + 2 :].split()[:3]
        if state != "Z" and int(group) == pgid:
            found[int(entry.name)] = command
    return found


async def test_a_worker_fills_its_bytecode_cache_after_its_first_request_and_the_filler_dies_with_it(
    tmp_path: Path,
) -> None:
    """What the launcher asks of the first worker on a torch without bytecode (probes.link.bytecode_cache);
    ``env`` in front of the command, as the launcher asks it only of a torch without bytecode."""
    from probes.link.bytecode_cache import FILL_ENV

    cache = tmp_path / "bytecode"
    command = ["env", f"{FILL_ENV}={cache}", sys.executable, "-m", "probes.engine.worker"]
    client = WorkerClient(command, env={"KERNEL_TUI_CACHE_DIR": str(tmp_path / "cache")})

    def fillers() -> list[int]:
        return [pid for pid, line in live_processes_of_group(worker).items() if "probes.link.bytecode_cache" in line]

    try:
        await client.start()
        worker = client.pid
        assert worker is not None
        assert fillers() == []  # nothing competes with the first request
        await collect(client, eager_request(client))
        await until(lambda: len(fillers()) == 1)
        filler = fillers()[0]
        await until(lambda: any(cache.rglob("torch/*.pyc")))
        assert os.getpriority(os.PRIO_PROCESS, filler) == 19
    finally:
        await client.close()
    await until(lambda: filler not in live_processes_of_group(worker))


def test_a_device_that_fails_at_start_fails_the_worker_start(monkeypatch: pytest.MonkeyPatch) -> None:
    """The device's context is made in a thread beside the memory guard's first run: its failure
    must still end the start (the client then reports it), not be lost in the thread."""
    import torch

    from probes.engine import worker

    def no_device(*args: object, **kwargs: object) -> torch.Tensor:
        raise RuntimeError("CUDA error: no CUDA-capable device is detected")

    monkeypatch.setattr(torch, "ones", no_device)
    with pytest.raises(RuntimeError, match="no CUDA-capable device"):
        worker._initialise_device()


def test_a_stop_that_comes_during_an_import_is_taken_as_the_import_ends() -> None:
    """A cancel while the worker imports the compiler (a second, never interrupted: a module
    stopped halfway stays broken) stops the request right after the import, not after the compile
    it was for (the client would have restarted the worker by then)."""
    import threading

    from probes.engine.worker import StopRequest, _MainThreadStop

    stop = _MainThreadStop()
    imported = False
    with pytest.raises(StopRequest):
        with stop.armed("r1"):
            with stop.held():
                stopper = threading.Thread(target=stop.stop, args=("r1",))
                stopper.start()
                stopper.join()
                imported = True
            pytest.fail("the request went on past the import")
    assert imported


def test_a_stop_made_outside_the_main_thread_interrupts_without_a_signal() -> None:
    """Only the main thread takes signals: a stop armed in another thread (a test's, a library
    user's) runs its interrupt and raises there, and sends no STOP_SIGNAL, whose default would end
    the whole process."""
    import threading

    from probes.engine.worker import StopRequest, _MainThreadStop

    interrupted: list[bool] = []
    outcome: list[str] = []
    armed = threading.Event()

    def run() -> None:
        stop = _MainThreadStop()
        holder.append(stop)
        try:
            with stop.armed("r"):
                armed.set()
                deadline = time.monotonic() + WAIT_S
                while time.monotonic() < deadline:  # plain Python: the stop fires at a step of it
                    pass
            outcome.append("not stopped")
        except StopRequest:
            outcome.append("stopped")

    holder: list[_MainThreadStop] = []
    thread = threading.Thread(target=run)
    thread.start()
    assert armed.wait(WAIT_S)
    holder[0].stop("r", interrupt=lambda: interrupted.append(True))
    thread.join(WAIT_S)
    assert outcome == ["stopped"] and interrupted == [True]


def test_what_a_worker_makes_to_live_as_long_as_it_is_left_out_of_the_collector() -> None:
    """torch's import and the compiler's make hundreds of thousands of objects that live as long as
    the worker: no collection runs while they are made (their full passes would take a noticeable
    part of a worker's start), later passes skip them (frozen), and the collector is on after.
    Garbage made before is collected, not frozen."""
    import gc
    import weakref

    from probes.engine.worker import long_lived

    collections: list[int] = []

    def count(phase: str, info: dict) -> None:
        if phase == "start":
            collections.append(info["generation"])

    class Dead:
        """A cycle nothing refers to: garbage to collect, never to keep frozen."""

    was_enabled = gc.isenabled()
    gc.enable()
    dead = Dead()
    dead.cycle = dead  # type: ignore[attr-defined]
    gone = weakref.ref(dead)
    del dead
    frozen_before = gc.get_freeze_count()
    gc.callbacks.append(count)
    try:
        with long_lived():
            collections.clear()  # the one full collection before the block
            made = [[{}] for _ in range(10_000)]  # 20,000 tracked containers: ~30 young collections' worth
        assert collections == []
        assert gone() is None
        assert gc.isenabled()
        assert gc.get_freeze_count() >= frozen_before + 2 * len(made)
    finally:
        gc.callbacks.remove(count)
        gc.unfreeze()
        if not was_enabled:
            gc.disable()
