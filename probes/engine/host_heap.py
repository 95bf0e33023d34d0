"""glibc's malloc thresholds fixed where a long-running process's own adjustment takes them.

glibc gives freed memory at the top of its heap back to the system once more than a trim
threshold is free there, and serves requests above an mmap threshold with a mapping of their own,
unmapped when freed. Both start low (128 kB) and rise as the process frees large blocks, so
whether a CPU call's outputs are reused or given back, and faulted in again by the next call
(most of a microsecond a 4 kB page), depends on what the process did before; a profile's own
allocations between the outputs tip it either way. Eager rows of ``(a + b).relu()`` at 1e6 then
read ten times slower in one worker than in the next, each with a tight spread
(``benchmarks/cpu_page_faults.py``). Fixed at glibc's largest dynamic mmap threshold (32 MB: a
larger tensor is mapped and unmapped with every call, in a user's loop as here) and a trim
threshold of 256 MB, a repeated call reuses what the last one freed.

A fast path (``probes.link.fast_paths``): without it, the thresholds move as glibc moves them,
and the profiled reps that fault in pages are left out (``probes.engine.timing``).
"""

from __future__ import annotations

import ctypes
import functools
import os

from probes.link import fast_paths

M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD_BYTES = 32 * 1024 * 1024
"""glibc's DEFAULT_MMAP_THRESHOLD_MAX on 64-bit: as high as its own adjustment goes."""
TRIM_THRESHOLD_BYTES = 256 * 1024 * 1024
"""Freed memory a process keeps at most: eight of the largest heap blocks."""


def _glibc() -> bool:
    try:
        return (os.confstr("CS_GNU_LIBC_VERSION") or "").startswith("glibc")
    except (AttributeError, ValueError, OSError):  # no confstr, or a libc that does not know the name
        return False


def pin_malloc_thresholds() -> bool:
    """Fix both thresholds (the first call of a process does; glibc only, with the fast paths on).
    True where they are fixed."""
    return fast_paths.enabled("host_heap") and _pin()


@functools.cache
def _pin() -> bool:
    if not _glibc():
        return False
    libc = ctypes.CDLL(None)
    return bool(libc.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES)) and bool(
        libc.mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD_BYTES)
    )
