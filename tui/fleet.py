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
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from probes.link.protocol import ProfileRequest, WarmupRequest
from probes.link.safe_text import inert
from probes.link.settings import DeviceEntry, SettingError, check_spread
from probes.link.worker_process import EarlyWorker
from tui.bridge import WorkerBridge

if TYPE_CHECKING:
    from textual.app import App
    from textual.message_pump import MessagePump

    from tui.trust import TrustedChains
    from tui.workspace import Workspace


def entry_names(entries: list[DeviceEntry]) -> list[str]:
    """What the views call each entry: ``cpu``, ``b:cpu``; none for a single device, which the
    views name as they always have (by the device the worker reports)."""
    return [str(entry) for entry in entries] if len(entries) > 1 else [""]


def trusted_entries(
    workspace: Workspace,
    trust: TrustedChains,
    devices: list[DeviceEntry] | None,
    hosts: Mapping[str, str] | None,
    notices: list[str],
) -> list[DeviceEntry]:
    """The device entries the app starts: ``devices`` and ``hosts`` given on the command line
    (confirmed, kept in the workspace), else the workspace's, less those of a host whose command
    was never given on a command line here (a workspace file's command is code: it runs once given
    as ``--host``), said in ``notices``. SettingError: an entry of a host not defined."""
    if hosts is not None:
        workspace.hosts = dict(hosts)
        for name, command in hosts.items():
            trust.add_host(name, command)
    if devices is not None:
        workspace.take_fleet(devices, workspace.hosts)
    entries = workspace.entries()
    known = workspace.hosts
    unknown = sorted({e.host for e in entries if e.host and not trust.knows_host(e.host, known[e.host])})
    if not unknown:
        return entries
    named = ", ".join(f"{name}={known[name]!r}" for name in unknown)
    notices.append(f"the workspace's hosts {inert(named)} are not started: give --host to use them")
    kept = [entry for entry in entries if entry.host not in unknown]
    return kept or [DeviceEntry(None, workspace.settings.device)]


def spread_over(entries: list[DeviceEntry], spread: bool, given: bool, notices: list[str]) -> bool:
    """Whether a sweep is shared out among ``entries`` (``spread``: ``--spread``, or the
    workspace's): never with one entry. Entries of mixed kinds are a SettingError where ``given``
    on this command line (as ``kernel-tui profile`` says it), a line in ``notices`` where the
    workspace's."""
    if not spread or len(entries) < 2:
        return False
    try:
        check_spread(entries)
    except SettingError as exc:
        if given:
            raise SettingError(f"--spread: {exc}") from None
        notices.append(f"the workspace's --spread is off: {exc}")
        return False
    return True


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
