"""Every writer of :mod:`git_memzoi.core.atomic` stays below its root and never follows a symlink (issue 13); temporary
files live where git never lists them; a lock timeout names its holder."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from git_memzoi.core import atomic, scratch
from git_memzoi.core.confine import UnsafePath, confined
from git_memzoi.errors import InputError, ToolError
from tests.support.repos import Repo


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "bashrc").write_bytes(b"export PATH=/usr/bin\n")
    return folder


def snapshot(folder: Path) -> dict[str, bytes | str]:
    return {
        p.relative_to(folder).as_posix(): (os.readlink(p) if p.is_symlink() else p.read_bytes() if p.is_file() else "/")
        for p in sorted(folder.rglob("*"))
    }


# ------------------------------------------------------------------------------------------------ confined


def test_confined_returns_the_real_path_below_a_symlinked_root(tmp_path: Path) -> None:
    (tmp_path / "real" / "a").mkdir(parents=True)
    (tmp_path / "alias").symlink_to(tmp_path / "real")  # the user's own link above the root is followed
    assert (
        confined(tmp_path / "alias" / "a" / "b" / "c.md", tmp_path / "alias") == tmp_path / "real" / "a" / "b" / "c.md"
    )
    assert confined(tmp_path / "real" / "a" / "x", tmp_path / "alias") == tmp_path / "real" / "a" / "x"


@pytest.mark.parametrize(
    ("link", "target", "written", "message"),
    [
        ("local", "../outside", "local/events.jsonl", "local is a symlink (to ../outside)"),
        ("events.jsonl", "../outside/bashrc", "events.jsonl", "it is a symlink (to ../outside/bashrc)"),
        ("inner", "real", "inner/x", "inner is a symlink (to real)"),  # even one that stays inside
    ],
)
def test_confined_refuses_every_symlink_below_the_root(
    tmp_path: Path, outside: Path, link: str, target: str, written: str, message: str
) -> None:
    root = tmp_path / "repo"
    (root / "real").mkdir(parents=True)
    (root / link).symlink_to(target)
    with pytest.raises(UnsafePath) as caught:
        confined(root / written, root)
    assert caught.value.code == "unsafe_path"
    assert caught.value.message == f"refusing to write {written}: {message}; writes stay inside {root}"


@pytest.mark.parametrize("path", ["../outside/x", "/etc/passwd", ".git/hooks/pre-commit", "a/.GIT/config", "git~1/x"])
def test_confined_refuses_paths_outside_the_root_and_inside_git(tmp_path: Path, path: str) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    with pytest.raises(UnsafePath):
        confined(root / path, root)


def test_a_file_in_the_middle_is_not_a_folder(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(InputError) as caught:
        confined(tmp_path / "file" / "x.md", tmp_path)
    assert caught.value.code == "not_a_folder"


# ------------------------------------------------------------------------------------------------ the writers


def writers(root: Path, path: Path) -> dict[str, object]:
    return {
        "replace": lambda: atomic.write_bytes_atomic(path, b"new\n", root=root, parents=True),
        "create": lambda: atomic.write_new(path, b"new\n", root=root, parents=True),
        "append": lambda: os.close(atomic.open_append(path, root=root)),
        "folder": lambda: atomic.make_dirs(path / "sub", root=root),
        "remove": lambda: atomic.remove_file(path, root=root),
        "lock": lambda: atomic.lifecycle_lock(path, timeout_s=0.1, root=root).__enter__(),
    }


@pytest.mark.parametrize("how", ["replace", "create", "append", "folder", "remove", "lock"])
@pytest.mark.parametrize("attack", ["linked folder", "linked file"])
def test_no_writer_follows_a_symlink_out_of_its_root(tmp_path: Path, outside: Path, how: str, attack: str) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    if attack == "linked folder":
        (root / "local").symlink_to("../outside")
        path = root / "local" / "bashrc"
    else:
        (root / "bashrc").symlink_to("../outside/bashrc")
        path = root / "bashrc" if how != "remove" else root / "bashrc" / "x"
    before = snapshot(outside)
    with pytest.raises(UnsafePath):
        writers(root, path)[how]()  # type: ignore[operator]
    assert snapshot(outside) == before


def test_removing_a_symlink_removes_the_link_never_its_target(tmp_path: Path, outside: Path) -> None:
    (tmp_path / "link").symlink_to(outside / "bashrc")
    assert atomic.remove_file(tmp_path / "link", root=tmp_path) is True
    assert not os.path.lexists(tmp_path / "link") and (outside / "bashrc").read_bytes() == b"export PATH=/usr/bin\n"


@pytest.mark.parametrize("kind", ["folder", "fifo"])
def test_a_log_that_is_not_a_regular_file_is_refused_without_blocking(tmp_path: Path, kind: str) -> None:
    log = tmp_path / "events.jsonl"
    log.mkdir() if kind == "folder" else os.mkfifo(log)
    with pytest.raises(InputError) as caught:
        atomic.open_append(log, root=tmp_path)
    assert caught.value.code == "not_a_regular_file"
    with pytest.raises(InputError):
        atomic.write_bytes_atomic(log, b"x", root=tmp_path)


def test_write_new_never_replaces(tmp_path: Path) -> None:
    assert atomic.write_new(tmp_path / "a.json", b"1", root=tmp_path) is True
    assert atomic.write_new(tmp_path / "a.json", b"2", root=tmp_path) is False
    assert (tmp_path / "a.json").read_bytes() == b"1" and os.listdir(tmp_path) == ["a.json"]


# ------------------------------------------------------------------------------------------------ temporary files


def test_temporary_files_go_to_the_git_directory_not_beside_the_target(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[str] = []
    real_replace = os.replace

    def spy(src: str, dst: str, **fds: int | None) -> None:
        seen.append(src)
        real_replace(src, dst, **fds)

    monkeypatch.setattr(atomic.os, "replace", spy)
    entries = repo.root / "agent-memory" / "entries"
    atomic.write_bytes_atomic(entries / "a.md", b"a\n", root=repo.root, parents=True)
    assert [Path(s).parent for s in seen] == [(repo.root / ".git" / "memzoi" / "tmp").resolve()]
    assert os.listdir(entries) == ["a.md"]
    assert repo.git("status", "--porcelain", "--untracked-files=all") == "?? agent-memory/entries/a.md"


def test_outside_a_repository_the_temporary_file_is_hidden_beside_the_target(tmp_path: Path) -> None:
    temp = scratch.create(os.open(tmp_path, os.O_RDONLY), "x.md", tmp_path)
    os.close(temp.fd)
    assert temp.dir_fd is not None and temp.name.startswith(f".x.md.{os.getpid()}-") and temp.name.endswith(".tmp")


def test_leftovers_of_dead_writers_are_listed_and_swept(repo: Repo, tmp_path: Path) -> None:
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    pid = int(dead.stdout)
    tmp = repo.root / ".git" / "memzoi" / "tmp"
    tmp.mkdir(parents=True)
    folder = repo.root / ".memzoi" / "records"
    folder.mkdir(parents=True)
    gone = [tmp / f"{pid}-0123456789ab-x.md.tmp", folder / f".x.md.{pid}-0123456789ab.tmp"]
    live = [tmp / f"{os.getpid()}-0123456789ab-y.md.tmp", folder / f".y.md.{os.getpid()}-0123456789ab.tmp"]
    legacy_old, legacy_new = folder / ".z.md.0123456789ab.tmp", folder / ".w.md.ba9876543210.tmp"
    for path in [*gone, *live, legacy_old, legacy_new, folder / "keep.md"]:
        path.write_text("x")
    os.utime(legacy_old, (time.time() - 120, time.time() - 120))  # older than a minute: an older version's
    assert scratch.leftovers(repo.root, [folder]) == sorted([*gone, legacy_old])
    assert scratch.sweep(repo.root, [folder]) == sorted([*gone, legacy_old])
    assert sorted(os.listdir(folder)) == sorted([live[1].name, legacy_new.name, "keep.md"])


# ------------------------------------------------------------------------------------------------ the lock


def test_a_lock_timeout_names_the_holder_and_the_wait(tmp_path: Path) -> None:
    lock = tmp_path / "lifecycle.lock"
    code = (
        "import sys, time; from pathlib import Path; from git_memzoi.core import atomic\n"
        "atomic.name_command('git-memzoi propose')\n"
        "with atomic.lifecycle_lock(Path(sys.argv[1]), root=Path(sys.argv[1]).parent):\n"
        "    print('held', flush=True); time.sleep(10)\n"
    )
    holder = subprocess.Popen([sys.executable, "-c", code, str(lock)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        assert json.loads(lock.read_text()) == {"pid": holder.pid, "command": "git-memzoi propose"}
        with pytest.raises(ToolError) as caught, atomic.lifecycle_lock(lock, timeout_s=0.3, root=tmp_path):
            pass
    finally:
        holder.kill()
        holder.wait()
    message = caught.value.message
    assert caught.value.code == "lock_timeout"
    assert message.startswith(f"the lifecycle lock {lock} is held by pid {holder.pid} (git-memzoi propose) since 20")
    assert message.endswith("; waited 0.3 s") and " s); waited" in message
