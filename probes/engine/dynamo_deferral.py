"""Meta runs that do not import Dynamo: a second off the worker's first eager rows.

torch wraps hundreds of its own Python functions (``torch._refs.add`` among them, which is the meta
kernel of ``a + b``) in ``torch._compile._disable_dynamo``, which imports ``torch._dynamo`` the
first time each of them is called, to mark it as not to be compiled. So the memory guard's first
meta run imported Dynamo: 0.9 s on the 2-core machine, 1.1-1.2 s on the H200 box, before the
first eager rows, in a worker that may never compile (the eager worker of a pair never does).

The mark only matters while Dynamo compiles, which it cannot do before it is imported. So, in the
worker, each such function is first given a stand-in for its mark that calls it straight through
while ``torch._dynamo`` is not imported, and puts the real mark in place once it is
(``defer_dynamo_import``); before the worker's first compile the stand-ins are taken away
(``end_dynamo_deferral``), so that a compile meets torch exactly as torch left it.

Torch keeps the mark on the function as ``__dynamo_disable``; where a torch version wraps its
functions differently, nothing is deferred (the meta run then imports Dynamo, as before).
"""

from __future__ import annotations

import gc
import sys
import types
from collections.abc import Callable
from typing import Any

MARK = "__dynamo_disable"
"""The attribute torch caches a function's Dynamo-disabled version under."""

_deferred: list[Callable[..., Any]] = []


def _call_through(fn: Callable[..., Any], recursive: bool) -> Callable[..., Any]:
    def dynamo_mark_deferred(*args: Any, **kwargs: Any) -> Any:
        if "torch._dynamo" not in sys.modules:
            return fn(*args, **kwargs)
        import torch._dynamo

        disabled = torch._dynamo.disable(fn, recursive, wrapping=False)
        setattr(fn, MARK, disabled)
        return disabled(*args, **kwargs)

    return dynamo_mark_deferred


def _wrapper_code() -> types.CodeType | None:
    """The code object every ``_disable_dynamo`` wrapper shares, if it caches its mark as expected."""
    import torch._compile

    code = torch._compile._disable_dynamo(lambda: None).__code__
    if MARK not in code.co_consts or not {"fn", "recursive"} <= set(code.co_freevars):
        return None
    return code


def defer_dynamo_import() -> int:
    """Give every ``_disable_dynamo`` wrapper of torch a stand-in mark; how many were given one."""
    if "torch._dynamo" in sys.modules:
        return 0
    code = _wrapper_code()
    if code is None:
        return 0
    for wrapper in gc.get_objects():
        if type(wrapper) is not types.FunctionType or wrapper.__code__ is not code or not wrapper.__closure__:
            continue
        cells = dict(zip(code.co_freevars, (cell.cell_contents for cell in wrapper.__closure__)))
        fn = cells["fn"]
        if getattr(fn, MARK, None) is None:
            setattr(fn, MARK, _call_through(fn, cells["recursive"]))
            _deferred.append(fn)
    return len(_deferred)


def end_dynamo_deferral() -> None:
    """Take the stand-ins away (before a compile): each function gets its real mark on its next
    call, as torch does it."""
    while _deferred:
        fn = _deferred.pop()
        mark = getattr(fn, MARK, None)
        if getattr(mark, "__name__", "") == "dynamo_mark_deferred":
            delattr(fn, MARK)
