"""Which devices the app starts: the entries given on the command line or kept in the workspace,
less those of a host never confirmed here, and whether a sweep is shared out among them. Light (no
worker link), so that the app checks them before its first frame and refuses a bad one in one
line."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from probes.link.safe_text import inert
from probes.link.settings import DeviceEntry, SettingError, check_spread

if TYPE_CHECKING:
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
