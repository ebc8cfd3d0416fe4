"""What the git hooks check (io): the pre-commit gate over the staged memory, and the post-merge / post-checkout
staleness report.

pre-commit reads the *staged* blobs (the index git is committing, ``GIT_INDEX_FILE`` honoured), never the
working tree, and refuses: files under ``.memzoi/local/`` (an older version's private folder; private memory now
lives in the git directory, where git cannot stage it); symlinks among the memory files (the staged mode
120000, whatever the working tree holds); records and packets that do not parse (file and line named) or are not
repo-safe; memkeep entries that break a lint rule; memory files holding a secret (the rule is named, the secret
never printed), and so the memzoi-managed blocks of any other staged Markdown file (an ``export --file``
projection such as CLAUDE.md or AGENTS.md, an ``integrate`` instructions block). Entries whose scope the staged
change touches are reported, not blocked. Files a hook manager names (the pre-commit framework passes the
files of ``run --all-files`` or ``--from-ref A --to-ref B``) and that are not staged are read from the working
tree and checked by the same rules, so CI catches memory that reached the branch with ``--no-verify``.
post-merge and post-checkout print the entries that became suspect and never fail the git operation.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from git_memzoi.errors import MemzoiError

if TYPE_CHECKING:
    from git_memzoi.core.gitview_pygit2 import Pygit2RepoView
    from git_memzoi.memkeep.api import Entry, Store

# Which files are memory files is memzoi's list (``git_memzoi.memzoi.memory_files``), shared with doctor.
# content classes that must never reach repo records (vocab.CONTENT_CLASSES minus the repo-safe ones)
PRIVATE_CLASSES = frozenset(
    {
        "raw_transcript",
        "private_personal_data",
        "screen_or_activity_history",
        "private_endpoint",
        "undisclosed_vulnerability",
        "unminimized_private_evidence",
        "temporary_task_state",
        "local_only_state",
    }
)
_IGNORED_RECORD_FILES = ("index.md", "log.md")
SYMLINK_MODE = 0o120000  # git's file mode of a symlink; its blob is the link's target path
_SECRET_MESSAGE = "a memory file must not hold a secret; remove it (and rotate it if it was real)"


@dataclass(frozen=True)
class Finding:
    """One refused staged file: ``rule`` is a stable code; ``message`` never contains the offending text."""

    path: str
    rule: str
    message: str
    line: int | None = None

    def where(self) -> str:
        """``path:line`` (or the path)."""
        return f"{self.path}:{self.line}" if self.line else self.path


@dataclass(frozen=True)
class GuardResult:
    """The pre-commit verdict: violations block the commit; ``touched`` entries are only reported."""

    violations: tuple[Finding, ...]
    touched: tuple[tuple[str, str], ...] = ()  # (entry id, entry path)
    note: str | None = None  # why there was no memory to check (:func:`memory_store`), said on stderr
    committed: frozenset[str] = frozenset()  # the checked paths read from the working tree, not the index
    unlocked: tuple[str, ...] = ()  # staged records whose HEAD version says locked: true and this one does not
    deleted_locked: tuple[str, ...] = ()  # records this commit removes whose HEAD version says locked: true
    unreadable: tuple[str, ...] = ()  # unstaged entries that cannot be read (``path`` or ``path:line``): scope unknown
    index_behind: tuple[str, str] | None = None  # (INDEX.md path, how it differs) when the committed entries disagree

    @property
    def only_committed(self) -> bool:
        """True when every refused file was read from the working tree (CI modes): nothing staged to unstage."""
        return bool(self.violations) and all(f.path in self.committed for f in self.violations)

    @property
    def exit_code(self) -> int:
        """1 when anything is refused, else 0."""
        return 1 if self.violations else 0


@dataclass
class _Staged:
    """The staged memkeep entries (path → parsed entry) and the ones that did not parse."""

    entries: dict[str, Entry] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)


def pre_commit(start: Path, named: Sequence[str] = ()) -> GuardResult:
    """Check the staged change of the repository around ``start``, and the ``named`` files that are not staged.

    Args:
        start: a folder in the repository (the hook's working directory).
        named: file paths a hook manager passes (relative to ``start``, or absolute); a path outside the
            working tree, missing, or neither a regular file nor a symlink is skipped. Staged paths are read
            from the index, the others from the working tree (issue 12, "CI modes").
    """
    from git_memzoi.core import safe_read
    from git_memzoi.core.gitview_pygit2 import Pygit2RepoView
    from git_memzoi.memkeep import api as memkeep_api
    from git_memzoi.memzoi import memory_files

    view = Pygit2RepoView(start)
    staged_files = view.staged_files()
    store, note = memory_store(view.root)
    findings: list[Finding] = []
    unlocked: list[str] = []
    staged = _Staged()
    files: list[tuple[str, int, Callable[[], bytes]]] = [
        (path, mode, partial(view.blob_bytes, blob)) for path, blob, mode in staged_files
    ]
    files += _worktree_files(view.root, start, named, {path for path, _, _ in staged_files})
    located: dict[str, Store | str | None] = {}
    stores, unlocated = nested_stores(view.root, [path for path, _, _ in files], store, located=located)
    # the stores below the root a staged change is under, whose entries it does not stage (for the scope report)
    near = nested_stores(view.root, [p for p, _, _ in staged_files], store, entries_only=False, located=located)[0]
    below = [s for s in near if s.rel not in {o.rel for o in stores}]
    if (stores or below) and store is None:
        note = None  # a store below the root holds memory to check
    store_of = partial(_store_rel, [s.rel for s in stores] + ([store.rel] if store is not None else []))
    if any(memory_files.kind(path, store_of(path)) is not None for path, _, _ in files):
        from git_memzoi.memzoi import secrets  # only a commit with memory in it loads the scanner (~35 ms)

        secrets.remember_shapes_in(view.git_dir / "memzoi" / "cache")  # the next commit skips detect-secrets
    for path, mode, read in files:
        kind = memory_files.kind(path, store_of(path))
        if kind == memory_files.PRIVATE:
            findings.append(
                Finding(
                    path,
                    "private_local",
                    "files under .memzoi/local/ are private and never committed; unstage it with `git rm --cached`",
                )
            )
            continue
        in_store = kind == memory_files.ENTRY
        if path in unlocated:  # the store cannot be located: its entries cannot be checked, so none is committed
            findings.append(Finding(path, "store_unlocated", unlocated[path]))
            if mode != SYMLINK_MODE:
                findings.extend(secret_findings(path, read()))
            continue
        if path.rpartition("/")[2] == memkeep_api.STORE_CONFIG_NAME and mode == SYMLINK_MODE:  # no linked settings
            findings.append(Finding(path, "symlink", "a .memkeep.yml must be a regular file, not a symlink"))
            continue
        if kind not in (memory_files.MEMZOI_FILE, memory_files.ENTRY, memory_files.INDEX):
            if mode != SYMLINK_MODE and kind == memory_files.MARKDOWN:
                findings.extend(projection_findings(path, read()))
            continue
        if mode == SYMLINK_MODE:
            findings.append(Finding(path, "symlink", symlink_message(path, in_store)))
            continue
        try:  # over its cap a memory file is refused unscanned: 10 MB took the secret scan 15 s (issue 13)
            data = safe_read.within(read(), path, memory_files.max_bytes(kind))
        except safe_read.FileRefused as exc:  # too large; or, from the working tree, no longer a regular file
            findings.append(Finding(path, exc.code, exc.reason))
            continue
        findings.extend(secret_findings(path, data))
        if _is_record(path):
            findings.extend(_record_findings(view.root, path, data))
            if _unlocks(view.head_blob(path), data):
                unlocked.append(path)
        elif path.endswith(".md") and path.startswith(memory_files.PROPOSALS):
            findings.extend(_packet_findings(path, data))
        elif in_store and path.endswith(".md"):
            _parse_entry(path, data, staged)
    findings.extend(staged.findings)
    deleted = view.staged_deletions()
    staged_paths = sorted({*(p for p, _, _ in staged_files), *deleted})  # a removed or renamed file hits a scope too
    held = {other.rel: _Staged() for other in stores}  # each staged entry is linted with its own store's
    for path in [p for p in staged.entries if store_of(p) in held]:
        held[store_of(path) or ""].entries[path] = staged.entries.pop(path)
    entries, unreadable = _store_entries(store, staged, view.git_dir)
    if store is not None and staged.entries:
        findings.extend(_lint_findings(store, entries, set(staged.entries)))
    touched_entries = list(entries)
    for other in stores:
        theirs, _ = _store_entries(other, held[other.rel], view.git_dir)
        findings.extend(_lint_findings(other, theirs, set(held[other.rel].entries)))
        touched_entries += theirs
    for other in below if staged_paths else ():  # a store whose entries this commit leaves alone, hit by it
        touched_entries += _store_entries(other, _Staged(), view.git_dir)[0]
    watched = _watched_records(view.root) if staged_paths else []  # nothing staged: no index to read
    touched = tuple(sorted(_touched(touched_entries, staged_paths) + _touched(watched, staged_paths)))
    committed = frozenset(path for path, _, _ in files[len(staged_files) :])
    gone = [p for p in deleted if _is_record(p) and _unlocks(view.head_blob(p), b"")]
    refused = {f.path for f in findings}  # a staged unreadable entry is refused already: said once
    unseen = tuple(where for path, where in unreadable if staged_paths and path not in refused)
    behind = _index_behind(store, entries, {p: read for p, _, read in files}, staged_paths) if store else None
    return GuardResult(tuple(_unique(findings)), touched, note, committed, tuple(unlocked), tuple(gone), unseen, behind)


def _index_behind(
    store: Store, entries: list[Entry], reads: dict[str, Callable[[], bytes]], staged_paths: list[str]
) -> tuple[str, str] | None:
    """``(INDEX.md path, drift)`` when this commit changes the store's entries or INDEX.md and the committed
    INDEX.md (staged, else the working tree's) is not what ``git memkeep index`` writes from them: a warning,
    never a refusal. A merge whose conflict was resolved by hand runs no post-merge, so the driver's two lines of
    a conflicted entry stayed in INDEX.md (a fresh user's walk)."""
    from git_memzoi.core import safe_read
    from git_memzoi.memkeep import api as memkeep
    from git_memzoi.memzoi import memory_files

    prefix, index = memory_files.store_prefixes(store.rel)
    if not any(p == index or p.startswith(prefix) for p in staged_paths):
        return None
    try:
        data = reads[index]() if index in reads else safe_read.read_bytes(store.index_path, safe_read.MAX_INDEX_BYTES)
        drift = memkeep.index_drift(entries, data.decode("utf-8"))
    except (OSError, UnicodeDecodeError, MemzoiError):
        return None  # a missing or unreadable INDEX.md is lint's and index's to say
    return (index, drift) if drift else None


def _is_record(path: str) -> bool:
    """Whether the repository path ``path`` names a canonical record file (not ``index.md`` or ``log.md``)."""
    from git_memzoi.memzoi import memory_files

    name = path.rsplit("/", 1)[-1]
    return path.endswith(".md") and path.startswith(memory_files.RECORDS) and name not in _IGNORED_RECORD_FILES


def _unlocks(before: bytes | None, after: bytes) -> bool:
    """Whether a record's committed version (``before``; ``None``: new) says ``locked: true`` and the staged one
    (``after``) does not: unlocking is a human edit, which the hook warns about, never blocks (records/lock.py)."""
    from git_memzoi.memzoi import record_store

    def locked(data: bytes) -> bool:
        try:
            return record_store.parse_fields(data)[1].get("locked") is True
        except MemzoiError:  # an unparsable file: the record findings name it
            return False

    return before is not None and locked(before) and not locked(after)


def _worktree_files(
    root: Path, start: Path, named: Sequence[str], staged: set[str]
) -> list[tuple[str, int, Callable[[], bytes]]]:
    """``(path, git file mode, reader)`` of each named file that is in the working tree and not staged; a
    symlink is never followed (its mode says what it is), anything else that is not a regular file is skipped."""
    import os
    import stat

    out: list[tuple[str, int, Callable[[], bytes]]] = []
    for name in dict.fromkeys(named):
        full = Path(os.path.abspath(start / name))
        try:
            rel = full.relative_to(root).as_posix()
            info = full.lstat()
        except (ValueError, OSError):
            continue
        if rel in staged or rel.startswith(".git/"):
            continue
        if stat.S_ISLNK(info.st_mode):
            out.append((rel, SYMLINK_MODE, partial(_link_target, full)))
        elif stat.S_ISREG(info.st_mode):
            out.append((rel, 0o100644, partial(_read_regular, full)))
    return out


def _link_target(path: Path) -> bytes:
    import os

    return os.fsencode(os.readlink(path))


def _read_regular(path: Path) -> bytes:
    """The bytes of a regular working-tree file; ``b""`` when it went away or is unreadable (it is skipped);
    FileRefused when it is no longer a regular file (a FIFO is never opened)."""
    from git_memzoi.core import safe_read

    try:
        return safe_read.read_bytes(path, None)
    except OSError:
        return b""


def _unique(findings: list[Finding]) -> list[Finding]:
    return sorted(dict.fromkeys(findings), key=lambda f: (f.path, f.line or 0, f.rule))


def memory_store(root: Path, *, below: bool = False) -> tuple[Store | None, str | None]:
    """The memkeep store of the working tree at ``root`` (``None`` when there is none or it cannot be located),
    and why a hook has no memory to check there, in one line, or ``None`` when it has: neither a memkeep store
    nor ``.memzoi/`` is there (a hook that looked in the wrong folder must not pass silently, issue 12), or the
    memkeep store cannot be located (a bad ``.memkeep.yml``). With ``below``, a store in a subfolder holding a
    tracked entry (:func:`stores_below`) is memory to check too (post-merge, post-checkout)."""
    from git_memzoi.memkeep import api as memkeep

    try:
        return memkeep.locate_store(root, root), None
    except MemzoiError as exc:
        if exc.code != "store_not_found":
            return None, f"memkeep store not checked: {exc.message}"
        if not (root / ".memzoi").is_dir() and not (below and _any_store_below(root)):
            return None, f"no memory store in {root} (no memkeep store, no .memzoi/); nothing to check"
        return None, None


def stores_below(view: Pygit2RepoView, primary: Store | None) -> list[Store]:
    """The memkeep stores other than ``primary`` (the root's) holding an entry file git tracks (its index), as
    :func:`nested_stores` locates them; what a HEAD move is judged in besides the root's store."""
    return nested_stores(view.root, view.tracked_paths(), primary)[0]


def stores_below_root(root: Path, primary: Store | None = None) -> list[Store]:
    """:func:`stores_below` of the repository at ``root``; none when git's index cannot be read (what only adds
    to a report, a hint or ``.gitattributes`` lines: the rest of it still stands)."""
    from git_memzoi.core.gitview_pygit2 import Pygit2RepoView

    try:
        return stores_below(Pygit2RepoView(root), primary)
    except (MemzoiError, OSError):
        return []


def _any_store_below(root: Path) -> bool:
    return bool(stores_below_root(root))


def nested_stores(
    root: Path,
    paths: Sequence[str],
    primary: Store | None,
    *,
    entries_only: bool = True,
    located: dict[str, Store | str | None] | None = None,
) -> tuple[list[Store], dict[str, str]]:
    """The memkeep stores other than ``primary`` (the root's) that hold one of ``paths``, and the paths whose
    store cannot be located, each with why. For each path with an ``entries/`` folder on its way (or named
    ``INDEX.md``): the store ``git memkeep`` finds started in the path's folder (docs/memkeep.md: the first
    ``<dir>/<name>/entries/`` walking up, ``.memkeep.yml`` read from there), so an entry of ``svc/agent-memory/``
    is checked as one of the root's store is (``entries_only=False``: from every path's folder, the store a
    ``git memkeep`` started there reads, whether or not it holds the path). A folder where no store is found adds
    none; one whose ``.memkeep.yml`` is broken (or linked outside) names its ``.md`` paths there: a typo in the
    settings must not switch the guard off (a fresh user's walk committed a token so). ``located``: each folder's
    answer, kept between calls (a hook asks twice), so a folder is located once."""
    located = {} if located is None else located
    found: dict[str, Store] = {}
    unlocated: dict[str, str] = {}
    for path in paths:
        folder = path.rpartition("/")[0]
        if entries_only and not ("entries/" in path or path.endswith("INDEX.md")):
            continue
        if folder not in located:
            located[folder] = _locate_from(root, folder)
        store = located[folder]
        if isinstance(store, str):
            if path.endswith(".md") and ("/entries/" in f"/{path}" or path.endswith("INDEX.md")):
                unlocated[path] = store
        elif (
            store is not None and store.rel != (primary.rel if primary else None) and _holds(store, path, entries_only)
        ):
            found.setdefault(store.rel, store)
    return sorted(found.values(), key=lambda s: s.rel), unlocated


def _holds(store: Store, path: str, entries_only: bool) -> bool:
    return not entries_only or _store_rel([store.rel], path) is not None


def _locate_from(root: Path, folder: str) -> Store | str | None:
    """The store ``git memkeep`` started in ``folder`` finds, why none can be located (a broken ``.memkeep.yml``),
    or ``None`` when there is none."""
    from git_memzoi.memkeep import api as memkeep

    try:
        return memkeep.locate_store(root / folder, root)
    except MemzoiError as exc:
        if exc.code == "store_not_found":
            return None
        return f"its memkeep store cannot be located ({exc.message}); fix that, then commit"
    except OSError:
        return None


def _store_rel(rels: Sequence[str], path: str) -> str | None:
    """The store of ``rels`` (repository-relative, ``"."`` for the root) holding ``path`` as an entry or its
    ``INDEX.md``, the deepest when stores nest; ``None`` when none does."""
    from git_memzoi.memzoi import memory_files

    holding = [
        rel
        for rel in rels
        if path.startswith(memory_files.store_prefixes(rel)[0]) or path == memory_files.store_prefixes(rel)[1]
    ]
    return max(holding, key=len, default=None)


def symlink_message(path: str, in_store: bool) -> str:
    """Why a staged symlink among the memory files is refused, in the words ``git memkeep lint`` uses."""
    from git_memzoi.memzoi import memory_files

    if in_store:
        return "a symlink; entries must be regular files"
    if path.startswith(memory_files.RECORDS):
        return "a symlink; records must be regular files"
    if path.startswith(memory_files.PROPOSALS):
        return "a symlink; proposal packets must be regular files"
    return "a symlink; memory files must be regular files"


def secret_findings(path: str, data: bytes, message: str = _SECRET_MESSAGE) -> list[Finding]:
    """The secrets in one file's bytes: one finding per line and rule, naming neither the secret nor the line's
    text (the shared credential classifier, :func:`git_memzoi.memzoi.records.secrets.classify`)."""
    from git_memzoi.memzoi import secrets

    text = data.decode("utf-8", errors="replace")
    return [Finding(path, f"secret: {hit.rule}", message, hit.line) for hit in secrets.classify(text, personal=False)]


def projection_findings(path: str, data: bytes) -> list[Finding]:
    """The secrets inside the memzoi-managed blocks of a file outside the memory folders: the block an ``export
    <fmt> --file`` projection keeps between its BEGIN/END marker lines, and an ``integrate`` instructions block.
    Lines outside the blocks are not memory and are not scanned; findings carry the file's own line numbers. A
    block without its end line runs to the end of the file. A file without a marker costs one substring search.
    """
    from git_memzoi.memzoi import memory_files

    kept = memory_files.managed_text(data)
    if kept is None:
        return []
    message = (
        "a memzoi-managed block must not hold a secret; remove it from the record it came from and export "
        "again (and rotate it if it was real)"
    )
    return secret_findings(path, kept.encode("utf-8"), message)


def _record_findings(root: Path, path: str, data: bytes) -> list[Finding]:
    from git_memzoi.core.frontmatter import FrontmatterError
    from git_memzoi.memzoi import memory_files, okf, record_store

    if len(data) > record_store.MAX_RECORD_BYTES:
        return [Finding(path, "too_large", f"a record is at most {record_store.MAX_RECORD_BYTES} bytes")]
    try:
        parts, fields = record_store.parse_fields(data)
    except FrontmatterError as exc:
        return [Finding(path, "parse", exc.reason, exc.line)]
    if not parts.has_frontmatter:
        return [Finding(path, "parse", "a record starts with a --- frontmatter block", 1)]
    found = _privacy(path, "record", fields)
    try:
        okf.record_from_fields(path[len(memory_files.RECORDS) : -len(".md")], path, fields, parts.body)
    except okf.RecordError as exc:
        found.append(Finding(path, "invalid_record", f"{exc.field}: {exc.reason}", _field_line(parts, exc.field)))
    except MemzoiError as exc:
        found.append(Finding(path, "invalid_record", exc.message))
    return found


def _field_line(parts: Any, name: str) -> int | None:
    """The 1-based file line of the top-level frontmatter key ``name``, when it is there."""
    for number, line in enumerate(str(parts.yaml_text).split("\n"), start=2):
        if line.startswith(f"{name}:"):
            return number
    return None


def _privacy(path: str, kind: str, fields: dict[str, Any]) -> list[Finding]:
    found = []
    sensitivity = fields.get("sensitivity")
    if sensitivity is not None and sensitivity != "repo-safe":
        found.append(
            Finding(
                path, "not_repo_safe", f"{kind} sensitivity is {sensitivity}; only repo-safe memory may be committed"
            )
        )
    content_class = fields.get("content_class")
    if isinstance(content_class, str) and content_class in PRIVATE_CLASSES:
        found.append(Finding(path, "not_repo_safe", f"{kind} content_class {content_class} must stay local"))
    if fields.get("visibility") == "private":
        found.append(Finding(path, "not_repo_safe", f"{kind} visibility is private; it must stay local"))
    return found


def _packet_findings(path: str, data: bytes) -> list[Finding]:
    from git_memzoi.memzoi import packets

    try:
        packet = packets.parse(path.rsplit("/", 1)[-1][: -len(".md")], path, data)
    except MemzoiError as exc:
        return [Finding(path, "invalid_packet", exc.message)]
    if packet.sensitivity != packets.REPO_SAFE:
        return [
            Finding(
                path,
                "not_repo_safe",
                f"packet sensitivity is {packet.sensitivity}; only repo-safe packets may be committed",
            )
        ]
    return []


def _parse_entry(path: str, data: bytes, staged: _Staged) -> None:
    from git_memzoi.core import frontmatter
    from git_memzoi.memkeep.api import Entry

    try:
        doc = frontmatter.parse(data)
    except frontmatter.FrontmatterError as exc:  # a file a merge left unresolved: lint's conflict_marker rule
        rule = "conflict_marker" if exc.code == "merge_conflict" else "parse"
        staged.findings.append(Finding(path, rule, exc.reason, exc.line))
        return
    if not doc.split.has_frontmatter:
        staged.findings.append(Finding(path, "parse", frontmatter.missing_reason(doc.split), 1))
        return
    stem = path.rsplit("/", 1)[-1][: -len(".md")]
    staged.entries[path] = Entry(path, doc.fields, doc.body, doc.split.body_start_line, stem)


def _store_entries(
    store: Store | None, staged: _Staged, git_dir: Path | None = None
) -> tuple[list[Entry], tuple[tuple[str, str], ...]]:
    """The working tree's entries with the staged versions in place of their files (read through memkeep's parse
    cache under ``git_dir``, which ``git memkeep status`` shares: a warm hook parses no YAML), and where the
    working tree's unreadable entries are, ``(path, "path:line" or path)``, unless a staged version replaces them."""
    from git_memzoi.memkeep import api as memkeep

    if store is None:
        return list(staged.entries.values()), ()
    loaded = memkeep.load_store(store, memkeep.store_cache(git_dir, store) if git_dir is not None else None)
    merged = {e.path: e for e in loaded.entries}
    merged.update(staged.entries)
    unreadable = tuple(
        (u.path, f"{u.path}:{u.line}" if u.line else u.path) for u in loaded.unreadable if u.path not in staged.entries
    )
    return list(merged.values()), unreadable


def _lint_findings(store: Store, entries: list[Entry], paths: set[str]) -> Iterator[Finding]:
    from git_memzoi.core.clock import SystemClock
    from git_memzoi.memkeep.api import lint_entries as lint

    for v in lint(entries, (), None, SystemClock().today()):
        if v.path in paths and not v.rule.startswith("index_"):
            yield Finding(v.path, v.rule, f"{v.field}: {v.message}", v.line)


def _watched_records(root: Path) -> list[Entry]:
    """The current memzoi records with an earned envelope, as memkeep entries (their scope is what a change can
    hit; a record a change hits is reported like an entry, never blocked); none without ``.memzoi/``."""
    from git_memzoi.memzoi import Layout, Workspace, recall_suspect

    if not (root / ".memzoi" / "records").is_dir():
        return []  # no memzoi records: nothing to open (the common memkeep-only repository stays fast)
    try:  # a read-only view: no crash repair or migration here (the next command does them), no scanner loaded
        return recall_suspect.watched_entries(Workspace(Layout(root), actor="hook"))
    except MemzoiError:  # an unreadable index or workspace is said by the commands that need it, not here
        return []


def _touched(entries: list[Entry], staged_paths: list[str]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted((e.id, e.path) for e in entries if e.is_live and e.scope_hits(staged_paths)))
