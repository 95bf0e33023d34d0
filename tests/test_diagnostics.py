"""What torch logs during a measurement lands in its diagnostics, from loggers made at any time."""

from __future__ import annotations

import io
import logging
import uuid

from probes.engine.diagnostics import capturing


def _printing_logger(name: str) -> tuple[logging.Logger, io.StringIO]:
    logger = logging.getLogger(name)
    out = io.StringIO()
    logger.addHandler(logging.StreamHandler(out))
    logger.propagate = False
    return logger, out


def test_torch_loggers_made_or_given_a_handler_after_a_capture_are_captured_too() -> None:
    """The loggers are listed again only when one has been made since: a logger made after the
    first capture, and one that only later got a handler of its own, must still be caught."""
    late_handler = logging.getLogger(f"torch._kt_test_late_handler_{uuid.uuid4().hex}")
    with capturing():
        pass
    made_after, made_after_out = _printing_logger(f"torch._kt_test_made_after_{uuid.uuid4().hex}")
    late_handler.addHandler(logging.StreamHandler(late_out := io.StringIO()))
    late_handler.propagate = False
    with capturing() as caught:
        made_after.warning("from a logger made after the first capture")
        late_handler.warning("from a logger given a handler after the first capture")
    assert caught == [
        "from a logger made after the first capture",
        "from a logger given a handler after the first capture",
    ]
    assert made_after_out.getvalue() == "" and late_out.getvalue() == ""
    made_after.warning("printed again")
    assert made_after_out.getvalue() == "printed again\n"
