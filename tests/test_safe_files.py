"""probes.link.safe_files: a file the user names is read only when it is a regular file of bounded
size; a FIFO, a device, a socket, a directory or a huge file is refused in one plain line, at
once (the whole module runs under a 10 s timeout: a blocking open or an endless read fails it)."""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from probes.link import safe_files
from probes.link.safe_files import REPORT_LIMIT_BYTES, UnreadableFile, read_user_bytes, read_user_file

pytestmark = pytest.mark.timeout(10)


def refusal(path: str | Path, limit: int = REPORT_LIMIT_BYTES) -> str:
    with pytest.raises(UnreadableFile) as caught:
        read_user_file(path, limit, "the report")
    message = str(caught.value)
    assert message.startswith("the report ") and "\n" not in message and "Errno" not in message, message
    return message


@pytest.fixture
def unix_socket(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "s.sock"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen(1)
    try:
        yield path
    finally:
        server.close()


def test_a_regular_file_is_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "report.json"
    path.write_text('{"é": 1}\n', encoding="utf-8")
    assert read_user_file(path, REPORT_LIMIT_BYTES, "the report") == '{"é": 1}\n'
    assert read_user_bytes(str(path), 11, "the report") == '{"é": 1}\n'.encode()


def test_a_symlink_is_followed(tmp_path: Path) -> None:
    target = tmp_path / "real.json"
    target.write_text("{}")
    link = tmp_path / "link.json"
    link.symlink_to(target)
    assert read_user_file(link, REPORT_LIMIT_BYTES, "the report") == "{}"
    fifo_link = tmp_path / "fifo-link"
    os.mkfifo(tmp_path / "fifo")
    fifo_link.symlink_to(tmp_path / "fifo")
    assert "is a FIFO (named pipe), not a regular file" in refusal(fifo_link)


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fifo")
    assert "is a FIFO (named pipe), not a regular file" in refusal(tmp_path / "fifo")


def test_a_fifo_put_in_place_after_the_check_is_refused_on_the_open_descriptor(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The path is a regular file when checked and a FIFO when opened: the open does not wait for
    a writer, and the descriptor's own stat refuses it."""
    regular = tmp_path / "regular"
    regular.write_text("x")
    os.mkfifo(tmp_path / "fifo")
    checked = os.stat(regular)
    monkeypatch.setattr(safe_files.os, "stat", lambda path: checked)
    assert "is a FIFO (named pipe), not a regular file" in refusal(tmp_path / "fifo")


def test_dev_zero_is_refused_before_it_is_read() -> None:
    assert "is a character device, not a regular file" in refusal("/dev/zero")


def test_a_socket_is_refused(unix_socket: Path) -> None:
    assert "is a socket, not a regular file" in refusal(unix_socket)


def test_a_directory_is_refused(tmp_path: Path) -> None:
    assert "is a directory, not a regular file" in refusal(tmp_path)


def test_a_sparse_file_of_a_gigabyte_is_refused_before_it_is_read(tmp_path: Path) -> None:
    path = tmp_path / "huge.json"
    with open(path, "wb") as handle:
        handle.truncate(1 << 30)
    assert "is 1,024.0 MiB: over the 16.0 MiB limit" in refusal(path)


def test_a_file_longer_than_its_size_says_is_read_only_up_to_the_limit() -> None:
    """/proc files say they are empty and are not: the read is bounded all the same."""
    assert "grew past the 16 bytes limit while it was read" in refusal("/proc/self/maps", limit=16)


def test_a_missing_file_says_so(tmp_path: Path) -> None:
    with pytest.raises(UnreadableFile) as caught:
        read_user_file(tmp_path / "nope.json", REPORT_LIMIT_BYTES, "the workspace")
    assert caught.value.missing and str(caught.value) == f"the workspace {tmp_path / 'nope.json'}: no such file"
    assert isinstance(caught.value, OSError)


def test_text_that_is_not_utf8_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "latin1.json"
    path.write_bytes(b'{"a": "\xe9"}')
    assert "is not UTF-8 text (at byte offset 7)" in refusal(path)


def test_a_path_with_control_characters_is_named_inertly(tmp_path: Path) -> None:
    path = tmp_path / "x\x1b]0;PWN\x07"
    path.mkdir()
    message = refusal(path)
    assert "\x1b" not in message and "\x07" not in message
