"""HEAD read from the git directory's files, without pygit2 (io): the hot paths that only need HEAD's commit id.

pygit2 costs 45 to 100 ms to import. The status result cache keys its answer by HEAD
(:mod:`git_memzoi.memkeep.status_cache`) and a record written without a scope needs only to know that HEAD has a
commit (:mod:`git_memzoi.memzoi.records.envelope`). Loose refs, ``packed-refs`` and symbolic chains are read as git
writes them; anything else (a reftable, replace refs, git's environment redirecting the repository) is ``None``,
for the caller to ask pygit2.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from git_memzoi.core import gitenv

_HEX = frozenset("0123456789abcdef")


UNBORN = ""  # what head_commit gives for a branch with no commit yet, read plainly


def head_commit(root: Path, environ: Mapping[str, str] = os.environ) -> str | None:
    """The commit id HEAD of the working tree at ``root`` names, read plainly; :data:`UNBORN` when HEAD names a
    branch that holds no commit yet (neither a loose ref nor ``packed-refs`` has it); ``None`` when it cannot be
    read plainly (git's environment redirects the repository, or :func:`plain_head` declines)."""
    if gitenv.redirected(environ):
        return None
    dirs = gitenv.git_dirs(root, environ)
    if dirs is None:
        return None
    try:
        head = plain_head(*dirs)
        if head is None and _unborn(*dirs):
            return UNBORN
    except (OSError, UnicodeDecodeError):
        return None
    return head[1] if head is not None else None


def plain_head(git_dir: Path, common: Path) -> tuple[str, str] | None:
    """``(HEAD file text, commit id)`` of the git dir ``git_dir`` (its common dir ``common``), following a branch
    through loose refs then ``packed-refs``; ``None`` for an unborn branch, a reftable, replace refs or anything
    else not read plainly (the caller then asks pygit2)."""
    if (common / "reftable").exists() or _has_replace_refs(common):
        return None
    text = (git_dir / "HEAD").read_text("utf-8")
    target = text.strip()
    for _ in range(5):  # a symbolic ref chain, as git bounds it
        if not target.startswith("ref: "):
            return (text, target) if len(target) == 40 and set(target) <= _HEX else None
        name = target.removeprefix("ref: ").strip()
        if not name.startswith("refs/") or ".." in name:
            return None
        base = git_dir if name.startswith(("refs/bisect/", "refs/worktree/", "refs/rewritten/")) else common
        try:
            target = (base / name).read_text("utf-8").strip()
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            packed = _packed(common).get(name)
            if packed is None:
                return None
            target = packed
    return None


def _unborn(git_dir: Path, common: Path) -> bool:
    """Whether HEAD names a branch directly (``ref: refs/heads/...``) that has no ref at all: no loose file, no
    ``packed-refs`` line, no reftable (then git itself cannot say plainly)."""
    target = (git_dir / "HEAD").read_text("utf-8").strip()
    name = target.removeprefix("ref: ").strip()
    if target == name or not name.startswith("refs/heads/") or ".." in name or (common / "reftable").exists():
        return False
    return not (common / name).exists() and name not in _packed(common)


def _has_replace_refs(common: Path) -> bool:
    replace = common / "refs" / "replace"
    return (replace.is_dir() and any(replace.iterdir())) or any(n.startswith("refs/replace/") for n in _packed(common))


def _packed(common: Path) -> dict[str, str]:
    try:
        data = (common / "packed-refs").read_text("utf-8")
    except FileNotFoundError:
        return {}
    refs: dict[str, str] = {}
    for line in data.splitlines():
        if line[:1] in ("#", "^", ""):
            continue
        oid, _, name = line.partition(" ")
        refs[name] = oid
    return refs
