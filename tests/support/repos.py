"""Everything the tests build repositories with, in one place: the hermetic environment, :class:`Repo` (a real git
repository in ``tmp_path``), the memzoi workspace of the ``ctx`` fixture, the in-process CLI runners, the
location of ``../shared`` and a few shared inputs. ``tests/conftest.py`` only registers the fixtures.

``git_memzoi.cli`` is imported inside the runners, never at import time (hook tests count what a process loads).
"""

from __future__ import annotations

import datetime as dt
import os
import subprocess
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from click.testing import Result

    from git_memzoi.memzoi.workspace import Workspace

PROJECT = Path(__file__).resolve().parents[2]

# ../shared beside the project (absent in a user's clone). Read when this module is imported: the hermetic
# environment clears every MEMZOI_* variable before each test.
SHARED = Path(os.environ.get("MEMZOI_SHARED_DIR") or PROJECT.parent / "shared")
SHARED_ABSENT = "../shared/conformance is not present (a user's clone): conformance corpora skipped"

# The pinned time of the memzoi tests: the ``ctx`` workspace's clock, and MEMZOI_NOW of the CLI runners.
NOW = dt.datetime(2026, 7, 10, 12, 0, tzinfo=dt.UTC)
NOW_TEXT = "2026-07-10T12:00:00Z"
PINNED = {"MEMZOI_NOW": NOW_TEXT}
# The pinned day of the memkeep CLI runner (MEMZOI_TODAY).
TODAY = "2026-11-30"

# The seed's session-end example (seed "Session-end promotion"), used as given.
SEED_YAML = """\
task: "Implement auth middleware"
candidates:
  - destination: repo
    type: decision
    lane: semantic
    title: Protected routes validate sessions server-side
    body: Protected routes must validate sessions server-side.
    sensitivity: repo-safe
    reason: Learned while implementing middleware.
    scope:
      kind: repo
      paths:
        - src/auth/**
    tags:
      - auth
      - security
"""


# ------------------------------------------------------------------------------------------------ environment


def hermetic(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """HOME and XDG dirs in ``home``, no inherited GIT_*/MEMKEEP_*/MEMZOI_* variables, a pinned identity and
    default branch, and global/system git config ignored (pre-commit's and pygit2's own test trap)."""
    for key in list(os.environ):
        if key.startswith(("GIT_", "MEMKEEP_", "MEMZOI_")):
            monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(home / ".gitconfig"))
    (home / ".gitconfig").write_text(
        "[user]\n\tname = Test\n\temail = test@example.com\n[init]\n\tdefaultBranch = main\n"
        '[protocol "file"]\n\tallow = always\n[advice]\n\tdetachedHead = false\n'
    )


def shared_dir() -> Path:
    """``../shared`` (or ``MEMZOI_SHARED_DIR``); skips the calling test where its conformance corpora are absent."""
    if not (SHARED / "conformance").is_dir():
        pytest.skip(SHARED_ABSENT)
    return SHARED


# ------------------------------------------------------------------------------------------------ repositories


class Repo:
    """A real git repository in tmp_path, driven through the git CLI."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def git(self, *args: str, check: bool = True) -> str:
        proc = subprocess.run(["git", *args], cwd=self.root, capture_output=True, text=True, check=False)
        if check and proc.returncode != 0:
            raise AssertionError(f"git {' '.join(args)} failed: {proc.stderr}")
        return proc.stdout.strip()

    def write(self, path: str, text: str) -> Path:
        file = self.root / path
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(text, encoding="utf-8")
        return file

    def commit(self, message: str = "change", **files: str) -> str:
        for path, text in files.items():
            self.write(path, text)
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", message)
        return self.head()

    def commit_paths(self, message: str, files: dict[str, str]) -> str:
        for path, text in files.items():
            self.write(path, text)
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", message)
        return self.head()

    def head(self) -> str:
        return self.git("rev-parse", "HEAD")


def new_repo(root: Path) -> Repo:
    """An empty repository (no commits) on branch main at ``root``."""
    root.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    return Repo(root)


def memzoi_workspace(repo: Repo, *, actor: str = "zoki", now: dt.datetime = NOW, spec: bool = False) -> Workspace:
    """``git memzoi init`` in ``repo`` (with ``spec``, choosing the memzoi-spec v0 record ids: :func:`spec_ids`),
    then the project opened as ``actor`` with the clock fixed at ``now``."""
    from git_memzoi.core.clock import FixedClock
    from git_memzoi.memzoi import workspace

    workspace.init(repo.root)
    if spec:
        spec_ids(repo.root)
    return workspace.open_workspace(repo.root, clock=FixedClock(now.date(), now), actor=actor)


def spec_ids(root: Path) -> None:
    """Choose the memzoi-spec v0 record ids in the initialised repository at ``root`` (``[records] ids = "slug"``
    in ``.memzoi/config.toml``, added to what the file holds): for tests that name records by their bare slug
    and are about something else; the merge-safe default has its own tests (test_team_merge.py)."""
    config = root / ".memzoi" / "config.toml"
    before = config.read_text("utf-8") if config.is_file() else ""
    config.write_text(before + ("\n" if before and not before.endswith("\n") else "") + '[records]\nids = "slug"\n')


def tree(root: Path) -> dict[str, bytes]:
    """Every file but git's and the (empty) lifecycle lock file, which apply creates before it checks, plus the
    private memory git's folder holds (``.git/memzoi/local/``, Layout.private): a snapshot to prove that an
    operation wrote nothing."""
    private = root / ".git" / "memzoi" / "local"
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
        and (".git" not in p.relative_to(root).parts or p.is_relative_to(private))
        and p.name != "lifecycle.lock"
    }


def entry_text(
    entry_id: str,
    *,
    anchor: str | None,
    scope: list[str] | None = None,
    status: str = "verified",
    entry_type: str = "fact",
    claim: str = "A claim that holds.",
    extra: str = "",
    written_at: str = "2026-11-01",
    verified_at: str = "2026-11-01",
) -> str:
    """A valid memkeep entry as text."""
    lines = [
        "---",
        "schema_version: 1",
        f"id: {entry_id}",
        f"type: {entry_type}",
        f"status: {status}",
        f"written_at: {written_at}",
        f"verified_at: {verified_at}",
    ]
    if anchor:
        lines.append(f"anchor: {anchor}")
    if scope is not None:
        lines.append("scope:")
        lines += [f"  - {s!r}" if s.startswith(("!", "*", "[")) or s.endswith(" ") else f"  - {s}" for s in scope]
    lines.append("evidence: |\n  Seen in the code.")
    if extra:
        lines.append(extra.rstrip("\n"))
    lines += ["---", claim, ""]
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------------ command line


def invoke(
    group: Any,
    args: Sequence[str],
    *,
    env: dict[str, str] | None = None,
    input: str | None = None,
    prog_name: str | None = None,
    exit_codes: Collection[int] = (0, 1, 2),
) -> Result:
    """Run a click command group in-process under the no-traceback contract: never a Python traceback, never an
    exception but ``SystemExit``, never an internal error (an exit code outside ``exit_codes``)."""
    from click.testing import CliRunner

    named = {"prog_name": prog_name} if prog_name else {}  # an explicit None would name the program after sys.argv
    result = CliRunner().invoke(group, list(args), env=env, input=input, **named)
    assert "Traceback" not in result.output + result.stderr, result.output + result.stderr
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert result.exit_code in exit_codes, (result.exit_code, result.output, result.stderr)
    return result


def run(
    repo: Repo, *args: str, env: dict[str, str] | None = PINNED, input: str | None = None, prog_name: str | None = None
) -> Result:
    """``git memzoi -C <repo> ...`` in-process, the clock pinned at :data:`NOW` unless ``env`` says otherwise."""
    from git_memzoi.cli.memzoi import cli

    return invoke(cli, ["-C", str(repo.root), *args], env=env, input=input, prog_name=prog_name)


def ok_json(repo: Repo, *args: str, env: dict[str, str] | None = PINNED) -> Any:
    """:func:`run` with ``--json``; the command must succeed; its parsed output."""
    import json

    result = run(repo, *args, "--json", env=env)
    assert result.exit_code == 0, (result.stdout, result.stderr)
    payload = json.loads(result.stdout)
    assert payload["ok"] is True, payload  # the envelope rule: ok is true exactly when the exit code is 0
    return payload


def memkeep(*args: str, env: dict[str, str] | None = None) -> Result:
    """``git memkeep ...`` in-process, the day pinned at :data:`TODAY` (``env`` adds variables)."""
    from git_memzoi.cli.memkeep import cli

    return invoke(cli, args, env={"MEMZOI_TODAY": TODAY, **(env or {})})


def write_record(
    repo: Repo,
    concept_id: str,
    title: str,
    body: str,
    *,
    memory_type: str = "fact",
    source: str = "test",
    status: str = "active",
    lane: str = "semantic",
    **fields: Any,
) -> None:
    """Write ``.memzoi/records/<concept_id>.md``: a repo-scoped, repo-visible canonical record of ``status`` as
    ``okf.render`` writes it (timestamp 2026-07-01, source ref ``<source>://<id>``); ``fields`` are further
    ``okf.Record`` fields (``applies_to``, ``tags``, ``memkeep``, ``supersedes`` ...)."""
    from git_memzoi.memzoi.records import okf

    rec = okf.Record(
        id=concept_id,
        type=memory_type,
        lane=lane,
        title=title,
        scope="repo",
        visibility="repo",
        content_class="general_repo_knowledge",
        status=status,
        confidence=1.0,
        timestamp="2026-07-01T00:00:00Z",
        body=body,
        source=source,
        source_ref=f"{source}://{concept_id}",
        origin={"origin_key": f"repository-record:{concept_id}", "route": "repository_materialization"},
        **fields,
    )
    repo.write(f".memzoi/records/{concept_id}.md", okf.render(rec))


def refused(repo: Repo, *args: str) -> dict[str, Any]:
    """The ``--json`` error object of a command that must exit 2 and write nothing (the bad-input contract)."""
    import json

    before = tree(repo.root)
    result = run(repo, *args, "--json")
    assert result.exit_code == 2, (result.stdout, result.stderr)
    assert tree(repo.root) == before
    error: dict[str, Any] = json.loads(result.stdout)["error"]
    return error


def git_range_request(base: str, head: str) -> dict[str, Any]:
    """A ``memzoi/capture-request-v1`` of one ``git_range`` source (id ``range``) between the full commit ids
    ``base`` and ``head``, for the ``git-change-deterministic`` profile (docs/memzoi.md "Request files")."""
    locator = {
        "kind": "git_range",
        "repository": ".",
        "base": f"sha1:{base}",
        "head": f"sha1:{head}",
        "merge_parent": "base_to_head",
        "rename_detection": True,
        "diff_format": "git-unified-v1",
    }
    return {
        "schema": "memzoi/capture-request-v1",
        "sources": [{"source_id": "range", "locator": locator, "media_type": "text/x-diff"}],
        "extractor": {"profile": "git-change-deterministic"},
    }
