"""Which chains have run here: a chain read from a workspace file runs only once the user has seen
it and confirmed it (ctrl+r, or an edit), unless it ran in this app before; and which ``--host``
commands were given here: a workspace file's host is started only if its command was.

A chain is code: a workspace file shared by someone else could hold one that hangs the worker or
is built to probe it. The hashes of the chains that ran (whitespace-insensitive) are kept in
``trusted_chains.json`` in the user's state directory (0600); the app's seed chains and a chain
given on the command line count as confirmed. No torch, no textual.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from probes.chain.matching import normalize
from probes.link.state_files import user_state_dir, write_private_file
from tui.debug_log import log_error
from tui.workspace import SEED_CHAINS

TRUST_FILE = "trusted_chains.json"
KEEP = 2000
"""The newest hashes kept."""


def chain_hash(text: str) -> str:
    return hashlib.sha256(normalize(text).encode()).hexdigest()


def host_hash(name: str, command: str) -> str:
    """A ``--host`` box's command, as given (a command is code too: a workspace file may name one)."""
    return hashlib.sha256(f"host {name}={command}".encode()).hexdigest()


def _default_path() -> Path | None:
    try:
        return user_state_dir() / TRUST_FILE
    except OSError:  # said by the workspace, which is read-only then
        return None


class TrustedChains:
    def __init__(self, path: Path | None = None) -> None:
        self.path = path or _default_path()
        """None: the state directory cannot be used; chains confirmed now are asked again next time."""
        try:
            loaded = json.loads(self.path.read_text(encoding="utf-8")) if self.path else []
        except (OSError, ValueError):
            loaded = []
        self.hashes: list[str] = [h for h in loaded if isinstance(h, str)] if isinstance(loaded, list) else []
        self._known = set(self.hashes) | {chain_hash(text) for _, text in SEED_CHAINS}

    def knows(self, text: str) -> bool:
        return not text.strip() or chain_hash(text) in self._known

    def knows_host(self, name: str, command: str) -> bool:
        """Whether the box ``name`` reached by ``command`` was given on a command line here."""
        return host_hash(name, command) in self._known

    def add_host(self, name: str, command: str) -> None:
        """Remember a ``--host`` given on the command line: its workspace may start it next time."""
        self._remember(host_hash(name, command))

    def add(self, text: str) -> None:
        """Remember ``text`` as confirmed (it is written at once: a crash must not forget it)."""
        self._remember(chain_hash(text))

    def _remember(self, digest: str) -> None:
        if digest in self._known:
            return
        self._known.add(digest)
        self.hashes = [*self.hashes, digest][-KEEP:]
        if self.path is None:
            return
        try:
            write_private_file(self.path, json.dumps(self.hashes))
        except OSError as exc:  # not remembered across runs: the chain asks again next time, nothing worse
            log_error(None, f"remembering a confirmed chain in {self.path}", exc)
