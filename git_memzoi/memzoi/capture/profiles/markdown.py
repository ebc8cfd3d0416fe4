"""The ``markdown-deterministic`` capture profile (pure): source-path rules, ATX headings outside fences, typed
sections → candidates with evidence locators, untyped documents → needs_review, unsupported-content diagnostics,
and the prohibited-content scan that blocks a plan (memzoi-spec.md §9.2–§9.4, §9.8).

Nothing here reads files or the clock: :func:`extract` takes the source bytes and returns plain JSON-ready data.
Identities are BLAKE3 hashes of canonical JSON, so the same bytes always give the same candidates.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from git_memzoi.core.hashing import content_hash
from git_memzoi.errors import InputError

if TYPE_CHECKING:
    from git_memzoi.memzoi.capture.schema import DiagnosticJson, EvidenceJson, ExtractedJson, MemoryJson, SpanJson

PROFILE = "markdown-deterministic"
EXTRACTOR = {"kind": "deterministic", "id": "memzoi-markdown", "version": "1.0.0"}
MAX_SOURCE_BYTES = 1024 * 1024
MAX_CANDIDATES = 100
MAX_HEADINGS = 4096
MAX_EVIDENCE_ITEM = 16 * 1024
MAX_EVIDENCE_TOTAL = 256 * 1024
# heading prefix → (type, lane, destination the seed's table routes it to)
PREFIXES = (
    ("Fact:", "fact", "semantic", "repo"),
    ("Decision:", "decision", "semantic", "repo"),
    ("Procedure:", "procedure", "procedural", "repo"),
    ("Warning:", "warning", "semantic", "repo"),
    ("Failed attempt:", "failed_attempt", "episodic", "repo"),
    ("Risk:", "risk", "semantic", "repo"),
    ("Preference:", "preference", "semantic", "local"),
    ("Episode:", "episode", "session", "session"),
)
SOURCE_ID = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")
REDACTED = "[REDACTED:prohibited_content]"

_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


class CaptureError(InputError):
    """A capture input that cannot be planned: the code names the rule, the message never quotes content."""

    default_code = "invalid_capture_input"


def check_source_path(path: str, suffixes: tuple[str, ...] | None = (".md",)) -> str:
    """``path`` when it is a POSIX project-relative path ending in one of ``suffixes`` (``None``: any), else
    :class:`CaptureError`.

    Codes: ``unsafe_source_path`` (absolute, backslash, control characters, empty/``.``/``..`` components,
    ``.memzoi``/``.git`` components, prohibited content in the path), ``unsupported_media_type`` (not ``.md``).
    """
    if not path or path.startswith("/") or "\\" in path or any(ord(c) < 32 or ord(c) == 127 for c in path):
        raise CaptureError("the source must be a POSIX project-relative path", "unsafe_source_path")
    parts = path.split("/")
    if any(p in ("", ".", "..") for p in parts):
        raise CaptureError("the source path has an empty, '.' or '..' component", "unsafe_source_path")
    if any(p.lower() in (".memzoi", ".git") for p in parts):
        raise CaptureError("capture never reads .memzoi or .git", "unsafe_source_path")
    from git_memzoi.memzoi.records.secrets import classify

    if classify(path):
        raise CaptureError("the source path holds prohibited content", "unsafe_source_path")
    if suffixes is not None and not path.endswith(suffixes):
        raise CaptureError(f"this profile reads {' or '.join(suffixes)} files", "unsupported_media_type")
    return path


def check_source_id(source_id: str) -> str:
    """``source_id`` when it is 1–64 of ``[a-z0-9._-]`` starting alphanumeric (code ``invalid_source_id``)."""
    if not SOURCE_ID.match(source_id):
        raise CaptureError(
            "--source-id: 1-64 characters of [a-z0-9._-], starting with a letter or digit", "invalid_source_id"
        )
    return source_id


def canonical_hash(value: Any) -> str:
    """The BLAKE3 hex digest of ``value`` as canonical JSON (sorted keys, no spaces)."""
    data = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    return content_hash(data).split(":", 1)[1]


@dataclass(frozen=True)
class Heading:
    """One ATX heading outside fences: level, raw text, byte offset and 1-based line of its first byte."""

    level: int
    text: str
    byte_start: int
    line: int


@dataclass
class Extraction:
    """What the profile found: candidates (JSON-ready), diagnostics, and whether prohibited content was seen."""

    candidates: list[ExtractedJson] = field(default_factory=list)
    diagnostics: list[DiagnosticJson] = field(default_factory=list)
    blocked: bool = False


def blocked(source_id: str, findings: list[Any], line: int | None = None) -> Extraction:
    """The blocked extraction of a source with prohibited content: one ``prohibited_content_detected`` diagnostic
    per source naming the first line (``line`` when the scanned text was a projection of the source) and the rules
    and classes found, never the text (memzoi-spec.md §9.8)."""
    first = findings[0].line if line is None else line
    diagnostic: DiagnosticJson = {
        "code": "prohibited_content_detected",
        "source_id": source_id,
        "line_start": first,
        "detectors": sorted({f.rule for f in findings}),
        "classes": sorted({f.kind for f in findings}),
    }
    return Extraction([], [diagnostic], blocked=True)


def headings(data: bytes) -> list[Heading]:
    """The ATX headings of ``data`` outside fenced code blocks, in order (at most :data:`MAX_HEADINGS`)."""
    found: list[Heading] = []
    fence: str | None = None
    offset = 0
    for number, raw in enumerate(data.splitlines(keepends=True), start=1):
        line = raw.decode("utf-8").rstrip("\r\n")
        opener = _FENCE.match(line)
        if fence is not None:
            if (
                opener
                and opener.group(1)[0] == fence[0]
                and len(opener.group(1)) >= len(fence)
                and not line.strip()[len(opener.group(1)) :].strip()
            ):
                fence = None
        elif opener:
            fence = opener.group(1)
        elif match := _ATX.match(line):
            found.append(Heading(len(match.group(1)), (match.group(2) or "").strip(), offset, number))
            if len(found) > MAX_HEADINGS:
                raise CaptureError(f"the source has more than {MAX_HEADINGS} headings", "capture_limit_exceeded")
        offset += len(raw)
    return found


def typed(text: str) -> tuple[str, str, str, str] | None:
    """(title, type, lane, routed destination) of a typed heading text, else ``None``."""
    for prefix, memory_type, lane, destination in PREFIXES:
        if text.startswith(prefix):
            title = text[len(prefix) :].strip()
            return (title, memory_type, lane, destination) if title else None
    return None


def _span(data: bytes, start: int, end: int, line_start: int) -> SpanJson:
    excerpt = data[start:end]
    return {
        "byte_start": start,
        "byte_end": end,
        "line_start": line_start,
        "line_end": line_start + excerpt[:-1].count(b"\n"),
    }


def extract(source_id: str, path: str, data: bytes) -> Extraction:
    """Run the profile over one source's bytes (UTF-8 required, code ``invalid_encoding``).

    A document whose text holds prohibited content yields no candidates: ``blocked`` is set and the diagnostics
    name only the rule and line (``prohibited_content_detected``).
    """
    from git_memzoi.memzoi.records.secrets import classify

    if len(data) > MAX_SOURCE_BYTES:
        raise CaptureError(f"the source is larger than {MAX_SOURCE_BYTES} bytes", "source_too_large")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise CaptureError("the source is not UTF-8", "invalid_encoding") from None
    findings = classify(text)
    if findings:
        return blocked(source_id, findings)
    out = Extraction()
    source_hash = content_hash(data)
    heads = headings(data)
    locator = {"kind": "project_path", "path": path}
    if not any(typed(h.text) for h in heads):
        title = heads[0].text if heads and heads[0].text else path.rsplit("/", 1)[-1][: -len(".md")]
        if text.strip():
            span = _span(data, 0, len(data), 1)
            out.candidates.append(
                _candidate(
                    source_id,
                    locator,
                    source_hash,
                    data,
                    span,
                    [],
                    "unclassified",
                    ("fact", "semantic", None),
                    title,
                    text.strip(),
                )
            )
        return out
    if heads[0].byte_start and data[: heads[0].byte_start].strip():
        out.diagnostics.append(_unsupported(source_id, 1))
    stack: list[Heading] = []
    for i, head in enumerate(heads):
        end = heads[i + 1].byte_start if i + 1 < len(heads) else len(data)
        stack = [h for h in stack if h.level < head.level] + [head]
        line_end = data.find(b"\n", head.byte_start, end)
        body = data[line_end + 1 if line_end >= 0 else end : end].decode("utf-8").strip()
        kind = typed(head.text)
        if kind is None:
            if body:
                out.diagnostics.append(_unsupported(source_id, head.line))
            continue
        title, memory_type, lane, destination = kind
        span = _span(data, head.byte_start, end, head.line)
        out.candidates.append(
            _candidate(
                source_id,
                locator,
                source_hash,
                data,
                span,
                [h.text for h in stack],
                memory_type,
                (memory_type, lane, destination),
                title,
                body,
            )
        )
    if len(out.candidates) > MAX_CANDIDATES:
        raise CaptureError(f"the source yields more than {MAX_CANDIDATES} candidates", "capture_limit_exceeded")
    if sum(len(c["evidence"][0]["text"].encode("utf-8")) for c in out.candidates) > MAX_EVIDENCE_TOTAL:
        raise CaptureError(f"the evidence is larger than {MAX_EVIDENCE_TOTAL} bytes", "capture_limit_exceeded")
    return out


def _unsupported(source_id: str, line: int) -> DiagnosticJson:
    return {"code": "unsupported_markdown_content", "source_id": source_id, "line_start": line}


def _candidate(
    source_id: str,
    locator: dict[str, str],
    source_hash: str,
    data: bytes,
    span: SpanJson,
    heading_path: list[str],
    section_kind: str,
    kind: tuple[str, str, str | None],
    title: str,
    body: str,
) -> ExtractedJson:
    memory_type, lane, routed = kind
    excerpt = data[span["byte_start"] : span["byte_end"]]
    if len(excerpt) > MAX_EVIDENCE_ITEM:
        raise CaptureError(f"an evidence item is larger than {MAX_EVIDENCE_ITEM} bytes", "capture_limit_exceeded")
    memory: MemoryJson = {
        "type": memory_type,
        "lane": lane,
        "title": title,
        "body": body,
        "scope": {"kind": "repo", "id": None, "paths": [locator["path"]]},
        "tags": [],
    }
    evidence: EvidenceJson = {
        "source_id": source_id,
        "locator": locator,
        "source_content_hash": source_hash,
        "span": span,
        "evidence_content_hash": content_hash(excerpt),
        "text": excerpt.decode("utf-8"),
        "heading_path": heading_path,
        "section_kind": section_kind,
    }
    claim_id = "claim_" + canonical_hash(memory)[:32]
    candidate_id = "candidate_" + canonical_hash({"claim": claim_id, "evidence": evidence})[:32]
    return {
        "claim_id": claim_id,
        "candidate_id": candidate_id,
        "memory": memory,
        "evidence": [evidence],
        "extraction": {"profile": PROFILE, **EXTRACTOR},
        "confidence": "1.0",
        "routed_destination": None,
        "suggested_destination": routed,
    }
