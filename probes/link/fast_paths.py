"""The one switch for kernel-tui's start-up and latency tricks.

Each trick (a bytecode cache for the worker's imports, a deferred Dynamo import, a lighter
profiler range, ...) trades plain code for time a user feels: the first frame, the first rows,
an edit's rows, quit. Every one of them asks ``enabled()`` and takes its plain path when the switch
is off, so that the latency benchmark can measure what each still saves and a test can check that
the plain paths give the same kernels, counts and bytes.

``KERNEL_TUI_FAST_PATHS=0`` turns every trick off; anything else, or no value, leaves them on. The
worker inherits the variable from the app, so one setting covers both processes.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

ENV = "KERNEL_TUI_FAST_PATHS"


def enabled(env: Mapping[str, str] | None = None) -> bool:
    """Whether the start-up and latency tricks are on, in this process's environment or in ``env``
    (a worker's, before it starts). Read each time: tests flip it."""
    return (os.environ if env is None else env).get(ENV, "1").strip() != "0"
