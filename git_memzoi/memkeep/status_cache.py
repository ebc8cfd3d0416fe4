"""The status result cache (io): a repeated ``git memkeep status`` with nothing changed answers from the last run.

Issue 17 ("warm status ≤ 100 ms"): once the parse cache serves every entry, most of a warm status is loading
pygit2 (40–130 ms) and reading the history caches, to recompute an answer that cannot have changed. The suspect
set is a function of its inputs (memkeep README "How staleness works"): HEAD's commit, the store (which entry
files, each file's bytes, the store's settings), the day, and the history HEAD reaches. This cache keeps the last
result beside a key of those inputs, read without pygit2, and serves it only when the key is equal:

- the tool's version, the start folder, ``--store``/``--store-dir``, the repository root, git directory and
  common directory (found as :mod:`git_memzoi.core.gitenv` finds them), the located store (its folder and
  settings: :func:`~git_memzoi.memkeep.store.locate` runs again, as the full path does);
- HEAD as git stores it: the ``HEAD`` file, and the commit id its branch resolves to (a loose ref, else
  ``packed-refs``); the ``shallow`` and ``info/grafts`` files' bytes;
- every entry file's name and stat signature ``[size, mtime_ns, ctime_ns, inode]`` (the parse cache's, whose
  "racily clean" rule applies: a result is saved only when every signature is older than the run by
  :data:`~git_memzoi.core.parse_cache.RACY_NS`);
- the clock's today.

It never serves, and never saves, when it cannot read those inputs plainly: git's environment redirects the
repository, its objects or its history (``GIT_DIR``, ``GIT_WORK_TREE``, :data:`_GIT_SETTINGS`), refs are stored in a reftable, replace refs
exist, HEAD is unborn, or the saved answer holds an ``anchor_unreachable`` verdict (a fetch can bring an anchor in
without moving HEAD). The file lives under the git directory (``memzoi/cache/status-<store>.pickle``), is
written atomically, and a missing, foreign or unreadable one only costs the full computation. Like the parse
cache it is trusted as much as the git directory's hooks, and a file without :data:`MAGIC` is never decoded.
"""

from __future__ import annotations

import io
import os
import pickle
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from git_memzoi import __version__
from git_memzoi.core import gitenv, gitrefs
from git_memzoi.core.parse_cache import RACY_NS
from git_memzoi.errors import MemzoiError

if TYPE_CHECKING:
    from git_memzoi.memkeep.commands import Options, StatusResult

VERSION = 1
MAGIC = b"memzoi status cache 1\n"
# git's variables that move the repository, its objects or its history without touching a file the key reads
_GIT_SETTINGS = (
    "GIT_COMMON_DIR",
    "GIT_CEILING_DIRECTORIES",
    "GIT_DISCOVERY_ACROSS_FILESYSTEM",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_NO_REPLACE_OBJECTS",
    "GIT_REPLACE_REF_BASE",
    "GIT_SHALLOW_FILE",
    "GIT_GRAFT_FILE",
)


@dataclass(frozen=True)
class Key:
    """The inputs of one status run (module rule): ``values``, compared whole; ``path`` is where its answer is
    kept; ``head`` (commit id), ``root`` and ``git_dir`` as the key read them, for :func:`save`'s check against
    pygit2; ``youngest_ns``, the newest mtime or ctime of an entry file (the racy rule)."""

    path: Path
    values: tuple[Any, ...]
    head: str
    root: str
    git_dir: str
    youngest_ns: int


def key(options: Options) -> Key | None:
    """The key of a status run with ``options``, read from the file system alone; ``None`` when any input cannot
    be read plainly (module rule), and the caller computes in full. Never raises."""
    try:
        return _key(options)
    except (OSError, UnicodeDecodeError, ValueError, MemzoiError):  # the full path reports what is wrong
        return None


def _key(options: Options) -> Key | None:
    from git_memzoi.memkeep import store as store_mod

    env = os.environ
    if gitenv.redirected(env) or any(env.get(name) for name in _GIT_SETTINGS):
        return None
    start = options.start.resolve()
    root = gitenv.plain_top(start)
    dirs = gitenv.git_dirs(root, env) if root is not None else None
    if root is None or dirs is None:
        return None
    git_dir, common = (d.resolve() for d in dirs)
    head = gitrefs.plain_head(git_dir, common)
    if head is None:
        return None
    store = store_mod.locate(start, root, store=options.store, store_dir=options.store_dir)
    files = store_mod.entry_signatures(store)
    youngest = max((max(sig[1], sig[2]) for _, sig in files if sig is not None), default=0)
    values = (
        VERSION,
        __version__,
        str(start),
        options.store,
        options.store_dir,
        str(root),
        str(git_dir),
        str(common),
        repr(store),
        head,
        _bytes(common / "shallow"),
        _bytes(common / "info" / "grafts"),
        options.clock.today().isoformat(),
        files,
    )
    path = git_dir / "memzoi" / "cache" / f"status-{store_mod.cache_name(store)}.pickle"
    return Key(path, values, head[1], str(root), str(git_dir), youngest)


def _bytes(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


def load(found: Key) -> StatusResult | None:
    """The answer saved under ``found``'s path when its key equals ``found``'s, else ``None``. Never raises."""
    try:
        with open(found.path, "rb") as handle:
            if handle.read(len(MAGIC)) != MAGIC:
                return None
            data = io.BytesIO(handle.read())
        unpickler = pickle.Unpickler(data)
        if unpickler.load() != found.values:
            return None
        result: StatusResult = unpickler.load()
        return result
    except Exception:  # an unreadable or foreign cache (pickle raises many kinds) only costs the full computation
        return None


def save(found: Key, result: StatusResult, head: str | None, root: Path, git_dir: Path) -> None:
    """Keep ``result`` under ``found`` when the full run saw the same repository (``head``, ``root``,
    ``git_dir`` from pygit2 equal the key's), every entry signature is older than the run by ``RACY_NS``, and no
    verdict is ``anchor_unreachable`` (module rule). Best effort."""
    from git_memzoi.core.atomic import write_cache

    same = (found.head, found.root, found.git_dir) == (head, str(root), str(git_dir))
    settled = found.youngest_ns < time.time_ns() - RACY_NS
    if not (same and settled) or any(v.reason == "anchor_unreachable" for v in result.report.verdicts):
        return
    buffer = io.BytesIO()
    pickler = pickle.Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL)
    pickler.dispatch_table = {MappingProxyType: _reduce_proxy}
    try:
        pickler.dump(found.values)
        pickler.dump(result)
    except (pickle.PicklingError, TypeError, AttributeError):
        return
    write_cache(found.path, MAGIC + buffer.getvalue())


def _reduce_proxy(proxy: Mapping[str, Any]) -> tuple[Any, tuple[dict[str, Any]]]:
    return _proxy, (dict(proxy),)


def _proxy(values: dict[str, Any]) -> Mapping[str, Any]:
    """A read-only view of ``values``: how a verdict's evidence is rebuilt from the cache."""
    return MappingProxyType(values)
