"""When two chain texts are the same chain: the app's cache, its trusted chains, its workspace and
the replay worker all match chains this way. Light (no imports), so that the app's first frame
can use it."""

from __future__ import annotations


def normalize(chain: str) -> str:
    """Chains that differ only in whitespace are the same chain."""
    return "".join(chain.split())
