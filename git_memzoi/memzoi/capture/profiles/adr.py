"""The ``adr-deterministic`` capture profile: architecture decision records → evidence-linked decision candidates
(memzoi-spec.md §9.2, §9.3, §9.5, §9.6; seed "Instruction, ADR, and Git-change profiles").

Sources: one ``.md`` ``project_path``, or one ``project_directory`` locator
``{kind, path, recursive, ignore_policy: git-v1, include: ["*.md"]}``. A directory's members are its ``*.md``
files in sorted order (subdirectories only with ``recursive: true``), minus what the project's ``.gitignore`` files
on the way down ignore (:mod:`git_memzoi.core.gitignore_policy`); ``.git`` and ``.memzoi`` are never entered.
Caps: 128 members, 8 directory levels, 1 MiB per member, 4 MiB in all (``capture_limit_exceeded`` /
``source_too_large``). A member that is a symbolic link or hard link is refused (``unsafe_source_path``); a symbolic
link that would not be a member is never followed. Every ``.gitignore`` read is scanned for prohibited content
(``prohibited_policy_input``, its path and text never echoed). The directory snapshot adds ``members``
(``[{path, byte_length, source_content_hash}]``) and ``policy_inputs`` (``[{path, engine_version,
source_content_hash}]``); its ``byte_length`` and ``source_content_hash`` describe the manifest: canonical JSON
of ``{members, policy_inputs}``.

Extractor versions (a request pins one with ``extractor.version``; ``eval capture`` pins what its corpus
declares): ``1.1.0`` (the default) also reads the real templates (adr-tools/Nygard numbered titles, MADR 2.x and
log4brains inline ``* Status:`` / ``- Status:`` lines, MADR 3.x/4.x front-matter ``status:``, MADR's other sections
and ``### Consequences`` subsections; a template's status placeholder such as ``[proposed | rejected | …]`` or
``{…}`` is ``unknown``, and a title that is an HTML comment only is no title;
:mod:`~git_memzoi.memzoi.capture.profiles.adr_forms` has the rules);
``1.0.0`` is upstream's capture-v1 reading, described below, unchanged.

ADR shape (1.0.0): the first heading is ``# ADR: <title>``; its level-2 headings are fields (case-insensitive, a trailing
``:`` dropped): ``Status``; ``Context`` (``Context and problem statement``); ``Decision`` (``Decision outcome``);
``Consequences``; ``Risk``/``Risks``; ``Supersedes``/``Superseded by``/``Supersession``. A field runs from its
heading up to the next heading of level 1 or 2 (deeper headings belong to it), or EOF; the ADR ends at a second
level-1 heading. The status is the first word of the first Status field, lowercased: ``accepted``, ``adopted``,
``approved``, ``draft``, ``rejected``, ``superseded``, ``deprecated``; anything else, a missing status or two
Status fields is ``unknown``.

Candidates (one per non-empty field, in document order):

| field | memory type | title |
| --- | --- | --- |
| decision | decision | ``ADR: <title>`` |
| consequences | fact | ``ADR: <title> (consequences)`` |
| risk | risk | ``ADR: <title> (risk)`` |
| supersession | decision | ``ADR: <title> (supersession)`` |

Lane ``semantic``; body = the trimmed field text after its heading; scope ``{kind: repo, id: null, paths:
[<member>]}``; tags ``[adr, adr-status:<status>, adr-field:<field>]``. Non-decision fields carry the field in the
title because planning calls two candidates of one scope with one title and different bodies a conflict. Status
and Context are never memories (the status is a property of the decision, not a claim). Evidence is three items:
the title line, the Status field and the candidate's field, each with ``section_kind`` = the field and
``semantic_location: {kind: adr, field, status}`` (two items when there is no Status field). Routing: accepted,
adopted or approved → repo (a pending proposal); any other status → ``needs_review``; supersession fields always
→ ``needs_review``. A member without an ``# ADR:`` title, a non-empty preamble, unknown non-empty fields and
content after the ADR give diagnostic ``unsupported_adr_content`` (source id, path, line). A member holding
prohibited content blocks the plan (``prohibited_content_detected``, no path or text).
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from git_memzoi.core.hashing import content_hash
from git_memzoi.memzoi.capture import sources
from git_memzoi.memzoi.capture.profiles import adr_forms as forms
from git_memzoi.memzoi.capture.profiles import markdown as md
from git_memzoi.memzoi.capture.profiles.markdown import CaptureError, Extraction, canonical_hash

if TYPE_CHECKING:
    from git_memzoi.memzoi.capture.schema import DiagnosticJson, EvidenceJson, ExtractedJson, MemoryJson, SpanJson

PROFILE = "adr-deterministic"
EXTRACTOR = {"kind": "deterministic", "id": "memzoi-adr", "version": "1.1.0"}
UPSTREAM_V1 = "1.0.0"
MAX_MEMBERS = 128
MAX_DEPTH = 8
MAX_TOTAL_BYTES = 4 * 1024 * 1024
DIRECTORY_KEYS = ("kind", "path", "recursive", "ignore_policy", "include")
INCLUDE = ["*.md"]
REPO_STATUSES = ("accepted", "adopted", "approved")
STATUSES = forms.V1_STATUSES
FIELDS = forms.V1_FIELDS
# field → memory type of its candidate (fields not listed are never memories)
CANDIDATE_FIELDS = {"decision": "decision", "consequences": "fact", "risk": "risk", "supersession": "decision"}
TITLE_PREFIX = "ADR:"
# what the extractor's identity hashes (``extractor.configuration_hash``): upstream's 1.0.0 and 1.1.0's, which
# also names the forms it reads
CONFIGURATION = {
    "fields": FIELDS,
    "candidate_fields": CANDIDATE_FIELDS,
    "statuses": STATUSES,
    "repo_statuses": REPO_STATUSES,
}
CONFIGURATIONS = {
    UPSTREAM_V1: CONFIGURATION,
    EXTRACTOR["version"]: {
        "fields": forms.FIELDS,
        "subfields": forms.SUBFIELDS,
        "candidate_fields": CANDIDATE_FIELDS,
        "statuses": forms.STATUSES,
        "status_spellings": forms.STATUS_SPELLINGS,
        "repo_statuses": REPO_STATUSES,
        "title_prefix": forms.TITLE_PREFIX.pattern,
        "status_forms": ["section", "inline", "front_matter"],
    },
}
VERSIONS = (EXTRACTOR["version"], UPSTREAM_V1)


def load(
    ws: Any, source: dict[str, Any], supplied: Mapping[str, bytes], version: str = EXTRACTOR["version"]
) -> sources.Loaded:
    """The adr-deterministic profile over one ``.md`` ``project_path`` or one ``project_directory``, extracted by
    ``version`` (one of :data:`VERSIONS`, checked by the request).

    Raises:
        CaptureError: ``unsupported_capture_profile`` (another locator kind), ``invalid_capture_request`` (a
            directory locator other than git-v1 / ``["*.md"]``), ``unsupported_media_type``,
            ``unsafe_source_path``, ``source_not_found``, ``source_too_large``, ``invalid_encoding``,
            ``prohibited_policy_input``, ``capture_limit_exceeded``.
    """
    root = ws.layout.root
    identity = sources.extractor({**EXTRACTOR, "version": version}, CONFIGURATIONS[version])
    kind = source["locator"].get("kind")
    if kind == "project_path":
        path = sources.project_path(source)
        if not path.endswith(".md"):
            raise CaptureError("the adr profile reads .md files", "unsupported_media_type")
        data = sources.read_source(root, path)
        return sources.Loaded(
            sources.snapshot(source, data), extract(source["source_id"], [(path, data)], version), identity
        )
    if kind != "project_directory":
        raise CaptureError("the adr profile reads a project_path or a project_directory", "unsupported_capture_profile")
    directory, recursive = check_directory(source)
    files, policy_inputs = read_directory(root, directory, recursive)
    members = [{"path": p, "byte_length": len(d), "source_content_hash": content_hash(d)} for p, d in files]
    manifest = json.dumps(
        {"members": members, "policy_inputs": policy_inputs}, sort_keys=True, separators=(",", ":"), ensure_ascii=False
    ).encode("utf-8")
    snap = sources.snapshot(source, manifest, members=members, policy_inputs=policy_inputs)
    return sources.Loaded(snap, extract(source["source_id"], files, version), identity)


def check_directory(source: dict[str, Any]) -> tuple[str, bool]:
    """(path, recursive) of a strict ``project_directory`` locator with ``ignore_policy: git-v1`` and
    ``include: ["*.md"]`` whose media type is ``text/markdown``; the path obeys the source-path rules."""
    locator = sources.strict(source["locator"], "locator", DIRECTORY_KEYS)
    if (
        not isinstance(locator["path"], str)
        or not isinstance(locator["recursive"], bool)
        or locator["ignore_policy"] != "git-v1"
        or locator["include"] != INCLUDE
    ):
        raise CaptureError(
            'project_directory: a path, boolean recursive, ignore_policy git-v1 and include ["*.md"]',
            "invalid_capture_request",
        )
    if source["media_type"] != "text/markdown":
        raise CaptureError("the adr profile reads text/markdown sources", "unsupported_media_type")
    return md.check_source_path(locator["path"].rstrip("/"), suffixes=None), locator["recursive"]


def read_directory(root: Path, directory: str, recursive: bool) -> tuple[list[tuple[str, bytes]], list[dict[str, Any]]]:
    """((member path, bytes) in sorted order, policy inputs) of a directory under the git-v1 ignore policy.

    The ``.gitignore`` of the root, of each directory on the way down to ``directory`` and of every directory the
    walk enters are the policy inputs (each read without following links and scanned for prohibited content).
    """
    from git_memzoi.core.gitignore_policy import ENGINE_VERSION, IgnorePolicy

    _, info = sources.lstat_chain(root, directory)
    if not stat.S_ISDIR(info.st_mode):
        raise CaptureError("the project_directory source is not a directory", "source_not_found")
    policy = IgnorePolicy()
    policy_inputs: list[dict[str, Any]] = []

    def enter(rel: str) -> None:
        data = _policy_input(root, rel)
        if data is not None:
            policy.add(rel, data)
            policy_inputs.append(
                {
                    "path": f"{rel}/.gitignore".lstrip("/"),
                    "engine_version": ENGINE_VERSION,
                    "source_content_hash": content_hash(data),
                }
            )

    parts = directory.split("/")
    for i in range(len(parts) + 1):
        enter("/".join(parts[:i]))
    files: list[tuple[str, bytes]] = []
    total = 0
    pending = [(directory, 0)]
    while pending:
        rel, depth = pending.pop(0)
        if depth:
            enter(rel)
        subdirs = []
        for name in sorted(os.listdir(root / rel)):
            path = f"{rel}/{name}"
            if name.lower() in (".git", ".memzoi"):
                continue
            mode = os.lstat(root / path).st_mode
            if stat.S_ISDIR(mode):
                if recursive and not policy.prunable(path):
                    subdirs.append(path)
                continue
            if not name.endswith(".md") or policy.excluded(path):
                continue
            if stat.S_ISLNK(mode):
                raise CaptureError(
                    "a directory member is a symbolic link; capture never follows links", "unsafe_source_path"
                )
            if len(files) == MAX_MEMBERS:
                raise CaptureError(f"the directory has more than {MAX_MEMBERS} members", "capture_limit_exceeded")
            data = sources.read_source(root, md.check_source_path(path))
            total += len(data)
            if total > MAX_TOTAL_BYTES:
                raise CaptureError(f"the members are larger than {MAX_TOTAL_BYTES} bytes", "source_too_large")
            files.append((path, data))
        if subdirs and depth == MAX_DEPTH:
            raise CaptureError(f"the directory is deeper than {MAX_DEPTH} levels", "capture_limit_exceeded")
        pending[:0] = [(s, depth + 1) for s in subdirs]
    return sorted(files), policy_inputs


def _policy_input(root: Path, directory: str) -> bytes | None:
    """The bytes of ``<directory>/.gitignore`` when there is one, scanned; never echoes its path or text."""
    from git_memzoi.memzoi.records.secrets import classify

    rel = f"{directory}/.gitignore".lstrip("/")
    try:
        os.lstat(root / rel)
    except FileNotFoundError:
        return None
    try:
        data = sources.read_source(root, rel)
        text = data.decode("utf-8")
    except CaptureError as exc:
        raise CaptureError("an ignore-policy input cannot be read safely", exc.code) from None
    except UnicodeDecodeError:
        raise CaptureError("an ignore-policy input is not UTF-8", "invalid_encoding") from None
    findings = classify(text, personal=False)
    if findings:
        raise CaptureError(
            f"an ignore-policy input holds prohibited content ({findings[0].rule}, line {findings[0].line})",
            "prohibited_policy_input",
        )
    return data


def extract(source_id: str, files: list[tuple[str, bytes]], version: str = EXTRACTOR["version"]) -> Extraction:
    """Run the profile's extractor ``version`` over ``(path, bytes)`` members (UTF-8 required, code
    ``invalid_encoding``).

    Prohibited content in any member blocks everything: no candidates, diagnostics without paths or text.
    """
    from git_memzoi.memzoi.records.secrets import classify

    texts = []
    for _, data in files:
        try:
            texts.append(data.decode("utf-8"))
        except UnicodeDecodeError:
            raise CaptureError("a source is not UTF-8", "invalid_encoding") from None
    findings = [f for text in texts for f in classify(text)]
    if findings:
        return md.blocked(source_id, findings)
    out = Extraction()
    for path, data in files:
        _extract_one(source_id, path, data, out, version)
    if len(out.candidates) > md.MAX_CANDIDATES:
        raise CaptureError(f"the source yields more than {md.MAX_CANDIDATES} candidates", "capture_limit_exceeded")
    if sum(len(e["text"].encode("utf-8")) for c in out.candidates for e in c["evidence"]) > md.MAX_EVIDENCE_TOTAL:
        raise CaptureError(f"the evidence is larger than {md.MAX_EVIDENCE_TOTAL} bytes", "capture_limit_exceeded")
    return out


def status_of(text: str) -> str:
    """1.0.0's normalised status of a Status field's text: its first word, lowercased, if known, else ``unknown``
    (1.1.0's: :func:`~git_memzoi.memzoi.capture.profiles.adr_forms.status`)."""
    return forms.status_v1(text)


def _extract_one(source_id: str, path: str, data: bytes, out: Extraction, version: str) -> None:
    upstream = version == UPSTREAM_V1
    reading = forms.read_v1(data) if upstream else forms.read(data)
    if reading is None:
        if data.strip():
            out.diagnostics.append(_unsupported(source_id, path, 1))
        return
    out.diagnostics.extend(_unsupported(source_id, path, line) for line in reading.unsupported)
    statuses = reading.statuses
    read_status = forms.status_v1 if upstream else forms.status
    status = read_status(statuses[0].body) if len(statuses) == 1 else "unknown"
    locator = {"kind": "project_path", "path": path}
    source_hash = content_hash(data)
    extraction = {"profile": PROFILE, **EXTRACTOR, "version": version}

    def evidence(part: forms.Part) -> EvidenceJson:
        excerpt = data[part.start : part.end]
        if len(excerpt) > md.MAX_EVIDENCE_ITEM:
            raise CaptureError(
                f"an evidence item is larger than {md.MAX_EVIDENCE_ITEM} bytes", "capture_limit_exceeded"
            )
        return {
            "source_id": source_id,
            "locator": locator,
            "source_content_hash": source_hash,
            "span": _span(data, part.start, part.end, part.line),
            "evidence_content_hash": content_hash(excerpt),
            "text": excerpt.decode("utf-8"),
            "heading_path": part.heading_path,
            "section_kind": part.field,
            "semantic_location": {"kind": "adr", "field": part.field, "status": status},
        }

    shared = [evidence(reading.title), *(evidence(p) for p in statuses[:1])]
    for part in reading.fields:
        if part.field not in CANDIDATE_FIELDS or not part.body:
            continue
        suffix = "" if part.field == "decision" else f" ({part.field})"
        title = reading.candidate_title + suffix
        out.candidates.append(
            _candidate(part.field, status, title, part.body, path, [*shared, evidence(part)], extraction)
        )


def _unsupported(source_id: str, path: str, line: int) -> DiagnosticJson:
    return {"code": "unsupported_adr_content", "source_id": source_id, "path": path, "line_start": line}


def _span(data: bytes, start: int, end: int, line_start: int) -> SpanJson:
    """The span of ``data[start:end]`` (§9.4): ``line_end`` counts the excerpt's newlines but its last byte."""
    return {
        "byte_start": start,
        "byte_end": end,
        "line_start": line_start,
        "line_end": line_start + data[start:end][:-1].count(b"\n"),
    }


def _candidate(
    field: str,
    status: str,
    title: str,
    body: str,
    path: str,
    evidence: list[EvidenceJson],
    extraction: dict[str, str],
) -> ExtractedJson:
    memory: MemoryJson = {
        "type": CANDIDATE_FIELDS[field],
        "lane": "semantic",
        "title": title,
        "body": body,
        "scope": {"kind": "repo", "id": None, "paths": [path]},
        "tags": ["adr", f"adr-status:{status}", f"adr-field:{field}"],
    }
    claim_id = "claim_" + canonical_hash(memory)[:32]
    candidate_id = "candidate_" + canonical_hash({"claim": claim_id, "evidence": evidence})[:32]
    routed = "repo" if status in REPO_STATUSES and field != "supersession" else None
    reason = (
        None
        if routed
        else ("adr_supersession_requires_review" if field == "supersession" else "adr_status_requires_review")
    )
    return {
        "claim_id": claim_id,
        "candidate_id": candidate_id,
        "memory": memory,
        "evidence": evidence,
        "extraction": extraction,
        "confidence": "1.0",
        "routed_destination": routed,
        "suggested_destination": "repo",
        "destination_reason": reason,
    }
