"""The segment cache of ``changed_since`` (derived, keyed by two immutable commit ids) never changes an answer."""

from __future__ import annotations

import marshal
import os
from pathlib import Path

import pytest

from git_memzoi import __version__
from git_memzoi.core import gitcache
from git_memzoi.core.gitview_pygit2 import Pygit2RepoView
from tests.support.repos import Repo


def cache_file(repo: Repo) -> Path:
    return repo.root / ".git" / "memzoi" / "cache" / "segments.marshal"


def stored(repo: Repo) -> dict[str, list[str]]:
    data = cache_file(repo).read_bytes()
    assert data.startswith(gitcache.SEGMENTS_MAGIC)
    payload = marshal.loads(data[len(gitcache.SEGMENTS_MAGIC) :])
    assert payload["tool"] == __version__
    segments: dict[str, list[str]] = payload["segments"]
    return segments


def history(repo: Repo) -> list[str]:
    """Commits with edits, a revert to an earlier blob, a delete, a rename and a mode-only change."""
    bases = [repo.commit_paths("one", {"a.txt": "1\n", "b.txt": "b\n", "c.txt": "c\n"})]
    bases.append(repo.commit_paths("two", {"a.txt": "2\n", "d/e.txt": "e\n"}))
    bases.append(repo.commit_paths("three", {"a.txt": "1\n"}))  # back to the blob of "one"
    repo.git("rm", "-q", "b.txt")
    repo.git("mv", "c.txt", "d/c.txt")
    bases.append(repo.commit_paths("four", {}))
    os.chmod(repo.root / "d" / "e.txt", 0o755)
    bases.append(repo.commit_paths("five", {}))  # mode only
    repo.commit_paths("six", {"f.txt": "f\n"})
    return bases


def expected(repo: Repo, bases: list[str]) -> dict[str, frozenset[str]]:
    view, head = Pygit2RepoView(repo.root), repo.head()
    return {base: frozenset(view.changed_files(base, head)) for base in bases}


def test_answers_are_the_same_diffed_and_cached(repo: Repo) -> None:
    bases = history(repo)
    want = expected(repo, bases)
    assert not cache_file(repo).exists()  # changed_files does not use the cache
    assert want[bases[0]] == {"b.txt", "c.txt", "d/c.txt", "d/e.txt", "f.txt"}
    first = Pygit2RepoView(repo.root).changed_since(bases, repo.head())
    assert len(stored(repo)) == len(bases)
    second = Pygit2RepoView(repo.root).changed_since(bases, repo.head())
    assert first == second == want


def test_after_a_commit_only_the_segments_of_the_new_chain_are_kept(repo: Repo) -> None:
    bases = history(repo)
    Pygit2RepoView(repo.root).changed_since(bases, repo.head())
    old_head = repo.head()
    head = repo.commit_paths("seven", {"a.txt": "7\n"})
    assert Pygit2RepoView(repo.root).changed_since(bases, head) == expected(repo, bases)
    keys = set(stored(repo))
    assert len(keys) == len(bases) and not any(old_head in key for key in keys)
    assert sum(key.endswith(f" {head}") for key in keys) == 1


MAGIC = gitcache.SEGMENTS_MAGIC


@pytest.mark.parametrize(
    "content",
    [
        b"{not json",
        b'{"version": 2, "tool": "%s", "segments": {}}' % __version__.encode(),  # version 2's JSON
        MAGIC + b"garbage",
        MAGIC,
        MAGIC + marshal.dumps([]),
        MAGIC + marshal.dumps({"tool": "0.0.0-other", "segments": {}}),
        MAGIC + marshal.dumps({"tool": __version__, "segments": {"x y": [1, 2, 3]}}),
        MAGIC + marshal.dumps({"tool": __version__, "segments": []}),
    ],
)
def test_a_corrupt_or_foreign_cache_is_ignored(repo: Repo, content: bytes) -> None:
    bases = history(repo)
    cache_file(repo).parent.mkdir(parents=True, exist_ok=True)
    cache_file(repo).write_bytes(content)
    assert Pygit2RepoView(repo.root).changed_since(bases, repo.head()) == expected(repo, bases)
    assert len(stored(repo)) == len(bases)


def test_the_json_cache_of_version_2_is_removed_when_version_3_is_written(repo: Repo) -> None:
    bases = history(repo)
    legacy = cache_file(repo).parent / gitcache.LEGACY_SEGMENTS
    legacy.parent.mkdir(parents=True, exist_ok=True)
    legacy.write_text('{"version": 2, "segments": {}}')
    Pygit2RepoView(repo.root).changed_since(bases, repo.head())
    assert not legacy.exists()
    assert sorted(p.name for p in legacy.parent.iterdir()) == ["segments.marshal"]


def test_a_malformed_segment_is_diffed_again(repo: Repo) -> None:
    bases = history(repo)
    Pygit2RepoView(repo.root).changed_since(bases, repo.head())
    segments = stored(repo)
    key = next(iter(segments))
    segments[key] = segments[key][:-1]  # not a whole number of (path, old, new)
    cache_file(repo).write_bytes(MAGIC + marshal.dumps({"tool": __version__, "segments": segments}))
    assert Pygit2RepoView(repo.root).changed_since(bases, repo.head()) == expected(repo, bases)
    assert stored(repo)[key] != segments[key]


def test_any_chain_order_gives_the_same_answer(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    """Bases made in the same second sort by id, so the chain may pass through a commit without a file between
    two commits with it (here d/e.txt: absent in "one", 644 in "four", 755 at HEAD). The mode change must still
    count: each side of a segment is the path's blob and mode (BR: a mode-only change hidden by chain order)."""
    import itertools

    bases = history(repo)
    want = expected(repo, bases)
    assert "d/e.txt" in want[bases[3]]  # "four": the mode differs from HEAD's
    for order in itertools.permutations(bases):
        rank = {oid: i for i, oid in enumerate(order)}
        monkeypatch.setattr(Pygit2RepoView, "_commit_time", lambda self, oid, rank=rank: (rank[oid], oid))
        view = Pygit2RepoView(repo.root)
        assert view._changed_since(bases, repo.head(), None) == want, order
        cache_file(repo).unlink(missing_ok=True)
        assert view.changed_since(bases, repo.head()) == want, order
