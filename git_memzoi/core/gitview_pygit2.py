"""The pygit2 repository view: the only module that imports pygit2.

It answers history questions in-process (no git subprocess) and works in an empty repository, on a detached
HEAD, in a linked worktree and in a shallow clone. Paths come back decoded as UTF-8, never in git's quoted form.
"""

from __future__ import annotations

import itertools
import os
import re
from collections.abc import Iterable
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, cast

from git_memzoi.core import gitcache, gitenv
from git_memzoi.core.gitview import HISTORY_HINT, AnchorState
from git_memzoi.core.gitview_diffs import TreeDiffs
from git_memzoi.core.paths import nfc
from git_memzoi.core.patterns import lazy
from git_memzoi.errors import InputError, ToolError

if TYPE_CHECKING:
    from pygit2 import Commit, Oid

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
_HEX_ID = lazy(r"[0-9a-fA-F]{4,64}")
BARE = "a bare repository has no working tree (run it in a clone or a `git worktree add` of it)"


class NotARepository(InputError):
    """The directory is not inside a git working tree (exit 2)."""

    default_code = "not_a_repository"


class Pygit2RepoView(TreeDiffs):
    """A :class:`~git_memzoi.core.gitview.RepoView` over a real repository.

    Args:
        start: a directory inside the working tree. When git's own ``GIT_DIR`` or ``GIT_WORK_TREE`` is set (in a
            hook), the repository is where they say, read as git reads them (:mod:`~git_memzoi.core.gitenv`).

    Raises:
        NotARepository: when ``start`` is not inside a git working tree, or the repository is bare.
    """

    def __init__(self, start: Path) -> None:
        pygit2 = load_pygit2()
        self._pygit2 = pygit2
        self._staged_cache: tuple[list[tuple[str, str, int]], list[tuple[str, str, int]]] | None = None
        try:
            explicit = gitenv.env_git_dir(Path.cwd(), os.environ)
            found = str(explicit) if explicit else pygit2.discover_repository(str(start))
            if found is None:
                raise NotARepository(f"not a git repository: {start}")
            self._repo = pygit2.Repository(found, flags=pygit2.enums.RepositoryOpenFlag.NO_SEARCH)
            if gitenv.redirected(os.environ):  # git's environment, read as git reads it (issue 12)
                self._redirect(start)
        except pygit2.GitError as exc:
            raise NotARepository(f"not a git repository: {start} ({exc})") from None
        if self._repo.workdir is None:
            raise NotARepository(f"{start}: {BARE}")
        self.root = Path(self._repo.workdir).resolve()
        self.git_dir = Path(self._repo.path).resolve()

    def _redirect(self, start: Path) -> None:
        """Put the work tree where git's environment does (:func:`gitenv.work_tree`, paths relative to the current
        directory, as git hands them to a hook; like git, a linked worktree ignores the shared core.bare and
        core.worktree); objects in ``GIT_OBJECT_DIRECTORY`` (a quarantine) stay readable."""
        repo, env, cwd = self._repo, os.environ, Path.cwd()
        own, config = not (Path(repo.path) / "commondir").is_file(), repo.config
        worktree = str(config["core.worktree"]) if own and "core.worktree" in config else None
        bare = own and "core.bare" in config and config.get_bool("core.bare")
        tree = gitenv.work_tree(start, env, cwd=cwd, git_dir=Path(repo.path), core_worktree=worktree, core_bare=bare)
        if tree is None:
            raise NotARepository(f"{repo.path}: {BARE}")
        repo.workdir = str(tree)
        for objects in (env.get("GIT_OBJECT_DIRECTORY"), *env.get("GIT_ALTERNATE_OBJECT_DIRECTORIES", "").split(":")):
            if objects:
                repo.odb.add_disk_alternate(os.path.abspath(cwd / objects))

    def head(self) -> str | None:
        """The full id HEAD points at (detached or not), or ``None`` when no commit exists yet."""
        if self._repo.head_is_unborn:
            return None
        return str(self._repo.head.target)

    def is_shallow(self) -> bool:
        """True in a shallow clone."""
        return bool(self._repo.is_shallow)

    def anchor_states(self, revs: Iterable[str]) -> dict[str, tuple[AnchorState, str | None]]:
        """Resolve each distinct rev once and place it against HEAD (see :class:`AnchorState`)."""
        head = self.head()
        revs = set(revs)
        if head is None:
            return {rev: (AnchorState.NO_HEAD, None) for rev in revs}
        resolved = {rev: self._resolve(rev) for rev in revs}
        commits = {obj.id for obj, _ in resolved.values() if obj is not None}
        reachable = self._ancestors_among(self._repo.head.target, commits)
        out: dict[str, tuple[AnchorState, str | None]] = {}
        for rev, (obj, state) in resolved.items():
            if obj is None:
                out[rev] = (state, None)
            else:
                out[rev] = (AnchorState.ANCESTOR if obj.id in reachable else AnchorState.NOT_ANCESTOR, str(obj.id))
        return out

    def _ancestors_among(self, head: Oid | str, commits: set[Oid]) -> set[Oid]:
        """The members of ``commits`` that HEAD contains.

        Ancestry never changes once true, so the answers are kept in a derived cache
        (``<git dir>/memzoi/cache/ancestry.json``): what was an ancestor of an earlier HEAD that the current
        HEAD contains is an ancestor now. The rest are checked newest first against the last commit already
        known to be in HEAD's history (in a linear history each check only walks the commits between two
        anchors); one that is not below it (a merged side branch) is asked against HEAD itself.
        """
        repo = self._repo
        cached = self._cached_ancestors(head)
        found = {c for c in commits if str(c) in cached}
        known = head
        for commit in sorted(commits - found, key=lambda c: self._commit_time(str(c)), reverse=True):
            if (
                commit in (head, known)
                or repo.descendant_of(known, commit)
                or (known != head and repo.descendant_of(head, commit))
            ):
                found.add(commit)
                known = commit
        self._save_ancestors(head, cached, found)
        return found

    def _ancestry_file(self) -> Path:
        return self.git_dir / "memzoi" / "cache" / "ancestry.json"

    def _cached_ancestors(self, head: Oid | str) -> set[str]:
        cached = gitcache.read_ancestry(self._ancestry_file())
        if cached is None:
            return set()
        earlier, ancestors = cached
        if earlier == str(head):
            return ancestors
        try:
            contains = self._repo.descendant_of(head, earlier)
        except (KeyError, ValueError, self._pygit2.GitError):
            return set()
        return ancestors | {earlier} if contains else set()

    def _save_ancestors(self, head: Oid | str, cached: set[str], found: set[Oid]) -> None:
        gitcache.save_ancestry(self._ancestry_file(), str(head), cached | {str(c) for c in found})

    def _resolve(self, rev: str) -> tuple[Commit | None, AnchorState]:
        """Look ``rev`` up as an object id (full or abbreviated hex), never as a revision expression.

        An anchor records the commit a claim was confirmed at. A ref name or expression (``HEAD``, ``main``,
        ``HEAD~2``) would move with the branch, so the claim could never go suspect: it does not name a
        commit id, and a hex string that happens to be a branch name still means the object, not the branch.
        """
        pygit2 = self._pygit2
        if not _HEX_ID.fullmatch(rev):
            return None, AnchorState.NOT_COMMIT
        try:
            obj = self._repo.get(rev.lower())
        except (KeyError, ValueError, pygit2.GitError) as exc:
            if isinstance(exc, pygit2.AmbiguousError) or "ambiguous" in str(exc).lower():
                return None, AnchorState.AMBIGUOUS
            obj = None
        if obj is None:
            return None, AnchorState.SHALLOW if self.is_shallow() else AnchorState.MISSING
        try:
            return obj.peel(pygit2.Commit), AnchorState.ANCESTOR
        except (pygit2.InvalidSpecError, ValueError, pygit2.GitError):
            return None, AnchorState.NOT_COMMIT

    def changed_files(self, base: str, head: str) -> list[str]:
        """Sorted unique paths (NFC) changed between the trees of ``base`` and ``head``; renames give both."""
        changed = self._changed_since([base], head, None)
        if base not in changed:
            raise ToolError(
                f"cannot read the trees of {base[:12]} and {head[:12]}: {HISTORY_HINT}", "history_unavailable"
            )
        return sorted(changed[base])

    def changed_since(self, bases: Iterable[str], head: str) -> dict[str, frozenset[str]]:
        """For each commit of ``bases``: the paths (NFC) whose blob or mode differs between it and ``head``.

        Exact, and cheaper than one diff to HEAD per base: the bases are chained oldest first and only the
        segments between neighbours are diffed. Walking the segments back from HEAD tracks, for every path
        touched, its state (blob and mode) at the current base and at HEAD; a path differs iff the two differ,
        whatever order the chain has (commits of the same second sort by id). Without
        rename detection a rename is a delete plus an add, so both paths count. Segment diffs are kept in a derived
        cache (``<git dir>/memzoi/cache/segments.marshal``, this call's only): two commits' trees never change.
        A base whose trees (or an older base's) the clone lacks is left out of the result (a treeless clone).
        """
        return self._changed_since(bases, head, self.git_dir / "memzoi" / "cache" / "segments.marshal")

    def _changed_since(self, bases: Iterable[str], head: str, cache: Path | None) -> dict[str, frozenset[str]]:
        chain = [*sorted(set(bases), key=self._commit_time), head]
        known, used = gitcache.read_segments(cache) if cache else {}, {}
        at_head: dict[str, str] = {}
        differing: set[str] = set()
        out: dict[str, frozenset[str]] = {}
        for older, newer in reversed(list(itertools.pairwise(chain))):
            key = f"{older} {newer}"
            try:
                flat = known.get(key) or self._segment(older, newer)
            except ToolError:  # a tree this clone lacks: the bases from here back are each diffed to HEAD alone
                out.update(self._direct(chain[: chain.index(older) + 1], head))
                break
            if cache is not None:
                used[key] = flat
            for path, old_id, new_id in zip(flat[::3], flat[1::3], flat[2::3], strict=False):
                if at_head.setdefault(path, new_id) == old_id:
                    differing.discard(path)
                else:
                    differing.add(path)
            out[older] = frozenset(differing)
        if cache is not None and used.keys() != known.keys():
            gitcache.write_segments(cache, used)
        return out

    def _direct(self, bases: list[str], head: str) -> dict[str, frozenset[str]]:
        """The paths each of ``bases`` differs in from ``head``, by one diff each; the bases whose trees the clone
        lacks (a treeless partial clone) are left out."""
        out: dict[str, frozenset[str]] = {}
        for base in bases:
            try:
                out[base] = frozenset(self._segment(base, head)[::3])
            except ToolError:
                continue
        return out

    def _commit_time(self, oid: str) -> tuple[int, str]:
        # each anchor is sorted twice: look it up once
        times: dict[str, tuple[int, str]] = self.__dict__.setdefault("_times", {})
        if oid not in times:
            times[oid] = (self._repo[oid].peel(self._pygit2.Commit).commit_time, oid)
        return times[oid]

    def _segment(self, older: str, newer: str) -> list[str]:
        """``[path, old state, new state, ...]`` of the tree diff ``older`` → ``newer``; a state is
        ``<blob id>:<mode>`` (octal), so a mode-only change differs too and no order of the chain can hide one."""
        repo = self._repo
        if older == newer:
            return []
        try:
            old = repo[older].peel(self._pygit2.Tree)
            new = repo[newer].peel(self._pygit2.Tree)
            deltas = old.diff_to_tree(new).deltas  # a subtree a treeless clone lacks fails here
        except (KeyError, ValueError, self._pygit2.GitError) as exc:
            raise ToolError(f"cannot read the tree of {older} or {newer}: {exc}", "history_unavailable") from None
        out: list[str] = []
        for delta in deltas:
            old_file, new_file = delta.old_file, delta.new_file  # each access builds a new object
            path = new_file.path
            # %-formatting takes the mode as a number; an f-string's format spec goes through the enum's __format__
            out += (
                path if path.isascii() else nfc(path),
                "%s:%o" % (old_file.id, old_file.mode),  # noqa: UP031
                "%s:%o" % (new_file.id, new_file.mode),  # noqa: UP031
            )
        return out

    def tracked_under(self, prefix: str) -> list[str]:
        """Paths in git's index (staged or committed) at or below ``prefix`` (repository-relative POSIX)."""
        self._repo.index.read(False)
        folder = prefix.rstrip("/") + "/"
        return sorted(e.path for e in self._repo.index if e.path == prefix.rstrip("/") or e.path.startswith(folder))

    def commits_between(self, tip: str, hidden: str, limit: int) -> frozenset[str] | None:
        """The commits reachable from ``tip`` but not from ``hidden`` (full ids), or ``None`` past ``limit``."""
        repo = self._repo
        walker = repo.walk(repo[tip].id)
        walker.hide(repo[hidden].id)
        found: set[str] = set()
        for commit in walker:
            found.add(str(commit.id))
            if len(found) > limit:
                return None
        return frozenset(found)

    def tracked_paths(self) -> list[str]:
        """Every path in git's index (staged or committed), repository-relative POSIX, NFC."""
        self._repo.index.read(False)
        return [e.path if e.path.isascii() else nfc(e.path) for e in self._repo.index]

    def visible_paths(self) -> list[str]:
        """Every path git would show or commit: the index's paths and the untracked files it does not ignore."""
        new = 128  # pygit2.enums.FileStatus.WT_NEW: untracked and not ignored
        untracked = [p for p, flags in self._repo.status(untracked_files="all").items() if flags & new]
        return sorted({*self.tracked_paths(), *(p if p.isascii() else nfc(p) for p in untracked)})

    def uncommitted_paths(self) -> list[str]:
        """The paths whose working-tree or staged state differs from HEAD (modified, added, deleted, renamed, and
        untracked files git does not ignore), repository-relative POSIX, NFC, sorted."""
        ignored = 16384  # pygit2.enums.FileStatus.IGNORED
        changed = self._repo.status(untracked_files="all")
        return sorted(p if p.isascii() else nfc(p) for p, flags in changed.items() if flags and not flags & ignored)

    def is_ignored(self, path: str) -> bool:
        """True when git's ignore rules (``.gitignore``, info/exclude, core.excludesFile) ignore ``path``."""
        return bool(self._repo.path_is_ignored(path))

    def path_exists(self, commit: str, path: str) -> bool:
        """True when ``path`` is a file or directory in ``commit``'s tree (NFC or NFD spelling)."""
        tree = self._repo[commit].peel(self._pygit2.Tree)
        for spelling in {path, nfc(path), _nfd(path)}:
            try:
                tree[spelling.strip("/")]
            except (KeyError, ValueError):
                continue
            return True
        return False

    def head_blob(self, path: str) -> bytes | None:
        """The bytes of ``path`` in HEAD's tree, or ``None`` (no commits, no such file, not a file)."""
        head = self.head()
        if head is None:
            return None
        try:
            obj = self._repo[head].peel(self._pygit2.Tree)[path]
        except (KeyError, ValueError):
            return None
        return bytes(obj.data) if isinstance(obj, self._pygit2.Blob) else None

    @property
    def common_dir(self) -> Path:
        """The repository's common git dir: the main ``.git`` of a linked worktree (hooks live there)."""
        commondir = self.git_dir / "commondir"
        if commondir.is_file():
            return (self.git_dir / commondir.read_text("utf-8").strip()).resolve()
        return self.git_dir

    def config_value(self, key: str) -> str | None:
        """One configuration value as git reads it (local, global, system), or ``None`` when unset."""
        try:
            return str(self._repo.config[key])
        except KeyError:
            return None

    def resolve_commit(self, rev: str) -> str | None:
        """The full commit id ``rev`` (an id or a ref such as ``ORIG_HEAD``) names, or ``None``."""
        try:
            return str(self._repo.revparse_single(rev).peel(self._pygit2.Commit).id)
        except (KeyError, ValueError, self._pygit2.GitError, self._pygit2.InvalidSpecError):
            return None

    def staged_blobs(self) -> list[tuple[str, str]]:
        """(path NFC, blob id) of every index entry that differs from HEAD (all of them with no commits yet).

        The index is the one git is committing: ``GIT_INDEX_FILE`` when set (``git commit -a`` or a partial
        commit use a temporary index), else the repository's own. Deletions are not listed.
        """
        return [(path, blob) for path, blob, _mode in self.staged_files()]

    def staged_files(self) -> list[tuple[str, str, int]]:
        """:meth:`staged_blobs` with each entry's staged file mode (``0o100644``, ``0o100755``, ``0o120000`` for
        a symlink, whose blob holds the link's target path, ...), read from the index, never the working tree."""
        return self._staged(deleted=False)

    def staged_deletions(self) -> list[str]:
        """The paths the index no longer holds that HEAD's tree does (a staged ``git rm``); none before a first
        commit."""
        return [path for path, _, _ in self._staged(deleted=True)]

    def _staged(self, *, deleted: bool) -> list[tuple[str, str, int]]:
        """The staged changes against HEAD, the deletions or the rest: one HEAD → index diff per view, so the
        hook's two questions cost one comparison."""
        if self._staged_cache is None:
            self._staged_cache = self._staged_changes()
        return self._staged_cache[1 if deleted else 0]

    def _staged_changes(self) -> tuple[list[tuple[str, str, int]], list[tuple[str, str, int]]]:
        pygit2 = self._pygit2
        index_file = os.environ.get("GIT_INDEX_FILE")
        if index_file:
            index = pygit2.Index(str(Path(index_file).resolve()))
        else:
            index = self._repo.index
            index.read(False)
        head = self.head()
        if head is None:
            return [(e.path if e.path.isascii() else nfc(e.path), str(e.id), e.mode) for e in index], []
        # libgit2 compares the index with HEAD's tree in C: a Python loop over every index entry costs ~0.5 s
        # on an 8,000-file repository (evals/bench/hooks.py)
        diff = self._repo[head].peel(pygit2.Tree).diff_to_index(index)  # HEAD → index (a GIT_INDEX_FILE has no repo)
        kept: list[tuple[str, str, int]] = []
        gone: list[tuple[str, str, int]] = []
        for delta in diff.deltas:
            is_gone = delta.status == pygit2.enums.DeltaStatus.DELETED
            side = delta.old_file if is_gone else delta.new_file
            (gone if is_gone else kept).append(
                (side.path if side.path.isascii() else nfc(side.path), str(side.id), side.mode)
            )
        return kept, gone

    def local_config_bytes(self) -> bytes:
        """The raw bytes of the repository's own ``config`` file (common dir), ``b""`` when it has none."""
        try:
            return (self.common_dir / "config").read_bytes()
        except FileNotFoundError:
            return b""

    def pinned_commit(self, oid: str) -> dict[str, object] | None:
        """``{id, tree, parents}`` of the commit whose FULL id is ``oid`` (40 or 64 hex), else ``None``.

        Only an exact object id is looked up: never a ref name, an abbreviation or a revision expression.
        """
        if not re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", oid):
            return None
        try:
            obj = self._repo.get(oid)
            commit = obj.peel(self._pygit2.Commit) if obj is not None else None
        except (KeyError, ValueError, self._pygit2.GitError, self._pygit2.InvalidSpecError):
            return None
        if commit is None or str(commit.id) != oid:
            return None
        return {"id": oid, "tree": str(commit.tree_id), "parents": [str(p) for p in commit.parent_ids]}

    def first_parent_chain(self, base: str, head: str, limit: int = 100_000) -> list[str] | None:
        """The commits from ``head`` back to ``base`` along first parents (head first), or ``None`` when
        ``base`` is not on ``head``'s first-parent chain within ``limit`` steps."""
        chain, current = [head], head
        while current != base and len(chain) <= limit:
            parents = cast("Commit", self._repo[current]).parent_ids  # the stubs' lookup gives the base Object
            if not parents:
                return None
            current = str(parents[0])
            chain.append(current)
        return chain if current == base else None


# where OpenSSL looks for certificates; pygit2 hands them to libgit2 when it is imported
_TLS_VARIABLES = ("SSL_CERT_FILE", "SSL_CERT_DIR")


def load_pygit2() -> ModuleType:
    """pygit2, imported on first use (55 to 100 ms), also where its import would fail on the TLS set-up.

    Importing pygit2 hands OpenSSL's certificate locations to libgit2 and raises ``GitError`` ("failed to load
    certificates") when neither exists: ``SSL_CERT_FILE`` and ``SSL_CERT_DIR`` naming a removed bundle, or a
    container without a certificate store (reported of snapcraft and dvc). This tool never speaks TLS through
    libgit2, so the import is retried with those variables unset (the system's locations), then with
    ``SSL_CERT_DIR`` set to pygit2's own folder, which holds no certificate; the environment is restored after.

    Raises:
        ImportError, GitError: pygit2 cannot be loaded for another reason.
    """
    try:
        import pygit2
    except Exception as exc:  # pygit2's GitError: its class is only reachable through the failed import
        if "certificates" not in str(exc):
            raise
        return _load_pygit2_without_tls()
    return pygit2


def _load_pygit2_without_tls() -> ModuleType:
    import importlib.util

    saved = {name: os.environ.pop(name) for name in _TLS_VARIABLES if name in os.environ}
    try:
        try:
            import pygit2
        except Exception as exc:
            if "certificates" not in str(exc):
                raise
            spec = importlib.util.find_spec("pygit2")
            folders = list(spec.submodule_search_locations or []) if spec is not None else []
            os.environ["SSL_CERT_DIR"] = folders[0] if folders else os.path.dirname(os.__file__)
            import pygit2
    finally:
        for name in _TLS_VARIABLES:
            os.environ.pop(name, None)
        os.environ.update(saved)
    return pygit2


def init_repository(root: Path, branch: str = "main") -> None:
    """Create an empty, non-bare git repository at ``root`` whose HEAD names ``branch`` (libgit2's init)."""
    pygit2 = load_pygit2()
    pygit2.init_repository(str(root), bare=False, initial_head=branch)


def _nfd(path: str) -> str:
    import unicodedata

    return unicodedata.normalize("NFD", path)


def commit_files(root: Path, files: dict[str, bytes], message: str, stamp: int) -> str:
    """Commit exactly ``files`` (path → bytes; the whole tree) on HEAD of the repository at ``root`` with a fixed
    author and time (``stamp``, seconds since the epoch); returns the new commit's hex id. Used by the capture
    eval to build a base and a head commit from fixtures."""
    pygit2 = load_pygit2()
    repo = pygit2.Repository(str(root))
    index = pygit2.Index()
    for path, data in sorted(files.items()):
        index.add(pygit2.IndexEntry(path, repo.create_blob(data), pygit2.enums.FileMode.BLOB))
    tree = index.write_tree(repo)
    who = pygit2.Signature("memzoi capture eval", "capture-eval@memzoi.invalid", stamp, 0)
    parents = [] if repo.head_is_unborn else [repo.head.target]
    return str(repo.create_commit("HEAD", who, who, message, tree, parents))


def drop_object(root: Path, oid: str) -> bool:
    """Delete the loose object ``oid`` from the repository at ``root`` (the capture eval's ``git_object_missing``
    stale check); ``False`` when it is not a loose object."""
    pygit2 = load_pygit2()
    repo = pygit2.Repository(str(root))
    path = Path(repo.path) / "objects" / oid[:2] / oid[2:]
    if not path.is_file():
        return False
    path.chmod(0o644)
    path.unlink()
    return True
