"""Atomic writes keep the old file on failure; the lifecycle lock is re-entrant within one process."""

from __future__ import annotations

from pathlib import Path

import pytest

from git_memzoi.core import atomic


def test_nested_lifecycle_lock_does_not_deadlock(tmp_path: Path) -> None:
    lock = tmp_path / "local" / "lifecycle.lock"
    with atomic.lifecycle_lock(lock, timeout_s=1), atomic.lifecycle_lock(lock, timeout_s=1):
        (tmp_path / "inside").write_text("ok")
    assert (tmp_path / "inside").read_text() == "ok"


def test_a_failed_write_leaves_the_old_bytes_and_no_temp_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "record.md"
    target.write_bytes(b"old\n")

    def broken_replace(src: str, dst: str) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(atomic.os, "replace", broken_replace)
    with pytest.raises(OSError):
        atomic.write_bytes_atomic(target, b"new\n")
    assert target.read_bytes() == b"old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["record.md"]
