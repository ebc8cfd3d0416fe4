"""One history spec, two repository views: a :class:`Scenario` builds a ``FakeRepoView`` in memory or a real git
repository in ``tmp_path`` (opened with ``Pygit2RepoView``), with the same commit ids (research/aesthetics.md
habit 15; dulwich's ``build_commit_graph``).

A scenario lists commits in order, each with a name, a date and what it writes and deletes on top of its first
parent's tree. The fake gets the ids git gives those commits, computed here (SHA-1 objects, one fixed author, the
name as the message); the real repository is written by ``git fast-import`` and :func:`build_git` checks that git
agrees, so a test can name the same commit in both views.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import subprocess
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from git_memzoi.core.gitview import RepoView
from git_memzoi.core.gitview_fake import FakeRepoView
from git_memzoi.core.gitview_pygit2 import Pygit2RepoView

WHO = "Scenario <scenario@example.com>"


@dataclass(frozen=True)
class Commit:
    """One commit: its tree is its first parent's tree (empty for a root) plus ``write``, minus ``delete``.

    Args:
        name: how tests refer to it; also its message (``message`` when given).
        date: when it was committed (author and committer), ISO 8601, UTC unless it says otherwise.
        write: path → content written (added or replaced).
        delete: paths removed.
        parents: names of its parents, first parent first; ``None``: the commit listed before it (none for the
            first one listed), ``()``: a root commit.
        message: the commit message when it is not the name (to steer the commit's id, see the contract tests).
    """

    name: str
    date: str
    write: Mapping[str, str] = field(default_factory=dict)
    delete: Sequence[str] = ()
    parents: Sequence[str] | None = None
    message: str | None = None


@dataclass(frozen=True)
class Scenario:
    """A history: ``commits`` in the order they are made; HEAD at ``head`` (the last commit when ``None``; no
    commits: an unborn HEAD). ``depth``: the repository is a shallow clone of that depth (give shallow scenarios a
    linear history: only then is which commits a clone keeps plain)."""

    commits: Sequence[Commit] = ()
    head: str | None = None
    depth: int | None = None

    @property
    def head_name(self) -> str | None:
        """The name of HEAD's commit, ``None`` when there is none."""
        return self.head or (self.commits[-1].name if self.commits else None)

    def parents(self) -> dict[str, tuple[str, ...]]:
        """name → its parents' names."""
        out: dict[str, tuple[str, ...]] = {}
        previous: str | None = None
        for commit in self.commits:
            if commit.parents is not None:
                out[commit.name] = tuple(commit.parents)
            else:
                out[commit.name] = (previous,) if previous else ()
            previous = commit.name
        return out

    def trees(self) -> dict[str, dict[str, str]]:
        """name → the commit's whole tree, path → content."""
        parents = self.parents()
        out: dict[str, dict[str, str]] = {}
        for commit in self.commits:
            first = parents[commit.name][:1]
            tree = dict(out[first[0]]) if first else {}
            for path in commit.delete:
                del tree[path]
            tree.update(commit.write)
            out[commit.name] = tree
        return out

    def ids(self) -> dict[str, str]:
        """name → the id git gives the commit (hex SHA-1), computed without git."""
        parents, trees = self.parents(), self.trees()
        out: dict[str, str] = {}
        for commit in self.commits:
            lines = [f"tree {_tree_id(trees[commit.name])}"]
            lines += [f"parent {out[p]}" for p in parents[commit.name]]
            stamp = f"{WHO} {_epoch(commit.date)} +0000"
            lines += [f"author {stamp}", f"committer {stamp}", "", _message(commit)]
            out[commit.name] = _object_id("commit", "\n".join(lines).encode("utf-8")).hex()
        return out

    def kept(self) -> set[str]:
        """The names a clone of ``depth`` keeps (all of them when the repository is not shallow)."""
        parents, head = self.parents(), self.head_name
        if head is None:
            return set()
        if self.depth is None:
            return set(parents)
        kept, layer = set(), [head]
        for _ in range(self.depth):
            kept.update(layer)
            layer = [p for name in layer for p in parents[name] if p not in kept]
        return kept


@dataclass(frozen=True)
class Built:
    """A scenario made real: the view over it and ``ids`` (name → full commit id, every commit of the scenario,
    also those a shallow clone does not have)."""

    view: RepoView
    ids: dict[str, str]


def build_fake(scenario: Scenario, tmp_path: Path) -> Built:
    """The scenario as a :class:`FakeRepoView` (nothing is written; ``tmp_path`` is not used). A shallow clone's
    oldest kept commits have no parents, as git's grafts show them."""
    ids, parents, trees, kept = scenario.ids(), scenario.parents(), scenario.trees(), scenario.kept()
    commits = {
        ids[name]: ([ids[p] for p in parents[name] if p in kept], trees[name]) for name in parents if name in kept
    }
    head = scenario.head_name
    view = FakeRepoView(commits, ids[head] if head else None, shallow=scenario.depth is not None)
    return Built(view, ids)


def build_git(scenario: Scenario, tmp_path: Path) -> Built:
    """The scenario as a real repository in a new folder under ``tmp_path``, written by ``git fast-import`` (one
    ref per commit, ``main`` at HEAD, checked out), then cloned with ``--depth`` when the scenario is shallow."""
    where = Path(tempfile.mkdtemp(prefix="scenario-", dir=tmp_path))
    origin = where / "origin"
    _git(where, "init", "-q", "-b", "main", str(origin))
    ids = scenario.ids()
    if scenario.commits:
        marks = where / "marks"
        _git(origin, "fast-import", "--quiet", f"--export-marks={marks}", stdin=_stream(scenario))
        numbered = dict(line.split() for line in marks.read_text("ascii").splitlines())
        made = {c.name: numbered[f":{n}"] for n, c in enumerate(scenario.commits, 1)}
        if made != ids:
            raise AssertionError(f"git gave the scenario other ids than computed: {made} != {ids}")
        _git(origin, "reset", "-q", "--hard", "main")
    root = origin
    if scenario.depth is not None:
        root = where / "clone"
        _git(where, "clone", "-q", f"--depth={scenario.depth}", origin.as_uri(), str(root))
    return Built(Pygit2RepoView(root), ids)


BUILDERS: dict[str, Callable[[Scenario, Path], Built]] = {"fake": build_fake, "git": build_git}


def _stream(scenario: Scenario) -> bytes:
    """The fast-import commands of the scenario: each commit's whole tree (``deleteall`` then every file)."""
    marks = {c.name: n for n, c in enumerate(scenario.commits, 1)}
    parents, trees = scenario.parents(), scenario.trees()
    out = bytearray()
    for commit in scenario.commits:
        stamp = f"{WHO} {_epoch(commit.date)} +0000"
        out += f"commit refs/scenario/{commit.name}\nmark :{marks[commit.name]}\n".encode()
        out += f"author {stamp}\ncommitter {stamp}\n".encode() + _data(_message(commit).encode("utf-8"))
        for n, parent in enumerate(parents[commit.name]):
            out += f"{'from' if n == 0 else 'merge'} :{marks[parent]}\n".encode()
        out += b"deleteall\n"
        for path, text in sorted(trees[commit.name].items()):
            if "\n" in path or path.startswith('"'):
                raise ValueError(f"fast-import would need a quoted path: {path!r}")
            out += f"M 100644 inline {path}\n".encode() + _data(text.encode("utf-8"))
        out += b"\n"
    head = scenario.head_name
    out += f"reset refs/heads/main\nfrom :{marks[head]}\n\n".encode() if head else b""
    return bytes(out)


def _data(payload: bytes) -> bytes:
    return f"data {len(payload)}\n".encode() + payload + b"\n"


def _message(commit: Commit) -> str:
    return (commit.message or commit.name) + "\n"


def _epoch(date: str) -> int:
    when = dt.datetime.fromisoformat(date)
    return int((when if when.tzinfo else when.replace(tzinfo=dt.UTC)).timestamp())


def _object_id(kind: str, payload: bytes) -> bytes:
    return hashlib.sha1(f"{kind} {len(payload)}\0".encode() + payload).digest()


def _tree_id(files: Mapping[str, str]) -> str:
    """The id of the tree holding ``files`` (regular files, mode 100644)."""
    nested: dict[str, Any] = {}
    for path, text in files.items():
        *folders, name = path.split("/")
        node = nested
        for folder in folders:
            node = node.setdefault(folder, {})
        node[name] = text
    return _tree_object(nested).hex()


def _tree_object(node: Mapping[str, object]) -> bytes:
    entries = []
    for name, child in node.items():
        raw = name.encode("utf-8")
        if isinstance(child, Mapping):
            entries.append((raw + b"/", b"40000 " + raw + b"\0" + _tree_object(child)))
        else:
            entries.append((raw, b"100644 " + raw + b"\0" + _object_id("blob", str(child).encode("utf-8"))))
    return _object_id("tree", b"".join(entry for _, entry in sorted(entries)))


def _git(cwd: Path, *args: str, stdin: bytes | None = None) -> None:
    proc = subprocess.run(["git", *args], cwd=cwd, input=stdin, capture_output=True, check=False)
    if proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args[:2])} failed: {proc.stderr.decode(errors='replace')}")
