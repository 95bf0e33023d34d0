"""The error every part of the chain language raises: a module of its own, so that the allow-list
(probes.chain.expr) and the run-time caps (probes.chain.limits) share it without importing each other."""

from __future__ import annotations

from probes.link.protocol import ChainErrorInfo


class ChainError(Exception):
    """A chain that cannot run, with the reason in plain words (``str()`` is ``info.located()``)."""

    def __init__(self, info: ChainErrorInfo) -> None:
        super().__init__(info)  # args=(info,) so the exception pickles back whole
        self.info = info

    def __str__(self) -> str:
        return self.info.located()
