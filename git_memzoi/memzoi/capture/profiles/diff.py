"""The strict unified Git diff reader of the ``git-change-deterministic`` profile (pure): parse the diff bytes,
then turn typed Markdown sections in added (or removed) line blocks into candidates whose evidence spans are
byte/line spans of the diff itself (memzoi-spec.md §9.5; capture-v1 corpus cases ``explicit-git-diff-guidance``,
``git-review-burden``, ``git-rename-needs-review``, ``git-delete-needs-review``, ``malformed-git-diff-fails-closed``).

No library is used: ``unidiff`` (PyPI) accepts ``diff --cc``, leading garbage and a header whose paths differ
without rename lines (``malformed.diff``) and keeps no byte offsets. Here anything but git's own two-sided output
fails closed with :class:`CaptureError` code ``extractor_safeguard_failed``: combined and binary diffs, unknown
header lines, contradicting authorities (header, rename, ``---``/``+++``, mode and index lines), unsafe or
quoted paths, hunks whose line counts disagree with their header, a changed blob with no hunks. The file and
hunk caps raise ``capture_limit_exceeded``.

A typed section is a typed ATX heading (the markdown profile's prefixes) inside one contiguous block of ``+``
(or ``-``) lines, up to the next heading in that block or the block's end. Added Decision, Procedure, Warning,
Risk and Failed attempt sections route to the repo (tag ``git-change``); removed ones become old-side
``needs_review`` candidates (tags ``git-change``, ``git-deletion``). Fact, Preference and Episode are ignored.
Only ``.md`` files outside ``.git``/``.memzoi`` are read; a file that yields nothing gets one diagnostic:
``git_deleted_durable_guidance_requires_review``, ``git_deleted_file_without_durable_candidate``,
``git_rename_without_durable_candidate`` or ``unsupported_git_change``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NotRequired, TypedDict, cast

from git_memzoi.core.hashing import content_hash
from git_memzoi.core.patterns import lazy
from git_memzoi.memzoi.capture.profiles import markdown as md
from git_memzoi.memzoi.capture.profiles.markdown import CaptureError, canonical_hash

if TYPE_CHECKING:
    from git_memzoi.memzoi.capture.schema import (
        DiagnosticJson,
        EvidenceJson,
        ExtractedJson,
        MemoryJson,
        ProhibitedJson,
        SpanJson,
    )

PROFILE = "git-change-deterministic"
EXTRACTOR = {"kind": "deterministic", "id": "memzoi-git-change", "version": "1.0.0"}
DURABLE = frozenset({"decision", "procedure", "warning", "risk", "failed_attempt"})
MODES = ("100644", "100755", "120000", "160000")
REGULAR = ("100644", "100755")
SAFEGUARD = "extractor_safeguard_failed"
_HUNK = lazy(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@(?: .*)?$")
_SIMILARITY = lazy(r"^(?:dis)?similarity index (?:100|[1-9]?[0-9])%$")
_OID = lazy(r"^(?:[0-9a-f]{40}|[0-9a-f]{64})$")


def _fail(message: str) -> CaptureError:
    return CaptureError(f"unsupported Git diff: {message}", SAFEGUARD)


@dataclass(frozen=True)
class Line:
    """One diff line: byte offsets of the whole line (``end`` after its newline), 1-based number, and its text
    without the newline (and, for hunk lines, without the ``+``/``-``/`` `` prefix)."""

    start: int
    end: int
    number: int
    text: str


@dataclass
class Hunk:
    """One ``@@`` hunk: its header line, ranges, and the blocks of ``+`` lines (with new-side line numbers) and
    of ``-`` lines (with old-side line numbers)."""

    header: str
    old_start: int
    old_count: int
    new_start: int
    new_count: int
    added: list[list[tuple[Line, int]]] = field(default_factory=list)
    removed: list[list[tuple[Line, int]]] = field(default_factory=list)
    deleted_typed: bool = False


@dataclass
class FileChange:
    """One ``diff --git`` section: change kind (added|modified|deleted|renamed), paths and ``<algo>:<hex>``
    blob ids (``None`` on an absent side or when the index line is abbreviated or missing), modes, hunks."""

    line: int
    kind: str = "modified"
    old_path: str | None = None
    new_path: str | None = None
    old_blob: str | None = None
    new_blob: str | None = None
    old_mode: str | None = None
    new_mode: str | None = None
    hunks: list[Hunk] = field(default_factory=list)


def lines_of(data: bytes) -> list[Line]:
    """The lines of UTF-8 ``data`` with byte offsets (a final empty piece after the last newline is dropped)."""
    out, offset = [], 0
    pieces = data.split(b"\n")
    for number, piece in enumerate(pieces, start=1):
        if number == len(pieces) and not piece:
            break
        end = offset + len(piece) + (1 if number < len(pieces) else 0)
        out.append(Line(offset, end, number, piece.decode("utf-8").removesuffix("\r")))
        offset = end
    return out


def parse(data: bytes, *, max_files: int, max_hunks: int) -> list[FileChange]:
    """The files of a strict unified Git diff (UTF-8 ``data``); see the module docstring for what fails."""
    lines = lines_of(data)
    files: list[FileChange] = []
    hunks = 0
    i = 0
    while i < len(lines):
        text = lines[i].text
        if text.startswith(("diff --cc ", "diff --combined ", "@@@ ")):
            raise _fail("combined diffs are not supported; choose one merge parent")
        if not text.startswith("diff --git "):
            raise _fail(f"line {lines[i].number} is not a 'diff --git' file header")
        file, i = _file(lines, i)
        hunks += len(file.hunks)
        if hunks > max_hunks:
            raise CaptureError(f"the diff has more than {max_hunks} hunks", "capture_limit_exceeded")
        files.append(file)
        if len(files) > max_files:
            raise CaptureError(f"the diff changes more than {max_files} files", "capture_limit_exceeded")
    if not files:
        raise _fail("no file changes")
    return files


def _file(lines: list[Line], i: int) -> tuple[FileChange, int]:
    head = lines[i]
    parts = head.text[len("diff --git ") :].split(" ")
    if len(parts) != 2:
        raise _fail("quoted or whitespace-holding paths are not supported")
    old_header, new_header = _path(parts[0], "a/"), _path(parts[1], "b/")
    file = FileChange(head.number)
    seen: dict[str, str] = {}
    markers: dict[str, str | None] = {}
    i += 1
    while i < len(lines) and not lines[i].text.startswith("diff --git "):
        text = lines[i].text
        if text.startswith(("diff --cc ", "diff --combined ", "@@@ ")):
            raise _fail("combined diffs are not supported; choose one merge parent")
        if text.startswith(("Binary files ", "GIT binary patch")):
            raise _fail("binary changes are not supported")
        if text.startswith("@@ "):
            if set(markers) != {"---", "+++"}:
                raise _fail("a hunk needs both '---' and '+++' lines before it")
            hunk, i = _hunk(lines, i)
            file.hunks.append(hunk)
            continue
        if file.hunks:
            raise _fail(f"line {lines[i].number} follows a hunk")
        key, value = _header_line(text)
        if key in seen or (key in ("---", "+++") and key in markers):
            raise _fail(f"a repeated '{key}' line")
        if key in ("---", "+++"):
            if key == "+++" and "---" not in markers:
                raise _fail("'+++' before '---'")
            markers[key] = None if value == "/dev/null" else _path(value.split("\t")[0], "a/" if key == "---" else "b/")
        else:
            if "---" in markers:
                raise _fail(f"header line '{key}' after '---'")
            seen[key] = value
        i += 1
    _finish(file, old_header, new_header, seen, markers)
    return file, i


def _header_line(text: str) -> tuple[str, str]:
    for key in (
        "new file mode ",
        "deleted file mode ",
        "old mode ",
        "new mode ",
        "rename from ",
        "rename to ",
        "index ",
        "--- ",
        "+++ ",
    ):
        if text.startswith(key):
            value = text[len(key) :]
            if key.endswith("mode ") and value not in MODES:
                raise _fail("an invalid file mode")
            return key.strip(), value
    if _SIMILARITY.match(text):
        return text.split(" ", 1)[0], text
    raise _fail("an unknown or unsupported header line (copies are not supported)")


def _path(value: str, prefix: str) -> str:
    if not value.startswith(prefix):
        raise _fail(f"a path without the '{prefix}' prefix")
    path = value[len(prefix) :]
    if (
        not path
        or len(path) > 4096
        or path.startswith(("/", '"'))
        or "\\" in path
        or any(ord(c) < 33 or ord(c) == 127 for c in path)
        or (len(path) > 1 and path[1] == ":")
        or any(p in ("", ".", "..") for p in path.split("/"))
    ):
        raise _fail("a path that is not a safe POSIX project-relative path")
    return path


def _oid(value: str) -> str | None:
    if not _OID.match(value):
        return None
    return ("sha1:" if len(value) == 40 else "sha256:") + value


def _null(value: str | None) -> bool:
    return value is not None and set(value.split(":", 1)[1]) == {"0"}


def _finish(file: FileChange, old: str, new: str, seen: dict[str, str], markers: dict[str, str | None]) -> None:
    """Check that the header, rename, marker, mode and index authorities agree; set kind, paths, blobs, modes."""
    created, deleted = "new file mode" in seen, "deleted file mode" in seen
    renamed = "rename from" in seen or "rename to" in seen
    if renamed and ("rename from" not in seen or "rename to" not in seen):
        raise _fail("'rename from' without 'rename to' (or the reverse)")
    if (created and deleted) or (renamed and (created or deleted)):
        raise _fail("contradicting create, delete and rename lines")
    if renamed and (seen["rename from"], seen["rename to"]) != (old, new):
        raise _fail("the rename lines contradict the header")
    if not renamed and old != new:
        raise _fail("the header's paths differ without rename lines")
    if markers.get("---") not in (None, old) or markers.get("+++") not in (None, new):
        raise _fail("a '---'/'+++' path contradicts the header")
    if "---" in markers and markers["---"] is None and markers["+++"] is None:
        raise _fail("a file cannot be both created and deleted")
    if ("---" in markers and markers["---"] is None and not created) or (
        "+++" in markers and markers["+++"] is None and not deleted
    ):
        raise _fail("a '/dev/null' side without a new/deleted file mode line")
    if (created and markers.get("---") is not None) or (deleted and markers.get("+++") is not None):
        raise _fail("'---'/'+++' lines contradict the new/deleted file mode line")
    if ("old mode" in seen) != ("new mode" in seen) or (("old mode" in seen) and (created or deleted)):
        raise _fail("incomplete or contradicting mode lines")
    old_blob = new_blob = index_mode = None
    if "index" in seen:
        fields = seen["index"].split(" ")
        if len(fields) > 2 or fields[0].count("..") != 1:
            raise _fail("a malformed index line")
        if len(fields) == 2:
            if fields[1] not in MODES or created or deleted or "old mode" in seen:
                raise _fail("an index mode that contradicts the mode lines")
            index_mode = fields[1]
        left, right = fields[0].split("..")
        old_blob, new_blob = _oid(left), _oid(right)
        if old_blob and new_blob and old_blob.split(":")[0] != new_blob.split(":")[0]:
            raise _fail("index ids of two object formats")
        if left == right:
            raise _fail("an index line naming the same blob twice")
    file.kind = "added" if created else "deleted" if deleted else "renamed" if renamed else "modified"
    file.old_mode = seen.get("old mode") or seen.get("deleted file mode") or index_mode
    file.new_mode = seen.get("new mode") or seen.get("new file mode") or index_mode
    if file.kind == "added":
        if "index" in seen and (not _null(old_blob) or new_blob is None or _null(new_blob)):
            raise _fail("a new file's index line must name the null blob and a full new blob")
        file.new_path, file.new_blob = new, new_blob
    elif file.kind == "deleted":
        if "index" in seen and (old_blob is None or _null(old_blob) or not _null(new_blob)):
            raise _fail("a deleted file's index line must name a full old blob and the null blob")
        file.old_path, file.old_blob = old, old_blob
    else:
        if _null(old_blob) or _null(new_blob):
            raise _fail("a modified or renamed file cannot cite the null blob")
        if file.kind == "modified" and "index" not in seen and "old mode" not in seen:
            raise _fail("a modified file without an index or mode line")
        file.old_path, file.new_path, file.old_blob, file.new_blob = old, new, old_blob, new_blob
    if "index" in seen and not file.hunks and (file.kind in ("modified", "renamed") or "---" in markers):
        raise _fail("a changed blob without hunks (binary or truncated)")
    for hunk in file.hunks:
        if (file.kind == "added" and hunk.old_count) or (file.kind == "deleted" and hunk.new_count):
            raise _fail("a hunk that contradicts the file's creation or deletion")


def _hunk(lines: list[Line], i: int) -> tuple[Hunk, int]:
    match = _HUNK.match(lines[i].text)
    if match is None:
        raise _fail(f"line {lines[i].number} is not a hunk header")
    old_start, new_start = int(match.group(1)), int(match.group(3))
    old_count = 1 if match.group(2) is None else int(match.group(2))
    new_count = 1 if match.group(4) is None else int(match.group(4))
    if (old_count and not old_start) or (new_count and not new_start):
        raise _fail("a non-empty hunk range starting at line 0")
    hunk = Hunk(lines[i].text, old_start, old_count, new_start, new_count)
    old_used = new_used = 0
    previous = ""
    i += 1
    while i < len(lines) and (old_used, new_used) != (old_count, new_count):
        line = lines[i]
        prefix, rest = line.text[:1], line.text[1:]
        item = Line(line.start, line.end, line.number, rest)
        if prefix == "+":
            (hunk.added.append([]) if previous != "+" else None)
            hunk.added[-1].append((item, new_start + new_used))
            new_used += 1
        elif prefix == "-":
            (hunk.removed.append([]) if previous != "-" else None)
            hunk.removed[-1].append((item, old_start + old_used))
            old_used += 1
            hunk.deleted_typed |= any(md.typed(h.text) for h in _heading(rest))
        elif prefix == " ":
            old_used, new_used = old_used + 1, new_used + 1
        elif line.text != "\\ No newline at end of file":
            raise _fail(f"line {line.number} has no '+', '-' or ' ' prefix")
        previous = prefix
        i += 1
    if (old_used, new_used) != (old_count, new_count):
        raise _fail("a hunk's lines do not match the counts in its header")
    if i < len(lines) and lines[i].text == "\\ No newline at end of file":
        i += 1
    return hunk, i


def _heading(text: str) -> list[md.Heading]:
    return md.headings(text.encode("utf-8")) if text.lstrip(" ").startswith("#") else []


def git_identity(context: dict[str, Any]) -> tuple[str, str, str]:
    """(repository, base, head) of a source's git context or a git_range locator, as written."""
    return context["repository"], context["base"], context["head"]


def extract(
    source_id: str, locator: dict[str, Any], identity: tuple[str, str, str], data: bytes, files: list[FileChange]
) -> md.Extraction:
    """Candidates and diagnostics of parsed diff ``files`` over the diff bytes ``data``; ``blocked`` when the
    diff holds prohibited content (diagnostics name only the rule and diff line)."""
    from git_memzoi.memzoi.records.secrets import classify

    # every line but unchanged context (never echoed, and 70 % of a range's lines), the +/- marker masked so
    # "+password: x" reads as a line of its own
    scanned = [
        (n, text[1:] if text[:1] in "+-" else text)
        for n, text in enumerate(data.decode("utf-8").split("\n"), start=1)
        if not text.startswith(" ")
    ]
    findings = classify("\n".join(text for _, text in scanned))
    if findings:
        return md.blocked(source_id, findings, scanned[min(findings[0].line, len(scanned)) - 1][0])
    out = md.Extraction()
    source_hash = content_hash(data)
    for file in files:
        path = file.new_path or file.old_path or ""
        paths = [p for p in (file.old_path, file.new_path) if p]
        if not path.endswith(".md") or any(c.lower() in (".git", ".memzoi") for p in paths for c in p.split("/")):
            out.diagnostics.append(_diagnostic("unsupported_git_change", source_id, file, path))
            continue
        found = []
        for side, blocks in (("old", "removed"), ("new", "added")):
            for hunk in file.hunks:
                for block in getattr(hunk, blocks):
                    for section in _sections(block):
                        found.append(
                            _candidate(source_id, locator, identity, source_hash, data, file, hunk, side, section)
                        )
        out.candidates.extend(found)
        if not found:
            code = (
                "git_deleted_durable_guidance_requires_review"
                if any(h.deleted_typed for h in file.hunks)
                else {
                    "deleted": "git_deleted_file_without_durable_candidate",
                    "renamed": "git_rename_without_durable_candidate",
                }.get(file.kind, "unsupported_git_change")
            )
            out.diagnostics.append(_diagnostic(code, source_id, file, path))
    if len(out.candidates) > md.MAX_CANDIDATES:
        raise CaptureError(f"the diff yields more than {md.MAX_CANDIDATES} candidates", "capture_limit_exceeded")
    if sum(len(c["evidence"][0]["text"].encode("utf-8")) for c in out.candidates) > md.MAX_EVIDENCE_TOTAL:
        raise CaptureError(f"the evidence is larger than {md.MAX_EVIDENCE_TOTAL} bytes", "capture_limit_exceeded")
    return out


def _diagnostic(code: str, source_id: str, file: FileChange, path: str) -> DiagnosticJson:
    return {"code": code, "source_id": source_id, "line_start": file.line, "path": path}


def _sections(
    block: list[tuple[Line, int]],
) -> list[tuple[str, tuple[str, str, str, str], list[tuple[Line, int]], str]]:
    """(heading text, typed kind, lines, body) of each durable typed section with a body in one block."""
    out = []
    heads = [k for k, (line, _) in enumerate(block) if _heading(line.text)]
    for n, k in enumerate(heads):
        end = heads[n + 1] if n + 1 < len(heads) else len(block)
        text = _heading(block[k][0].text)[0].text
        kind = md.typed(text)
        body = "\n".join(line.text for line, _ in block[k + 1 : end]).strip()
        if kind is not None and kind[1] in DURABLE and body:
            out.append((text, kind, block[k:end], body))
    return out


def _candidate(
    source_id: str,
    locator: dict[str, Any],
    identity: tuple[str, str, str],
    source_hash: str,
    data: bytes,
    file: FileChange,
    hunk: Hunk,
    side: str,
    section: tuple[str, tuple[str, str, str, str], list[tuple[Line, int]], str],
) -> ExtractedJson:
    heading, (title, memory_type, lane, _), lines, body = section
    _check_evidence(file, side, identity[1].split(":")[0])
    first, last = lines[0][0], lines[-1][0]
    excerpt = data[first.start : last.end]
    if len(excerpt) > md.MAX_EVIDENCE_ITEM:
        raise CaptureError(f"an evidence item is larger than {md.MAX_EVIDENCE_ITEM} bytes", "capture_limit_exceeded")
    span: SpanJson = {
        "byte_start": first.start,
        "byte_end": last.end,
        "line_start": first.number,
        "line_end": first.number + excerpt[:-1].count(b"\n"),
    }
    old: tuple[int, int] | tuple[None, None]
    new: tuple[int, int] | tuple[None, None]
    if side == "new":
        old = (hunk.old_start, hunk.old_start + hunk.old_count - 1) if hunk.old_count else (None, None)
        new = (lines[0][1], lines[-1][1])
    else:
        old = (lines[0][1], lines[-1][1])
        new = (hunk.new_start, hunk.new_start + hunk.new_count - 1) if hunk.new_count else (None, None)
    repository, base, head = identity
    where = {
        "kind": "git_change",
        "repository": repository,
        "base": base,
        "head": head,
        "old_blob": file.old_blob,
        "new_blob": file.new_blob,
        "old_path": file.old_path,
        "new_path": file.new_path,
        "change_kind": file.kind,
        "hunk": content_hash(hunk.header.encode("utf-8")),
        "side": side,
        "old_line_start": old[0],
        "old_line_end": old[1],
        "new_line_start": new[0],
        "new_line_end": new[1],
    }
    tags = ["git-change"] if side == "new" else ["git-change", "git-deletion"]
    path = cast("str", file.new_path if side == "new" else file.old_path)  # a side with lines has a path
    memory: MemoryJson = {
        "type": memory_type,
        "lane": lane,
        "title": title,
        "body": body,
        "scope": {"kind": "repo", "id": None, "paths": [path]},
        "tags": tags,
    }
    evidence: EvidenceJson = {
        "source_id": source_id,
        "locator": locator,
        "source_content_hash": source_hash,
        "span": span,
        "evidence_content_hash": content_hash(excerpt),
        "text": excerpt.decode("utf-8"),
        "heading_path": [heading],
        "section_kind": memory_type,
        "semantic_location": {k: v for k, v in where.items() if v is not None},
    }
    claim_id = "claim_" + canonical_hash(memory)[:32]
    candidate_id = "candidate_" + canonical_hash({"claim": claim_id, "evidence": evidence})[:32]
    routing: _Routing = (
        {
            "routed_destination": "repo",
            "destination_reason": "deterministic_typed_added_git_guidance",
            "content_class": "general_repo_knowledge",
        }
        if side == "new"
        else {"routed_destination": None, "destination_reason": "deleted_git_guidance_requires_review"}
    )
    return {
        "claim_id": claim_id,
        "candidate_id": candidate_id,
        "memory": memory,
        "evidence": [evidence],
        "extraction": {"profile": PROFILE, **EXTRACTOR},
        "confidence": "1.0",
        **routing,
    }


class _Routing(TypedDict):
    """The routing hints of a git-change candidate (keys as :class:`~git_memzoi.memzoi.capture.schema.ExtractedJson`)."""

    routed_destination: str | None
    destination_reason: str
    content_class: NotRequired[str]
    suggested_destination: NotRequired[str | None]
    reason_code: NotRequired[str]
    prohibited: NotRequired[ProhibitedJson]  # never set here: a prohibited diff blocks its plan


def _check_evidence(file: FileChange, side: str, algorithm: str) -> None:
    """Evidence only from a regular blob whose full ids (in the revisions' object format) the diff names."""
    mode = file.new_mode if side == "new" else file.old_mode
    if mode not in REGULAR:
        raise _fail("evidence must come from a regular file whose mode the diff states")
    needed = [
        b for b, present in ((file.old_blob, file.kind != "added"), (file.new_blob, file.kind != "deleted")) if present
    ]
    if any(b is None or not b.startswith(algorithm + ":") for b in needed):
        raise _fail("evidence needs full blob ids of the revisions' object format (git diff --full-index)")
