"""The ancestry cache only ever answers what git history still says (derived, keyed by immutable commit ids)."""

from __future__ import annotations

import json

from git_memzoi.core.gitview import AnchorState
from git_memzoi.core.gitview_pygit2 import Pygit2RepoView
from tests.support.repos import Repo


def states(repo: Repo, *revs: str) -> dict[str, AnchorState]:
    return {rev: state for rev, (state, _) in Pygit2RepoView(repo.root).anchor_states(revs).items()}


def test_cached_answers_follow_head_forward_and_are_dropped_after_a_rewrite(repo: Repo) -> None:
    base = repo.commit_paths("base", {"a.txt": "1\n"})
    repo.git("checkout", "-q", "-b", "topic")
    side = repo.commit_paths("side", {"b.txt": "1\n"})
    assert states(repo, base, side) == {base: AnchorState.ANCESTOR, side: AnchorState.ANCESTOR}
    cache = repo.root / ".git" / "memzoi" / "cache" / "ancestry.json"
    assert json.loads(cache.read_text())["head"] == side

    repo.commit_paths("more", {"c.txt": "1\n"})  # HEAD moves forward: the cached answers still hold
    assert states(repo, base, side) == {base: AnchorState.ANCESTOR, side: AnchorState.ANCESTOR}

    repo.git("checkout", "-q", "main")  # a HEAD that does not contain the cached one: the cache is not used
    repo.commit_paths("main work", {"d.txt": "1\n"})
    assert states(repo, base, side) == {base: AnchorState.ANCESTOR, side: AnchorState.NOT_ANCESTOR}


def test_a_corrupt_cache_is_ignored(repo: Repo) -> None:
    base = repo.commit_paths("base", {"a.txt": "1\n"})
    cache = repo.root / ".git" / "memzoi" / "cache" / "ancestry.json"
    cache.parent.mkdir(parents=True)
    cache.write_text("{not json")
    assert states(repo, base) == {base: AnchorState.ANCESTOR}
    assert json.loads(cache.read_text()) == {"head": base, "ancestors": [base]}
