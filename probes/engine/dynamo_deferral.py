"""Meta runs that do not import Dynamo: a worker's first eager rows without Dynamo's import.

torch wraps hundreds of its own Python functions (among them the meta kernel of ``a + b``) in a
wrapper that imports Dynamo the first time each of them is called, to mark it as not to be
compiled. So the memory guard's first meta run imported Dynamo, most of a second before the first
eager rows, in a worker that may never compile (the eager worker of a pair never does).

The mark only matters while Dynamo compiles, which it cannot do before it is imported. So, in the
worker, each such function is first given a stand-in for its mark that calls it straight through
while Dynamo is not imported, and puts the real mark in place once it is
(``defer_dynamo_import``); before the worker's first compile the stand-ins are taken away
(``end_dynamo_deferral``), so that a compile meets torch exactly as torch left it.

A fast path (``probes.link.fast_paths``); how torch marks its functions is its own
(``probes.engine.torch_compat.defer_dynamo_marks``): where a torch version does it otherwise,
nothing is deferred and the meta run imports Dynamo.
"""

from __future__ import annotations

import gc

from probes.engine import torch_compat
from probes.link import fast_paths


def defer_dynamo_import() -> int:
    """Give each of torch's Dynamo-marked functions a stand-in mark; how many have one."""
    if not fast_paths.enabled("dynamo_deferral") or torch_compat.dynamo_imported():
        return 0
    return torch_compat.defer_dynamo_marks(gc.get_objects())


def end_dynamo_deferral() -> None:
    """Take the stand-ins away (before a compile): each function gets its real mark on its next
    call, as torch does it."""
    torch_compat.end_dynamo_marks()
