"""The status result cache (memkeep/status_cache.py): an unchanged repository is answered from the last run, and
every input of the suspect set - HEAD, an entry file, the day, the store's settings - changes the answer.

``RACY_NS`` is zeroed where a test needs its just-written entries trusted at once (the rule itself has a test).
"""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path

import pytest

from git_memzoi.core.clock import FixedClock
from git_memzoi.memkeep import commands, status_cache
from git_memzoi.memkeep import store as store_mod
from git_memzoi.memkeep.commands import Options
from tests.support.repos import Repo, entry_text, memkeep, new_repo

DAY = dt.date(2026, 11, 30)


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    repo = new_repo(tmp_path / "repo")
    first = repo.commit("code", **{"src/auth.py": "salt = 1\n", "src/other.py": "x = 1\n"})
    repo.commit(
        "memory",
        **{
            "agent-memory/entries/salt.md": entry_text("salt", anchor=first, scope=["src/auth.py"]),
            "agent-memory/entries/other.md": entry_text("other", anchor=first, scope=["src/other.py"]),
        },
    )
    return repo


@pytest.fixture
def settled(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(status_cache, "RACY_NS", 0)


def status(repo: Repo, day: dt.date = DAY) -> commands.StatusResult:
    return commands.status(Options(start=repo.root, clock=FixedClock(day)))


def served(repo: Repo, monkeypatch: pytest.MonkeyPatch, day: dt.date = DAY) -> commands.StatusResult | None:
    """The cached answer, or ``None`` when the full computation had to run."""
    with monkeypatch.context() as patch:
        patch.setattr(commands, "open_session", _no_session)
        try:
            return status(repo, day)
        except _Computed:
            return None


class _Computed(Exception):
    pass


def _no_session(options: Options) -> None:
    raise _Computed


def suspects(result: commands.StatusResult) -> list[tuple[str, str]]:
    return [(v.id, v.reason) for v in result.report.verdicts]


def test_an_unchanged_repository_is_answered_from_the_last_run(repo: Repo, settled: None, monkeypatch) -> None:
    repo.commit("touch auth", **{"src/auth.py": "salt = 2\n"})
    first = status(repo)
    again = served(repo, monkeypatch)
    assert again is not None
    assert suspects(again) == suspects(first) == [("salt", "scope_hit")]
    assert again.report.verdicts[0].evidence["files"] == ["src/auth.py"]
    assert again.exit_code == first.exit_code == 1
    assert sorted(p.name for p in (repo.root / ".git" / "memzoi" / "cache").glob("status-*")) == [
        f"status-{store_mod.cache_name(first.store)}.pickle"
    ]


def test_a_new_commit_is_computed_again(repo: Repo, settled: None, monkeypatch) -> None:
    assert suspects(status(repo)) == []
    repo.commit("touch other", **{"src/other.py": "x = 2\n"})
    assert served(repo, monkeypatch) is None
    assert suspects(status(repo)) == [("other", "scope_hit")]


def test_packed_refs_and_a_detached_head_are_read_as_git_reads_them(repo: Repo, settled: None, monkeypatch) -> None:
    repo.git("pack-refs", "--all")
    assert not (repo.root / ".git" / "refs" / "heads" / "main").exists()
    status(repo)
    assert served(repo, monkeypatch) is not None
    repo.git("checkout", "-q", "--detach", "HEAD")
    assert served(repo, monkeypatch) is None  # the same commit, but HEAD's file changed
    status(repo)
    assert served(repo, monkeypatch) is not None


def test_an_edited_entry_is_read_again(repo: Repo, settled: None, monkeypatch) -> None:
    status(repo)
    entry = repo.root / "agent-memory" / "entries" / "other.md"
    before = entry.stat()
    entry.write_text(entry.read_text("utf-8").replace("A claim that holds.", "A claim that holds!"), "utf-8")
    os.utime(entry, ns=(before.st_atime_ns, before.st_mtime_ns))  # same size and mtime: the ctime still moved
    assert served(repo, monkeypatch) is None
    assert status(repo).report.entries == 2


def test_another_day_is_computed_again(repo: Repo, settled: None, monkeypatch) -> None:
    status(repo)
    assert served(repo, monkeypatch, DAY + dt.timedelta(days=1)) is None


def test_a_store_setting_is_part_of_the_key(repo: Repo, settled: None, monkeypatch) -> None:
    status(repo)
    repo.write(".memkeep.yml", "referential_check: true\n")
    assert served(repo, monkeypatch) is None


def test_entries_written_just_now_are_not_trusted(repo: Repo, monkeypatch) -> None:
    status(repo)  # the real RACY_NS: the fixture's files are seconds old
    assert served(repo, monkeypatch) is None
    assert not list((repo.root / ".git" / "memzoi" / "cache").glob("status-*"))


def test_an_unreachable_anchor_is_never_cached(tmp_path: Path, settled: None, monkeypatch) -> None:
    repo = new_repo(tmp_path / "repo")
    repo.commit("memory", **{"agent-memory/entries/gone.md": entry_text("gone", anchor="0" * 40, scope=["src/a.py"])})
    assert [v.reason for v in status(repo).report.verdicts] == ["anchor_unreachable"]
    assert served(repo, monkeypatch) is None  # a fetch could bring the commit in without moving HEAD


def test_a_foreign_or_broken_cache_is_ignored(repo: Repo, settled: None, monkeypatch) -> None:
    status(repo)
    [cached] = (repo.root / ".git" / "memzoi" / "cache").glob("status-*")
    for content in (b"not a cache", status_cache.MAGIC + b"\x80\x05garbage", b""):
        cached.write_bytes(content)
        assert served(repo, monkeypatch) is None
        assert suspects(status(repo)) == []


@pytest.mark.parametrize("name", ["GIT_DIR", "GIT_WORK_TREE", "GIT_OBJECT_DIRECTORY", "GIT_CEILING_DIRECTORIES"])
def test_git_environment_takes_the_full_path(repo: Repo, settled: None, monkeypatch, name: str) -> None:
    status(repo)
    monkeypatch.setenv(name, str(repo.root / ".git"))
    assert status_cache.key(Options(start=repo.root, clock=FixedClock(DAY))) is None


def test_git_environment_and_worktrees(repo: Repo, settled: None, monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")  # configuration only: the cache still serves
    assert status_cache.key(Options(start=repo.root, clock=FixedClock(DAY))) is not None
    repo.git("worktree", "add", "-q", "-b", "side", str(tmp_path / "side"))
    side = Repo(tmp_path / "side")
    found = status_cache.key(Options(start=side.root, clock=FixedClock(DAY)))
    assert found is not None
    assert found.git_dir == str((repo.root / ".git" / "worktrees" / "side").resolve())
    assert found.head == side.head()
    status(side)
    assert served(side, monkeypatch) is not None


def test_the_cli_prints_the_same_json_from_the_cache(repo: Repo, settled: None) -> None:
    repo.commit("touch auth", **{"src/auth.py": "salt = 2\n"})
    first = memkeep("-C", str(repo.root), "status", "--json")
    second = memkeep("-C", str(repo.root), "status", "--json")
    assert (first.exit_code, second.exit_code) == (1, 1)
    assert json.loads(second.stdout) == json.loads(first.stdout)
    assert [s["id"] for s in json.loads(first.stdout)["verdicts"]] == ["salt"]


SERVED_PROBE = """
import contextlib, io, json, sys
from git_memzoi.memkeep import status_cache
status_cache.RACY_NS = int(sys.argv[2])  # 0: trust the entries written just now, so the answer is saved
sys.argv = ["git-memkeep", "-C", sys.argv[1], "status", "--json"]
from git_memzoi.cli.entry import memkeep
out = io.StringIO()
with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
    memkeep()
print(json.dumps({"verdicts": len(json.loads(out.getvalue())["verdicts"]), "modules": sorted(sys.modules)}))
"""
# what computing the suspect set needs, and a served answer does not (memkeep/report.py)
COMPUTATION = (
    "pygit2",
    "ruamel.yaml",
    "git_memzoi.memkeep.staleness",
    "git_memzoi.memkeep.entries",
    "git_memzoi.core.globs",
    "git_memzoi.core.scope_index",
    "git_memzoi.core.frontmatter",
)


def test_a_served_answer_loads_none_of_the_computation(repo: Repo) -> None:
    import subprocess
    import sys

    repo.commit("touch auth", **{"src/auth.py": "salt = 2\n"})

    def probe(racy_ns: int) -> dict[str, object]:
        args = [sys.executable, "-c", SERVED_PROBE, str(repo.root), str(racy_ns)]
        found: dict[str, object] = json.loads(subprocess.run(args, capture_output=True, text=True, check=True).stdout)
        return found

    first = probe(0)
    assert first["verdicts"] == 1 and set(COMPUTATION) - {"ruamel.yaml"} <= set(first["modules"])  # type: ignore[arg-type]
    second = probe(status_cache.RACY_NS)
    assert second["verdicts"] == 1
    assert [m for m in COMPUTATION if m in second["modules"]] == []  # type: ignore[operator]
