"""``model.py:block`` on a command line: a function of the user's own file, not a chain.

Torch-free: the app and ``kernel-tui profile`` read the spec; only the worker imports the file
(probes.engine.user_source). A chain can never look like one (``x.py:f`` is an annotated
assignment, which the chain language refuses), so the two never clash.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from probes.link.protocol import SourceRef

_SPEC = re.compile(r"(?P<path>[^\n]+\.py):(?P<name>[A-Za-z_][A-Za-z0-9_]*)", re.ASCII)


def parse_source_spec(text: str | None, inputs: list[str] | None = None) -> SourceRef | None:
    """The file and name ``text`` names (``path/to/model.py:block``), with the ``--input``
    declarations, or None when ``text`` is not such a spec (a chain)."""
    match = _SPEC.fullmatch(text.strip()) if text else None
    if match is None:
        return None
    from probes.link.protocol import SourceRef  # the messages' module: only for a spec (off the app's first frame)

    return SourceRef(match["path"], match["name"], list(inputs or []))
