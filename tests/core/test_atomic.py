"""Atomic writes keep the old file on failure; the lifecycle lock is re-entrant within one process."""

from __future__ import annotations

from pathlib import Path

import pytest

from git_memzoi.core import atomic


def test_nested_lifecycle_lock_does_not_deadlock(tmp_path: Path) -> None:
    lock = tmp_path / "local" / "lifecycle.lock"
    with (
        atomic.lifecycle_lock(lock, timeout_s=1, root=tmp_path),
        atomic.lifecycle_lock(lock, timeout_s=1, root=tmp_path),
    ):
        (tmp_path / "inside").write_text("ok")
    assert (tmp_path / "inside").read_text() == "ok"


def test_a_failed_write_leaves_the_old_bytes_and_no_temp_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "record.md"
    target.write_bytes(b"old\n")

    def broken_replace(src: str, dst: str, **dir_fds: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(atomic.os, "replace", broken_replace)
    with pytest.raises(OSError):
        atomic.write_bytes_atomic(target, b"new\n", root=tmp_path)
    assert target.read_bytes() == b"old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["record.md"]


def test_another_process_waits_then_times_out(tmp_path: Path) -> None:
    import subprocess
    import sys
    import time

    from git_memzoi.errors import ToolError

    lock = tmp_path / "lifecycle.lock"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import fcntl, os, sys, time; fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT);"
            " fcntl.flock(fd, fcntl.LOCK_EX); print('held', flush=True); time.sleep(5)",
            str(lock),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        started = time.monotonic()
        with pytest.raises(ToolError) as caught, atomic.lifecycle_lock(lock, timeout_s=0.3, root=tmp_path):
            pass
        assert caught.value.code == "lock_timeout"
        assert time.monotonic() - started >= 0.3
    finally:
        holder.kill()
        holder.wait()
    with atomic.lifecycle_lock(lock, timeout_s=1, root=tmp_path):  # free again once the holder is gone
        pass


def test_another_thread_is_excluded_not_reentered(tmp_path: Path) -> None:
    import threading

    from git_memzoi.errors import ToolError

    lock = tmp_path / "lifecycle.lock"
    outcome: list[str] = []

    def other() -> None:
        try:
            with atomic.lifecycle_lock(lock, timeout_s=0.2, root=tmp_path):
                outcome.append("entered")
        except ToolError as exc:
            outcome.append(exc.code)

    with atomic.lifecycle_lock(lock, timeout_s=1, root=tmp_path):
        thread = threading.Thread(target=other)
        thread.start()
        thread.join()
    assert outcome == ["lock_timeout"]


def test_a_record_write_is_fsynced_and_a_cache_write_is_not(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    synced: list[int] = []
    real_fsync = atomic.os.fsync
    monkeypatch.setattr(atomic.os, "fsync", lambda fd: (synced.append(fd), real_fsync(fd))[1])
    atomic.write_bytes_atomic(tmp_path / "record.md", b"claim\n", root=tmp_path)
    assert len(synced) == 2  # the temporary file, then its folder after the rename
    synced.clear()
    cache = tmp_path / "git" / "memzoi" / "cache" / "answer.bin"
    atomic.write_cache(cache, b"derived")
    atomic.write_cache(cache, b"derived again")  # replaced atomically, still without a sync
    assert synced == []
    assert cache.read_bytes() == b"derived again"
    assert sorted(p.name for p in cache.parent.iterdir()) == ["answer.bin"]  # no temporary file left


def _fsyncs(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    real = atomic.os.fsync
    monkeypatch.setattr(atomic.os, "fsync", lambda fd: calls.append(fd) or real(fd))
    return calls


def test_a_batch_writes_what_single_writes_write_with_one_folder_fsync_each(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os
    import stat

    single, batch = tmp_path / "single", tmp_path / "batch"
    for root in (single, batch):
        (root / "records").mkdir(parents=True)
        (root / "records" / "kept.md").write_bytes(b"old\n")
        os.chmod(root / "records" / "kept.md", 0o640)
    names = [("records", "kept.md"), ("records", "a.md"), ("records", "b.md"), ("resolved/applied", "p.md")]
    fsyncs = _fsyncs(monkeypatch)
    for folder, name in names:
        atomic.write_bytes_atomic(single / folder / name, f"{name}\n".encode(), root=single, parents=True)
    assert len(fsyncs) == 2 * len(names)  # each file and its folder
    fsyncs.clear()
    atomic.write_many_atomic(
        [(batch / folder / name, f"{name}\n".encode()) for folder, name in names], root=batch, parents=True
    )
    assert len(fsyncs) == len(names) + 2  # each file, then each of the two folders once

    def picture(root: Path) -> dict[str, tuple[bytes, int]]:
        return {
            p.relative_to(root).as_posix(): (p.read_bytes(), stat.S_IMODE(p.stat().st_mode))
            for p in sorted(root.rglob("*"))
            if p.is_file()
        }

    assert picture(batch) == picture(single)  # same bytes, the kept file's mode kept, no temporary file left
    assert picture(batch)["records/kept.md"] == (b"kept.md\n", 0o640)


def test_a_batch_refuses_a_symlink_and_writes_nothing_through_it(tmp_path: Path) -> None:
    from git_memzoi.core.confine import UnsafePath

    root, outside = tmp_path / "repo", tmp_path / "outside"
    (root / "records").mkdir(parents=True)
    outside.mkdir()
    (outside / "victim").write_bytes(b"keep\n")
    (root / "records" / "link.md").symlink_to(outside / "victim")
    with pytest.raises(UnsafePath):
        atomic.write_many_atomic(
            [(root / "records" / "a.md", b"a\n"), (root / "records" / "link.md", b"evil\n")], root=root
        )
    assert (outside / "victim").read_bytes() == b"keep\n"
    (root / "linked").symlink_to(outside, target_is_directory=True)
    with pytest.raises(UnsafePath):
        atomic.write_many_atomic([(root / "linked" / "x.md", b"x\n")], root=root, parents=True)
    assert sorted(p.name for p in outside.iterdir()) == ["victim"]
    with pytest.raises(UnsafePath):  # not a plain name in its folder: the single writer's own checks refuse it
        atomic.write_many_atomic([(root / "records" / ".git", b"x\n")], root=root)
    with pytest.raises(UnsafePath):
        atomic.write_many_atomic([(root / "records" / ".." / ".." / "escape.md", b"x\n")], root=root)
    assert not (tmp_path / "escape.md").exists()
