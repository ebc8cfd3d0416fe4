"""Staleness-aware recall: which recalled records are suspect, by the same core as ``git memkeep status`` (io).

A record may carry the ``memkeep`` envelope (``anchor``, ``scope``, ``verified_at``, ``ttl_days``, ``explains``,
``evidence``; DESIGN.md "One model, two surfaces"). Each enveloped record becomes a memkeep
:class:`~git_memzoi.memkeep.entries.Entry` (id = record id, path = its file) and
:func:`git_memzoi.memkeep.staleness.compute` runs over them with the repository's
:class:`~git_memzoi.core.gitview_pygit2.Pygit2RepoView` and the command's clock. So a record is suspect when a
file in its scope changed since its anchor commit (``scope_hit``), ``verified_at`` is older than ``ttl_days``
(``ttl_expired``), the anchor is not in HEAD's history (``anchor_unreachable``; also in a repository without
commits), or a record it ``explains`` from is suspect, withdrawn (superseded, tombstoned, expired) or missing
(``dependency_suspect``). An ``explains`` id naming a current record without an envelope is a claim nobody
watches, so it is not followed. A record whose check failed at ``git memzoi verify`` carries ``status: stale`` in
its envelope: it is suspect with the reason ``stale`` (evidence ``{"status": "stale"}``) until a verify heals it.
Records without an envelope are suspect only through their ``depends_on`` relations (``dependency_suspect``,
:mod:`~git_memzoi.memzoi.recall.depends`); when no recalled record has an envelope or such a relation, git is not
read at all (the common path stays fast).

A recalled memkeep entry (index rows of store ``entry``) is judged by memkeep itself (an entry marked ``stale``
by a failed ``git memkeep verify`` is suspect with the reason ``stale``, as a record is): :func:`mark` opens the
store through :mod:`git_memzoi.memkeep.api` (``open_session``, ``report``: the very report ``git memkeep status``
prints), only when an entry was recalled. Results of both stores are keyed by :func:`key` (``store:id``), since a
record and an entry may share an id.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from git_memzoi.errors import InputError

if TYPE_CHECKING:
    from git_memzoi.memkeep.entries import Entry
    from git_memzoi.memzoi.recall.schema import SuspectJson, VerdictJson
    from git_memzoi.memzoi.workspace import Workspace

Suspects = Mapping[str, "SuspectJson"]  # record id (or, from mark, store:id) → its suspect mark


def key(row: Mapping[str, Any]) -> str:
    """``store:id`` of an index row (``record:`` for rows without a store column)."""
    return f"{row.get('store') or 'record'}:{row['id']}"


def mark(ws: Workspace, rows: Iterable[Mapping[str, Any]]) -> Suspects:
    """The suspect rows among ``rows`` of both stores, keyed by :func:`key`: records by :func:`assess`, entries by
    memkeep's own report (reasons and evidence exactly as ``git memkeep status --json`` gives them)."""
    rows = list(rows)
    records = [row for row in rows if (row.get("store") or "record") == "record"]
    out: dict[str, SuspectJson] = {f"record:{rid}": mark for rid, mark in assess(ws, records).items()}
    entry_ids = {row["id"] for row in rows if row.get("store") == "entry"}
    if entry_ids:
        for entry_id, found in assess_entries(ws, entry_ids).items():
            out[f"entry:{entry_id}"] = found
    return out


def assess_entries(ws: Workspace, ids: Iterable[str]) -> Suspects:
    """The suspect memkeep entries among ``ids``: ``{entry_id: {"reasons": [...]}}`` from
    :func:`git_memzoi.memkeep.api.report` over the repository's store (``{}`` when no store can be opened)."""
    wanted = set(ids)
    verdicts = _entry_verdicts(ws)
    return {i: {"reasons": [r.copy() for r in verdicts[i]]} for i in sorted(wanted) if i in verdicts}


_REPORTS: dict[str, tuple[str, dict[str, list[VerdictJson]]]] = {}
CACHE_NAME = "recall-entry-verdicts.json"  # in <git dir>/memzoi/cache/, beside memkeep's own caches
VERDICTS = 2  # what the saved verdicts hold (2: stale entries too); a cache of another version is computed again


def _entry_verdicts(ws: Workspace) -> dict[str, list[VerdictJson]]:
    """Every suspect entry's verdicts from memkeep's report, remembered while nothing it depends on changed
    (:func:`_report_key`): in this process (a long-running server answers repeated recalls without re-running
    it) and in ``<git dir>/memzoi/cache/`` (a one-shot command then never loads pygit2 for it). A cache that
    cannot be read or written is only a cache: the report runs."""
    root = str(ws.layout.root)
    found = _report_key(ws)
    kept = _REPORTS.get(root)
    if found is not None and kept is not None and kept[0] == found[0]:
        return kept[1]
    saved = None if found is None else _load_saved(found[1], found[0])
    if saved is not None and found is not None:
        _REPORTS[root] = (found[0], saved)
        return saved
    from git_memzoi.memkeep import api  # only now: a remembered report needs none of memkeep's store (~15 ms)

    try:
        with api.no_cyclic_gc():
            session = api.open_session(api.Options(start=ws.layout.root, clock=ws.clock))
            report = api.report(session, ws.clock)
    except InputError:
        return {}
    out: dict[str, list[VerdictJson]] = {}
    for entry_id in report.stale:  # its check failed (git memkeep verify): never trusted, as a stale record
        out[entry_id] = [{"reason": "stale", "message": ENTRY_STALE_MESSAGE, "evidence": {"status": "stale"}}]
    for verdict in report.verdicts:
        reason: VerdictJson = {"reason": verdict.reason, "message": verdict.message, "evidence": dict(verdict.evidence)}
        out.setdefault(verdict.id, []).append(reason)
    if found is not None:
        _REPORTS[root] = (found[0], out)
        _save(found[1], found[0], out)
    return out


def _load_saved(path: Any, key: str) -> dict[str, list[VerdictJson]] | None:
    from git_memzoi.core import safe_read

    try:
        data = json.loads(safe_read.read_bytes(path, None))  # a FIFO planted there is refused, never opened
    except (OSError, ValueError, safe_read.FileRefused):
        return None
    if not isinstance(data, dict) or data.get("key") != key or not isinstance(data.get("verdicts"), dict):
        return None
    return data["verdicts"]  # type: ignore[no-any-return]


def _save(path: Any, key: str, verdicts: Mapping[str, list[VerdictJson]]) -> None:
    from git_memzoi.core.atomic import write_cache

    data = json.dumps({"key": key, "verdicts": verdicts}, ensure_ascii=False, default=str).encode("utf-8")
    write_cache(path, data)  # best effort, in the git dir's cache folder, never through a link


def _report_key(ws: Workspace) -> tuple[str, Any] | None:
    """What memkeep's report over the store depends on, as cheap stats, and the cache file: the derived index
    file (rewritten whenever an entry file changed, and refreshed before every recall), ``.memkeep.yml``, git's
    HEAD and the ref it names (loose or packed), the pack folder (fetched history), the clock's day and this
    version; ``None`` (never cached) when git's files cannot be read."""
    import os

    from git_memzoi import __version__
    from git_memzoi.core.gitroot import git_dir
    from git_memzoi.memzoi.recall.index.db import index_path

    def stat(path: Any) -> tuple[int, int, int] | None:
        try:
            st = os.stat(path)
        except OSError:
            return None
        return st.st_mtime_ns, st.st_size, st.st_ino

    try:
        directory = git_dir(ws.layout.root)
        head = (directory / "HEAD").read_bytes().decode("utf-8", "replace")
        linked = directory / "commondir"
        common = directory / linked.read_text().strip() if linked.is_file() else directory
    except (OSError, InputError):
        return None
    paths = [index_path(ws.layout), ws.layout.root / ".memkeep.yml", common / "packed-refs", common / "objects/pack"]
    if head.startswith("ref: "):
        ref = head[5:].strip()
        paths += [directory / ref, common / ref]
    key = json.dumps([__version__, VERDICTS, head, str(ws.clock.now().date()), *(stat(p) for p in paths)])
    return key, common / "memzoi" / "cache" / CACHE_NAME


def envelope(row: Mapping[str, Any]) -> dict[str, Any] | None:
    """The ``memkeep`` envelope of an index row, or ``None``."""
    raw = row.get("memkeep")
    if not raw:
        return None
    value = json.loads(raw) if isinstance(raw, str) else raw
    return dict(value) if isinstance(value, Mapping) else None


RECORD_CACHE_NAME = "recall-record-verdicts.json"  # beside CACHE_NAME


def assess_all(ws: Workspace) -> Suspects:
    """Every suspect current repo record (:func:`assess` over all of them, as the session-start context lists
    them), remembered in ``<git dir>/memzoi/cache/`` while nothing it depends on changed (:func:`_report_key`), so
    a session start after an unchanged one reads no record; a cache that cannot be read or written is skipped."""
    from git_memzoi.memzoi.recall.index import db as index_db

    found = _report_key(ws)
    path = None if found is None else found[1].with_name(RECORD_CACHE_NAME)
    saved = None if found is None else _load_saved(path, found[0])
    if saved is not None:
        return {record_id: {"reasons": reasons} for record_id, reasons in saved.items()}
    marks = assess(ws, index_db.list_rows(ws.layout, "repo", now=ws.clock.now()), current=True)
    if found is not None:
        _save(path, found[0], {record_id: mark["reasons"] for record_id, mark in marks.items()})
    return marks


def assess(ws: Workspace, rows: Iterable[Mapping[str, Any]], *, current: bool = False) -> Suspects:
    """The suspect records among ``rows`` (index rows): ``{record_id: {"reasons": [...]}}``.

    Each reason is ``{"reason", "message", "evidence"}`` (a memkeep verdict; reasons in the core's order:
    scope_hit, ttl_expired, dependency_suspect, anchor_unreachable). Records that are not suspect are absent.
    Returns ``{}`` without touching git when no row has an envelope nor a ``depends_on`` relation; a record that
    depends on a suspect one is ``dependency_suspect`` (:mod:`~git_memzoi.memzoi.recall.depends`), envelope or
    not. ``current``: ``rows`` are every current repo record already (they are not read again).
    """
    from git_memzoi.memzoi.recall import depends

    rows = list(rows)
    records = [row for row in rows if (row.get("store") or "record") == "record"]
    wanted = [row for row in records if envelope(row) is not None]
    relations = depends.graph(ws, [row["id"] for row in records]) if records else None
    if not wanted and relations is None:
        return {}
    from git_memzoi.memkeep import staleness

    entries = _entries(ws, {row["id"]: row for row in rows}) if current else current_entries(ws, wanted)
    report = staleness.compute(entries, repo_view(ws), ws.clock) if entries else None
    wanted_ids = {row["id"] for row in wanted}
    out: dict[str, SuspectJson] = {}
    for record_id in report.stale if report else ():  # a failed check (git memzoi verify): never trusted
        if record_id in wanted_ids:
            mark: VerdictJson = {"reason": "stale", "message": STALE_MESSAGE, "evidence": {"status": "stale"}}
            out[record_id] = {"reasons": [mark]}
    for verdict in report.verdicts if report else ():
        if verdict.id in wanted_ids:
            reason: VerdictJson = {
                "reason": verdict.reason,
                "message": verdict.message,
                "evidence": dict(verdict.evidence),
            }
            out.setdefault(verdict.id, {"reasons": []})["reasons"].append(reason)
    if relations is not None:  # staleness follows depends_on relations (recall/depends.py)
        base = {} if report is None else {**dict.fromkeys(report.suspect_ids, "suspect"), **_stale(report)}
        depends.apply(out, relations, base, [row["id"] for row in records])
    return out


def _stale(report: Any) -> dict[str, str]:
    """The ids of a report whose check failed, as the state their dependents name."""
    return dict.fromkeys(report.stale, "stale")


STALE_MESSAGE = "its check failed at git memzoi verify: fix the claim, supersede it, or verify it again"
ENTRY_STALE_MESSAGE = "its check failed at git memkeep verify: fix the claim, supersede it, or verify it again"


def current_entries(ws: Workspace, extra: Iterable[Mapping[str, Any]] = ()) -> list[Entry]:
    """The memkeep entries of every current enveloped record (and of ``extra`` index rows not current), plus the
    withdrawn records one of them explains from: what the staleness core judges (``git memzoi verify`` too)."""
    from git_memzoi.memzoi.recall.index import db as index_db

    current: dict[str, Mapping[str, Any]] = {
        row["id"]: row for row in index_db.list_rows(ws.layout, "repo", now=ws.clock.now())
    }
    for row in extra:
        current.setdefault(row["id"], row)
    return _entries(ws, current)


def watched_entries(ws: Workspace) -> list[Entry]:
    """The memkeep entries of the current enveloped records alone (no withdrawn ones): whose scope a change can
    hit, read through one narrow index query (:func:`~git_memzoi.memzoi.recall.index.select.enveloped`)."""
    from git_memzoi.memzoi.recall.index import db as index_db
    from git_memzoi.memzoi.recall.index import select

    with index_db.read_session(ws.layout):
        rows = {row["id"]: row for row in select.enveloped(ws.layout, now=ws.clock.now())}
    return [e for e in _entries(ws, rows) if e.id in rows]  # not the withdrawn records they explain from


def repo_view(ws: Workspace) -> Any:
    """The repository view of ``ws`` (a view with no history for a folder outside git: no anchor can be placed)."""
    from git_memzoi.core.gitview_pygit2 import Pygit2RepoView

    try:
        return Pygit2RepoView(ws.layout.root)
    except InputError:
        return _NoHistory()


def summary(suspect: SuspectJson) -> str:
    """One line naming why a record is suspect: ``scope_hit (src/a.py changed since 1a2b3c4d5e6f)``."""
    return "; ".join(f"{r['reason']} ({r['message']})" for r in suspect["reasons"])


def _entries(ws: Workspace, current: Mapping[str, Mapping[str, Any]]) -> list[Entry]:
    """Memkeep entries for the enveloped current records, plus withdrawn records that one of them explains from
    (as status ``stale``, so the dependent is dependency_suspect)."""
    from git_memzoi.memkeep.entries import Entry

    entries: list[Entry] = []
    withdrawn: set[str] = set()
    for record_id, row in sorted(current.items()):
        env = envelope(row)
        if env is None:
            continue
        fields: dict[str, Any] = {key: value for key, value in env.items() if key != "explains"}
        status = "stale" if env.get("status") == "stale" else "verified"
        fields.update(id=record_id, status=status, written_at=str(row["created_at"])[:10])
        if isinstance(fields.get("verified_at"), str):
            fields["verified_at"] = fields["verified_at"][:10]  # a timestamp's date, as memkeep reads dates
        explains = _ids(env.get("explains"))
        if explains is not None:  # keep a malformed value as is: memkeep reports the entry as unchecked
            fields["explains"] = [d for d in explains if envelope(current.get(d, {})) is not None or d not in current]
            withdrawn.update(d for d in fields["explains"] if d not in current and _exists(ws, d))
        elif "explains" in env:
            fields["explains"] = env["explains"]
        entries.append(Entry(row["path"], fields, row["body"], 1, record_id))
    for record_id in sorted(withdrawn):
        entries.append(Entry(f".memzoi/records/{record_id}.md", {"id": record_id, "status": "stale"}, "", 1, record_id))
    return entries


def _ids(value: Any) -> Sequence[str] | None:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return value
    return None


def _exists(ws: Workspace, record_id: str) -> bool:
    """A record file ``record_id`` exists (it is not current: superseded, tombstoned, expired ...)."""
    from git_memzoi.memzoi.records.okf import concept_id_problem

    return concept_id_problem(record_id) is None and (ws.layout.records / f"{record_id}.md").is_file()


class _NoHistory:
    """A repository view with no commits (every anchor is ``no_head``), for a folder git does not know."""

    def head(self) -> None:
        return None

    def is_shallow(self) -> bool:
        return False

    def anchor_states(self, revs: Iterable[str]) -> dict[str, tuple[Any, None]]:
        from git_memzoi.core.gitview import AnchorState

        return {rev: (AnchorState.NO_HEAD, None) for rev in revs}

    def changed_since(self, bases: Iterable[str], head: str) -> dict[str, frozenset[str]]:
        return {}
