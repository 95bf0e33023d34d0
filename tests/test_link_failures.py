"""The client names the cause when the link to its worker fails, from the current attempt only,
and never claims a restart that has not happened. Stand-in link commands (a few lines of Python,
no torch) play the worker: one that answers nothing, one that ssh refuses, one that is stopped."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

import pytest

from probes.link.client import StartFailed, WorkerClient
from probes.link.protocol import PROTOCOL_VERSION, ProfileRequest, RequestDone, RequestFailed, WorkerReady, encode

READY = encode(WorkerReady(pid=1, torch_version="2.0", devices=[], default_device="cpu", protocol=PROTOCOL_VERSION))
SILENT = f"import signal, sys\nprint({READY!r}, flush=True)\nsys.stdin.readline()\nsignal.pause()\n"
"""A worker that says it is ready, takes a request and answers nothing (a link that froze)."""
REFUSED = "ssh: connect to host x port 22: Connection refused"


def refusing(tmp_path: Path) -> list[str]:
    """A link command that fails as ssh does when the host refuses, saying which try it is."""
    count = tmp_path / "tries"
    script = (
        "import pathlib, sys\n"
        f"count = pathlib.Path({str(count)!r})\n"
        "n = len(count.read_text()) + 1 if count.exists() else 1\n"
        "count.write_text('x' * n)\n"
        f"print(f'try {{n}}: {REFUSED}', file=sys.stderr)\n"
        "sys.exit(255)\n"
    )
    return [sys.executable, "-c", script]


def request(client: WorkerClient) -> ProfileRequest:
    return ProfileRequest(client.new_id(), "(a + b).relu()", sizes=[1000], modes=["eager"], device="cpu")


async def collect(client: WorkerClient, req: ProfileRequest) -> list:
    return [event async for event in client.request(req)]


async def test_a_refused_link_says_the_connection_failed_with_this_attempts_words_only(tmp_path: Path) -> None:
    states: list[tuple[str, str]] = []
    client = WorkerClient(refusing(tmp_path), on_state=lambda state, detail: states.append((state, detail)))
    try:
        for attempt in (1, 2, 3):
            with pytest.raises(StartFailed) as failed:
                await client.start()
            message = str(failed.value)
            assert message == f"the connection failed (ssh exit 255): try {attempt}: {REFUSED}"
            assert not failed.value.permanent
            assert states[-1] == ("failed", message)  # said as the state too: never left "starting"
    finally:
        await client.close()


async def test_a_request_while_the_last_start_failed_fails_at_once_without_a_start(tmp_path: Path) -> None:
    """The caller decides when to try again (the app backs off): a request does not start the
    worker behind its back."""
    client = WorkerClient(refusing(tmp_path))
    try:
        with pytest.raises(StartFailed):
            await client.start()
        events = await collect(client, request(client))
        (failure,) = [e for e in events if isinstance(e, RequestFailed)]
        assert failure.error.kind == "link" and "the worker is not running" in failure.error.message
        assert isinstance(events[-1], RequestDone) and len((tmp_path / "tries").read_text()) == 1
    finally:
        await client.close()


async def test_a_command_that_cannot_run_is_given_up_at_once() -> None:
    states: list[str] = []
    client = WorkerClient([sys.executable, "-c", "import sys; sys.exit(127)"], on_state=lambda s, _: states.append(s))
    try:
        with pytest.raises(StartFailed) as failed:
            await client.start()
        assert failed.value.permanent and states[-1] == "stopped"
        assert "could not be run (exit 127)" in str(failed.value)
    finally:
        await client.close()


async def test_a_link_command_that_stops_answering_is_the_links_fault_not_the_chains() -> None:
    states: list[tuple[str, str]] = []
    client = WorkerClient(
        [sys.executable, "-c", SILENT], silence_s=1, on_state=lambda state, detail: states.append((state, detail))
    )
    try:
        await client.start()
        events = await collect(client, request(client))
        (failure,) = [e for e in events if isinstance(e, RequestFailed)]
        assert failure.error.kind == "link"
        assert failure.error.message == "the link to the worker stopped answering (nothing for 1 s)"
        assert ("lost", failure.error.message) in states  # said before its replacement starts
        assert "restart" not in failure.error.message  # whether it worked is the states' to say
        assert client.state == "ready" and client.restarts == 1
    finally:
        await client.close()


async def test_a_stopped_link_is_said_stopped() -> None:
    client = WorkerClient([sys.executable, "-c", SILENT], silence_s=1)
    try:
        await client.start()
        assert client.pid is not None
        os.killpg(client.pid, signal.SIGSTOP)
        events = await collect(client, request(client))
        (failure,) = [e for e in events if isinstance(e, RequestFailed)]
        assert failure.error.kind == "link"
        assert failure.error.message == "the link to the worker was stopped (SIGSTOP) and sent nothing for 1 s"
    finally:
        await client.close()


async def test_a_link_that_drops_in_a_request_is_lost_with_ssh_s_words_then_replaced(tmp_path: Path) -> None:
    """ssh ends with 255 when its connection drops: the request fails as the link's, and a new
    worker is started."""
    dropped = tmp_path / "dropped"
    script = (
        "import pathlib, sys\n"
        f"dropped = pathlib.Path({str(dropped)!r})\n"
        f"print({READY!r}, flush=True)\n"
        "if not dropped.exists():\n"
        "    sys.stdin.readline(); dropped.touch()\n"
        "    print('Connection to x closed by remote host.', file=sys.stderr); sys.exit(255)\n"
        "import signal; signal.pause()\n"
    )
    states: list[str] = []
    client = WorkerClient([sys.executable, "-c", script], on_state=lambda state, _: states.append(state))
    try:
        await client.start()
        events = await asyncio.wait_for(collect(client, request(client)), 30)
        (failure,) = [e for e in events if isinstance(e, RequestFailed)]
        assert failure.error.kind == "link"
        assert failure.error.message == (
            "the connection failed (ssh exit 255) (last words: Connection to x closed by remote host.)"
        )
        assert states[-4:] == ["lost", "restarting", "starting", "ready"]
    finally:
        await client.close()
