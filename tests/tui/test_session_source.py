"""The live loop on a function of the user's file: each version of the file is a text of its own,
measured as an edit of a chain is, with the file named in every request."""

from __future__ import annotations

from probes.link.protocol import ProfileRequest, SourceRef, WorkerReady
from probes.link.settings import Settings
from tui.screens.source_follow import source_key
from tui.session import Cancel, LiveSession, Send

REF = SourceRef("/home/me/model.py", "block", ["x: [N, 64]"])
READY = WorkerReady(pid=1, torch_version="2.13", devices=[], default_device="cpu", protocol=3)


def sent(effects: list) -> list[ProfileRequest]:
    return [e.request for e in effects if isinstance(e, Send) and isinstance(e.request, ProfileRequest)]


def test_a_new_version_of_the_file_is_sent_with_the_file_and_cancels_the_last() -> None:
    session = LiveSession(Settings(modes=("eager",)))
    session.source = REF
    session.worker_ready(READY, 0.0)
    (first,) = sent(session.edit(source_key(REF, "v1"), 1.0))
    assert first.source == REF and first.chain == source_key(REF, "v1")
    assert session.parse_error is None  # a file's errors are the worker's to say
    effects = session.edit(source_key(REF, "v2"), 2.0)
    (second,) = sent(effects)
    assert Cancel(first.id) in effects and second.source == REF


def test_the_same_version_again_is_not_measured_again() -> None:
    session = LiveSession(Settings(modes=("eager",)))
    session.source = REF
    session.worker_ready(READY, 0.0)
    assert sent(session.edit(source_key(REF, "v1"), 1.0))
    assert not sent(session.edit(source_key(REF, "v1"), 1.5))
