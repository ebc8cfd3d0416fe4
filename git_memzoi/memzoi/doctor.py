"""``git memzoi doctor``: is this installation and this repository's memory ready? (read-only; io)

Each check is one :class:`Check` with a status (``ok``, ``warn``, ``fail``), a message and the next step.
Nothing is repaired or written here: interrupted operations and the temporary files of killed writers are named
(not their file contents), private files that git would commit are listed by path only, and git-visible memory
files holding a credential by path, line and rule only (never the value). A packet that a concurrent apply moves
while doctor reads is skipped, not an error.
"""

from __future__ import annotations

import os
import platform
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from git_memzoi import __version__
from git_memzoi.core.safe_read import MAX_FILE_BYTES
from git_memzoi.memzoi.layout import LEGACY_LOCAL, Layout


@dataclass(frozen=True)
class Check:
    """One readiness check."""

    name: str
    status: str  # ok | warn | fail
    message: str
    next_step: str = ""


@dataclass(frozen=True)
class Report:
    """Every check, in a fixed order; ``exit_code`` is 1 when any failed."""

    root: str
    checks: tuple[Check, ...]

    @property
    def exit_code(self) -> int:
        """1 when any check failed, else 0 (warnings do not fail)."""
        return 1 if any(c.status == "fail" for c in self.checks) else 0


def run(root: Path, *, which: Callable[[str], str | None] = shutil.which) -> Report:
    """Check the installation and the repository at ``root`` (its working-tree top).

    Args:
        root: the repository's working-tree root.
        which: ``shutil.which``-like lookup of executables on PATH (a parameter for tests).
    """
    layout = Layout(root)
    checks = [_installation(which)]
    if not layout.initialized:
        main = layout.memory_elsewhere()
        if main is None:
            checks.append(Check("memory", "fail", "no .memzoi/ here", "run `git memzoi init`"))
        else:
            step = f"commit .memzoi/ in {main} and check that commit out here (init here would start a separate store)"
            checks.append(
                Check("memory", "fail", f"no .memzoi/ in this worktree; the main worktree {main} has one", step)
            )
        return Report(str(root), tuple(checks))
    checks += [
        _local(layout),
        _records(layout),
        _relations(layout),
        _conflicts(layout),
        _packets(layout),
        _transactions(layout),
        _leftovers(layout),
        _index(layout),
        _semantic(layout),
        _privacy(layout),
        _credentials(layout),
    ]
    return Report(str(root), tuple(checks))


def _installation(which: Callable[[str], str | None]) -> Check:
    found = [name for name in ("git", "git-memzoi", "git-memkeep") if which(name)]
    missing = sorted({"git", "git-memzoi", "git-memkeep"} - set(found))
    version = f"git-memzoi {__version__}, Python {platform.python_version()}"
    if missing:
        return Check(
            "installation",
            "warn",
            f"{version}; not on PATH: {', '.join(missing)}",
            "put the environment's bin/ folder on PATH so `git memzoi` and hooks find the tools",
        )
    return Check("installation", "ok", version)


def _local(layout: Layout) -> Check:
    """Where private memory lives (shared by every worktree), and what a migration of an older ``.memzoi/local/``
    left: a folder still there (not migrated yet, or files that could not move), files kept as conflicts."""
    from git_memzoi.memzoi.runtime import migrate

    problems = layout.private_problems()  # every other command refuses to run while one is there (bad_layout)
    if problems:
        message = "; ".join(phrase for phrase, _code in problems)
        return Check("local", "fail", message, "move them away; memzoi recreates what it needs")
    where = f"private memory in {layout.label(layout.private)}/"
    if migrate.pending(layout):
        return Check(
            "local",
            "warn",
            f"{where}; {LEGACY_LOCAL}/ of an older version is not migrated yet (or holds what could not move)",
            f"run any `git memzoi` command to migrate it; move away what stays in {LEGACY_LOCAL}/",
        )
    kept = migrate.conflicts(layout)
    if kept:
        return Check(
            "local",
            "warn",
            f"{where}; the migration kept {len(kept)} conflicting file(s): " + ", ".join(kept[:5]),
            "compare each with the file of the same path in the private folder, merge by hand, then remove it",
        )
    shared = " (shared by every worktree)" if layout.private != layout.legacy_local else ""
    return Check("local", "ok", f"{where}{shared} holds only what it should")


def _records(layout: Layout) -> Check:
    from git_memzoi.memzoi.records import store as record_store

    scan = record_store.scan(layout)
    if scan.problems:
        names = ", ".join(p.path for p in scan.problems[:5])
        # a hand-edited interval is named with its reason: recall leaves the file out (records/validity.py)
        invalid = [p.reason for p in scan.problems if p.code == "invalid_validity"][:5]
        why = f"; invalid validity, left out of recall: {'; '.join(invalid)}" if invalid else ""
        return Check(
            "records",
            "fail",
            f"{len(scan.problems)} unreadable record file(s): {names}{why}",
            "fix or remove them; `git memzoi rebuild --json` lists the reasons",
        )
    private = _unreadable_private(layout)
    if private:  # counted, never named: a private file's name is its title's slug
        return Check(
            "records",
            "fail",
            f"{private} private record file(s) in {layout.label(layout.private)}/runtime/ cannot be read and are "
            "left out of recall",
            "fix or remove them; `git memzoi rebuild --json` names each and why",
        )
    locked = sum(1 for r in scan.records if r.locked)  # records/lock.py: human-reviewed, refused to every change
    return Check(
        "records", "ok", f"{len(scan.records)} canonical record(s) readable" + (f", {locked} locked" if locked else "")
    )


def _unreadable_private(layout: Layout) -> int:
    """How many private (runtime) record files recall's own reader refuses (recall/index/rows.py)."""
    from git_memzoi.memzoi.recall.index.rows import read_file
    from git_memzoi.memzoi.recall.index.scan import walk
    from git_memzoi.memzoi.recall.index.sources import sources
    from git_memzoi.memzoi.records.problem import Problem

    count = 0
    for source in (s for s in sources(layout) if s.plane == "runtime"):
        rels: list[str] = []
        walk(os.path.join(layout.root, source.prefix), source.prefix, rels, [], [], links=True)
        count += sum(isinstance(read_file(source, rel, os.path.join(layout.root, rel))[1], Problem) for rel in rels)
    return count


def _relations(layout: Layout) -> Check:
    """Relations between records (records/relations.py): a record file whose ``relations:`` list has an invalid
    shape (``invalid_relation``: it is left out of recall) fails; a role naming no record (``broken_relation``)
    warns. Neither is ever repaired or invented here."""
    from git_memzoi.memzoi.records import store as record_store
    from git_memzoi.memzoi.records.relations import CODE, broken

    scan = record_store.scan(layout)
    invalid = [p.path for p in scan.problems if p.code == CODE]
    if invalid:
        return Check(
            "relations",
            "fail",
            f"{len(invalid)} record file(s) with an invalid relations: list ({CODE}): {', '.join(invalid[:5])}",
            "write each item as '- role: target' (role [a-z][a-z0-9_]*, a record id, or a path glob for owns)",
        )
    stems = [p.path.rsplit("/", 1)[-1].removesuffix(".md") for p in scan.problems]
    found = broken(scan.records, stems)
    if found:
        named = ", ".join(f"{b.source} {b.role} {b.target}" for b in found[:5])
        return Check(
            "relations",
            "warn",
            f"{len(found)} relation(s) name no record (broken_relation): {named}",
            "fix the id in the record's relations: list, or supersede the record without it",
        )
    count = sum(len(r.relations) for r in scan.records if r.status == "active")
    return Check("relations", "ok", f"{count} relation(s) of active records, none broken")


def _conflicts(layout: Layout) -> Check:
    """Conflicting claims merged branches left (records/conflicts.py): a review item, not a failure."""
    from git_memzoi.memzoi.records import store as record_store
    from git_memzoi.memzoi.records.conflicts import conflicts_among

    found = conflicts_among(record_store.scan(layout).records)
    if not found:
        return Check("conflicts", "ok", "no conflicting claims between records")
    shown = "; ".join(c.message for c in found[:3]) + (f"; {len(found) - 3} more" if len(found) > 3 else "")
    return Check(
        "conflicts",
        "warn",
        f"{len(found)} conflicting claim(s) from merged branches: {shown}",
        "review them: keep one claim with `git memzoi tombstone <id> --reason ...` on the others",
    )


def _packets(layout: Layout) -> Check:
    """The review inbox: its count is :func:`~git_memzoi.memzoi.proposals.review.pending_count`'s (as handoff, MCP
    and the session context report it, counted by ``review.counts_of``); unreadable pending packets warn,
    unreadable packet folders and duplicate identities fail."""
    from git_memzoi.memzoi.proposals import review

    listing = review.list_items(layout, "all")  # all: the identities of pending and resolved are checked too
    waiting = review.counts_of(listing).open
    if listing.problems:
        return Check("proposals", "fail", listing.problems[0], "fix the proposal folders (symlinks, duplicate ids)")
    broken = [i.path or i.id for i in listing.items if i.is_open and i.problem not in (None, "packet_missing")]
    if broken:  # a FIFO, a 10 MB file, an alias bomb, malformed YAML: listed, never read
        return Check(
            "proposals",
            "warn",
            f"{waiting} item(s) waiting for review, {len(broken)} unreadable: {', '.join(broken[:5])}",
            "fix or remove them; `git memzoi proposal-files validate` names the reasons",
        )
    return Check("proposals", "ok", f"{waiting} item(s) waiting for review (`git memzoi review`)")


def _transactions(layout: Layout) -> Check:
    from git_memzoi.memzoi.proposals import lifecycle

    left = lifecycle.pending_transactions(layout)
    if left:
        ops = ", ".join(sorted({t.operation for t in left}))
        # a killed command leaves its operation's journal and, inside it, the journal of the steps it was running
        commands = sum(t.kind == "operation" for t in left) or len(left)
        return Check(
            "transactions",
            "warn",
            f"{commands} interrupted operation(s) left ({ops})",
            "the next write command rolls them back; or run any lifecycle command now",
        )
    return Check("transactions", "ok", "no interrupted operation")


def _leftovers(layout: Layout) -> Check:
    """Temporary files of writers that were killed (both stores, and the git directory's scratch folder): a
    git-visible one would be committed by ``git add -A``."""
    from git_memzoi.core import scratch
    from git_memzoi.core.confine import real_root
    from git_memzoi.core.paths import display
    from git_memzoi.errors import MemzoiError
    from git_memzoi.memkeep.store import leftovers, locate

    root = real_root(layout.root)
    found = set(scratch.leftovers(root, layout.temp_folders()))
    try:
        found.update(leftovers(locate(layout.root, layout.root)))
    except MemzoiError:
        pass  # no memkeep store (or an unsafe one, which its own commands refuse)
    if found:
        names = ", ".join(display(p, root) for p in sorted(found)[:5])
        return Check(
            "leftovers",
            "warn",
            f"{len(found)} temporary file(s) left by interrupted writes: {names}",
            "the next write command removes them (they are never committed: do not `git add` them)",
        )
    return Check("leftovers", "ok", "no temporary file left by an interrupted write")


def _index(layout: Layout) -> Check:
    from git_memzoi.memzoi.recall.index import db as index_db

    state = index_db.drift(layout)
    if state == "missing":  # derived and built on demand: not built yet is no problem (issue 20), drift is
        return Check("index", "ok", "the derived search index is not built yet; the first search builds it")
    if state == "stale":
        return Check(
            "index",
            "warn",
            "record files changed since the index was last refreshed",
            "the next search refreshes it; `git memzoi rebuild` forces it",
        )
    return Check("index", "ok", "the derived search index matches the files")


def _semantic(layout: Layout) -> Check:
    """Which model semantic and hybrid recall use (issue 18) and how much of the index it has embedded, read
    without loading it. A configured model directory that would be refused (its manifest, a file, a pinned
    hash) is a warning: every semantic and hybrid read exits 2 until it is fixed, plain ones too, since a model
    makes hybrid the default. So is a configured mode or model directory without the runtime installed, and a
    config table that looks like a misspelt known one (``[recal]``: its settings are ignored)."""
    from git_memzoi.errors import MemzoiError
    from git_memzoi.memzoi.recall import embedder, modes
    from git_memzoi.memzoi.recall.embedding import EXTRA

    try:
        config = modes.settings(layout)
    except MemzoiError as exc:
        return Check("semantic", "warn", exc.message, "fix .memzoi/config.toml: every read refuses it")
    misspelt = config.misspelt_warning()
    if misspelt is not None:
        return Check("semantic", "warn", misspelt, "rename the table in .memzoi/config.toml")
    install = f"pip install '{EXTRA}'"
    identity = None
    if config.model_dir is not None and embedder.available(config.model_dir):
        from git_memzoi.memzoi.recall import model_dir

        try:
            manifest, raw = model_dir.checked(layout.root / Path(config.model_dir).expanduser())
        except MemzoiError as exc:
            step = "fix the model directory (or remove [semantic] model_dir): until then searches exit 2"
            return Check("semantic", "warn", f"[semantic] model_dir is refused: {exc.message}", step)
        model, identity = (
            f"{manifest['model']}@{manifest['revision']} ([semantic] model_dir)",
            model_dir.identity(manifest, raw),
        )
    elif config.model_dir is None and embedder.bundled_dir() is not None:
        model = f"{embedder.BUNDLED_NAME} (bundled)"
    elif config.mode not in (None, "lexical") or config.model_dir is not None:
        what = f"[recall] mode = {config.mode!r}" if config.mode not in (None, "lexical") else "[semantic] model_dir"
        return Check(
            "semantic",
            "warn",
            f"{what} is set but semantic recall is not installed: reads fall back to lexical",
            install,
        )
    else:
        return Check("semantic", "ok", f"no semantic model installed: recall is lexical (add one: {install})")
    from git_memzoi.memzoi.recall.index import vectors

    stored = vectors.stored(layout)
    if stored is None or stored[0] is None:
        return Check("semantic", "ok", f"{model}; nothing embedded yet: the first semantic or hybrid read embeds")
    made_by, count, rows = stored
    if identity is not None and made_by != identity:
        return Check(
            "semantic",
            "ok",
            f"{model}; the index's {count} vectors are another model's: the next semantic read re-embeds",
        )
    return Check("semantic", "ok", f"{model}; {count} vectors for {rows} index rows, made by {made_by}")


def _privacy(layout: Layout) -> Check:
    """Private memory is never committed: it lives in the git directory, and an older version's ``.memzoi/local/``
    stays untracked and ignored (the guard refuses a force-added file there)."""
    from git_memzoi.core.gitview_pygit2 import Pygit2RepoView

    view = Pygit2RepoView(layout.root)
    tracked = view.tracked_under(LEGACY_LOCAL)
    if tracked:
        return Check(
            "privacy",
            "fail",
            f"git tracks {len(tracked)} private file(s) under {LEGACY_LOCAL}/: " + ", ".join(tracked[:5]),
            f"git rm --cached -r {LEGACY_LOCAL}  (then commit)",
        )
    if not view.is_ignored(f"{LEGACY_LOCAL}/x"):
        return Check(
            "privacy",
            "fail",
            f"{LEGACY_LOCAL}/ is not ignored by git",
            "run `git memzoi init --force` to restore .memzoi/.gitignore",
        )
    if layout.private == layout.legacy_local:
        return Check("privacy", "ok", f"{LEGACY_LOCAL}/ is ignored and untracked")
    return Check(
        "privacy",
        "ok",
        f"private memory is in the git directory ({layout.label(layout.private)}/), which git never commits; "
        f"{LEGACY_LOCAL}/ is ignored and untracked",
    )


def _credentials(layout: Layout) -> Check:
    """Git-visible memory files of both stores holding a credential: records, proposal packets, exports, memkeep
    entries and INDEX.md, and the memzoi-managed blocks of any other Markdown file (the guard's list,
    :mod:`~git_memzoi.memzoi.memory_files`) - a hand-edited file, or one pulled from a commit made with
    ``--no-verify``. The pre-commit guard's credential rules; fail, as a privacy breach."""
    from git_memzoi.memzoi.records.secrets import first_in_files

    files, refused = _memory_texts(layout.root)
    hits = first_in_files(files)
    if hits:
        named = ", ".join(f"{rel} line {f.line} ({f.rule})" for rel, f in hits[:5])
        return Check(
            "credentials",
            "fail",
            f"{len(hits)} memory file(s) hold a credential (not printed): {named}",
            "remove it from the file (and rotate it if it was real; git history may still hold it)",
        )
    if refused:  # a file over the cap is not scanned (10 MB took 15 s): it may hold one
        return Check(
            "credentials",
            "warn",
            f"no credential in {len(files)} git-visible memory file(s); {len(refused)} not scanned (larger than "
            f"{MAX_FILE_BYTES} bytes, or no regular file): {', '.join(refused[:5])}",
            "shrink or remove those files; memory files are at most 256 KiB",
        )
    return Check("credentials", "ok", f"no credential in {len(files)} git-visible memory file(s)")


def _memory_texts(root: Path) -> tuple[list[tuple[str, str]], list[str]]:
    """(path, text) of every git-visible memory file (tracked, or untracked and not ignored), in path order;
    a Markdown file outside the stores contributes only its managed blocks (other lines blanked). Second, the
    memory files not read: larger than their cap (:func:`~git_memzoi.memzoi.memory_files.max_bytes`) or no
    regular file (never opened)."""
    from git_memzoi.core import safe_read
    from git_memzoi.core.gitview_pygit2 import Pygit2RepoView
    from git_memzoi.errors import MemzoiError
    from git_memzoi.memkeep.store import locate
    from git_memzoi.memzoi import memory_files

    try:
        store_rel: str | None = locate(root, root).rel
    except MemzoiError:
        store_rel = None
    files, refused = [], []
    for rel in Pygit2RepoView(root).visible_paths():
        kind = memory_files.kind(rel, store_rel)
        if kind is None or kind == memory_files.PRIVATE:  # private files are the privacy check's
            continue
        path = root / rel
        if path.is_symlink() or not os.path.lexists(path):
            continue
        try:
            data = safe_read.read_bytes(path, memory_files.max_bytes(kind))
        except safe_read.FileRefused:
            refused.append(rel)
            continue
        except OSError:
            continue
        if kind == memory_files.MARKDOWN:
            text = memory_files.managed_text(data)
            if text is not None:
                files.append((rel, text))
        else:
            files.append((rel, data.decode("utf-8", "replace")))
    return files, refused
