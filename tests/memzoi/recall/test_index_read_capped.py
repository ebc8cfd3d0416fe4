"""The index's bounded file read: the whole file in one read when its size is known, every byte when it grew
since the fstat, never more than the cap (recall/index/rows.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from git_memzoi.memzoi.recall.index import rows


def _read(path: Path, size: int, cap: int, monkeypatch: pytest.MonkeyPatch) -> tuple[bytes, int]:
    calls: list[int] = []
    real = os.read

    def counting(fd: int, n: int) -> bytes:
        calls.append(n)
        return real(fd, n)

    monkeypatch.setattr(rows.os, "read", counting)
    fd = os.open(path, os.O_RDONLY)
    try:
        return rows._read_capped(fd, size, cap), len(calls)
    finally:
        os.close(fd)


def test_a_file_of_known_size_takes_one_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "r.md"
    path.write_bytes(b"x" * 1000)
    assert _read(path, 1000, 256 * 1024, monkeypatch) == (b"x" * 1000, 1)


def test_a_file_that_grew_is_read_to_its_end_or_the_cap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "r.md"
    path.write_bytes(b"y" * 200_000)
    data, calls = _read(path, 10, 256 * 1024, monkeypatch)  # the fstat said 10 bytes
    assert (data, calls) == (b"y" * 200_000, 5)  # 11 bytes, then 64 KiB chunks until the short one
    assert _read(path, 10, 1000, monkeypatch)[0] == b"y" * 1000  # never past the cap
    empty = tmp_path / "e.md"
    empty.write_bytes(b"")
    assert _read(empty, 0, 1000, monkeypatch) == (b"", 1)
