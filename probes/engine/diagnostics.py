"""What torch says while a chain is measured, kept for the result instead of the user's terminal.

Dynamo and Inductor report through Python warnings and through loggers with handlers of their own
(``torch._dynamo hit config.recompile_limit (8)`` is a log record, not a warning). Inside
``capturing()`` both land in a list of one-line messages that goes into
``Measurement.diagnostics``; on leaving, the warning filters and the loggers' handlers are exactly
as they were.
"""

from __future__ import annotations

import contextlib
import logging
import warnings
from collections.abc import Iterator

MAX_MESSAGES = 20
MAX_CHARS = 300

KNOWN_NOISE = (
    "Profiler clears events",
    "Failed to initialize NumPy",
    "TORCH_CUDA_ARCH_LIST",
)
"""Messages about the tool's own set-up, not about the chain (torch's deprecation notices about
its own internals are dropped too)."""


class Diagnostics(list[str]):
    """One-line messages in order of arrival, without repeats or known noise."""

    def add(self, text: str) -> None:
        line = next((part.strip() for part in str(text).splitlines() if part.strip()), "")
        if not line or any(noise in line for noise in KNOWN_NOISE):
            return
        line = line[:MAX_CHARS]
        if line not in self and len(self) < MAX_MESSAGES:
            self.append(line)


class _Collect(logging.Handler):
    def __init__(self, sink: Diagnostics) -> None:
        super().__init__(logging.WARNING)
        self.sink = sink

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.sink.add(record.getMessage())
        except Exception:
            self.handleError(record)


class _TorchLoggers:
    """torch's loggers, listed again only when a logger has been made since (loggers are never
    removed): listing the hundreds of them by name takes about a millisecond, twice in every
    request."""

    def __init__(self) -> None:
        self._known = -1
        self._loggers: list[logging.Logger] = []

    def printing(self) -> list[logging.Logger]:
        """Those that print by themselves (they have handlers; most do not propagate)."""
        registry = logging.Logger.manager.loggerDict
        if len(registry) != self._known:
            self._known = len(registry)
            names = [name for name in list(registry) if name == "torch" or name.startswith("torch.")]
            self._loggers = [logging.getLogger(name) for name in names]
        return [logger for logger in self._loggers if logger.handlers]


_torch_loggers = _TorchLoggers()


@contextlib.contextmanager
def capturing(sink: Diagnostics | None = None) -> Iterator[Diagnostics]:
    """Within the block, warnings and torch's log records (WARNING and up) go to the yielded list."""
    sink = sink if sink is not None else Diagnostics()
    collect = _Collect(sink)
    swapped = [(logger, logger.handlers[:]) for logger in _torch_loggers.printing()]
    for logger, _ in swapped:
        logger.handlers = [collect]
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                yield sink
            finally:
                for warning in caught:
                    if not issubclass(warning.category, (DeprecationWarning, PendingDeprecationWarning)):
                        sink.add(str(warning.message))
    finally:
        for logger, handlers in swapped:
            logger.handlers = handlers
