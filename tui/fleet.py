"""The devices the app measures side by side (``--device cpu,b:cpu``): one worker bridge per entry,
and the one place a request goes out to all of them.

The live session (``tui.session.LiveSession``) decides once what to measure and where;
``DeviceFleet.send`` hands a request to the entries it names, its device swapped for each entry's,
under the same id (each entry has workers of its own, so ids never clash), and ``cancel`` stops it
everywhere. Each bridge tags its messages with its entry (``tui.bridge.FromEntry``): the lead's
(the first entry whose worker is ready) feed the session's loop as a single device always has, the
others' are kept per entry (``LiveSession.on_entry_event``). So a first box that cannot be reached
holds up no other, and gets what it lacks once it answers. With one entry the fleet is that
entry's bridge and nothing more.
"""

from __future__ import annotations

import asyncio
import dataclasses
from typing import TYPE_CHECKING, Any

from probes.link.protocol import ProfileRequest, WarmupRequest
from probes.link.settings import DeviceEntry
from probes.link.worker_process import EarlyWorker
from tui.bridge import WorkerBridge
from tui.device_entries import entry_names

if TYPE_CHECKING:
    from textual.app import App
    from textual.message_pump import MessagePump


class DeviceFleet:
    """The bridges of the device entries, first one first (see the module doc)."""

    def __init__(
        self,
        host: App[Any],
        entries: list[DeviceEntry],
        hosts: dict[str, str],
        command: list[str] | str | None,
        *,
        early: EarlyWorker | None = None,
        early_compiler: EarlyWorker | None = None,
        compile_worker: bool | None = None,
        listener: MessagePump | None = None,
    ) -> None:
        """``command`` starts this machine's workers (entries without a host); a host's entry
        starts its worker with that host's command. The workers started at launch go to the first
        entry of this machine, or are killed where every entry is a host's."""
        self.entries = entries
        self.names = entry_names(entries)
        self.bridges: list[WorkerBridge] = []
        for index, entry in enumerate(entries):
            local = entry.host is None
            adopts = local and not any(e.host is None for e in entries[:index])
            self.bridges.append(
                WorkerBridge(
                    host,
                    command if local else hosts[entry.host or ""],
                    early=early if adopts else None,
                    early_compiler=early_compiler if adopts else None,
                    compile_worker=compile_worker if local else False,
                    listener=listener,
                    entry=index,
                )
            )
        if all(entry.host is not None for entry in entries):
            for worker in (early, early_compiler):
                if worker is not None:
                    worker.kill()

    @property
    def first(self) -> WorkerBridge:
        """The first entry's bridge: the one a single device has."""
        return self.bridges[0]

    @property
    def several(self) -> bool:
        return len(self.bridges) > 1

    def start(self, entry: int | None = None) -> None:
        """Start every entry's workers at once (or ``entry``'s alone), each in its own task."""
        for index, bridge in enumerate(self.bridges):
            if entry in (None, index):
                bridge.start()

    def send(
        self,
        request: ProfileRequest | WarmupRequest,
        entries: tuple[int, ...] = (0,),
        reply_to: MessagePump | None = None,
    ) -> None:
        """``request`` to each of ``entries``, on that entry's device (the first's is the
        request's own: the settings' device); its events to ``reply_to`` (default: the listener)."""
        for index in entries:
            device = self.entries[index].device
            self.bridges[index].send(request if index == 0 else dataclasses.replace(request, device=device), reply_to)

    def cancel(self, request_id: str) -> None:
        for bridge in self.bridges:
            bridge.cancel(request_id)

    def kill(self) -> None:
        for bridge in self.bridges:
            bridge.kill()

    async def close(self) -> None:
        """Every entry's workers gone (each bridge waits its short while, all at once)."""
        await asyncio.gather(*(bridge.close() for bridge in self.bridges))
