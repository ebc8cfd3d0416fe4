"""The ``markdown-deterministic`` capture profile (pure): source-path rules, ATX headings outside fences, typed
sections → candidates with evidence locators, untyped documents → needs_review, unsupported-content diagnostics,
and the prohibited-content scan that blocks a plan (memzoi-spec.md §9.2–§9.4, §9.8).

Two extractor versions (a request may pin one with ``extractor.version``; a capture corpus pins the one it was
written for):

- ``1.1.0`` (the default) routes a typed section as the seed's heading table says (Fact … Risk → a repo-safe
  pending proposal, Preference → a local runtime record, Episode → a session runtime record); a credential on a
  line of a fenced code block blocks only the candidate holding it (and is named by line and rule in a
  diagnostic) instead of the whole plan; and the tool's own generated blocks (``integrate instructions``,
  ``export --file``) and whole generated projections are never candidates (issue 15).
- ``1.0.0`` is upstream's capture-v1 extractor: every typed section waits in ``needs_review`` with the table's
  route as ``policy.suggested_destination``, and any prohibited content blocks the plan.

Nothing here reads files or the clock: :func:`extract` takes the source bytes and returns plain JSON-ready data.
Identities are BLAKE3 hashes of canonical JSON, so the same bytes always give the same candidates.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from git_memzoi.core.hashing import content_hash
from git_memzoi.core.patterns import lazy
from git_memzoi.errors import InputError

if TYPE_CHECKING:
    from git_memzoi.memzoi.capture.schema import DiagnosticJson, EvidenceJson, ExtractedJson, MemoryJson, SpanJson

PROFILE = "markdown-deterministic"
EXTRACTOR = {"kind": "deterministic", "id": "memzoi-markdown", "version": "1.1.0"}
UPSTREAM_V1 = "1.0.0"
VERSIONS = (UPSTREAM_V1, EXTRACTOR["version"])
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
SOURCE_ID = lazy(r"^[a-z0-9][a-z0-9._-]{0,63}$")
REDACTED = "[REDACTED:prohibited_content]"

_ATX = lazy(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_FENCE = lazy(r"^ {0,3}(`{3,}|~{3,})")


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
    return _scan(data)[0]


def fenced_lines(data: bytes) -> set[int]:
    """The 1-based numbers of the lines of ``data`` inside fenced code blocks, the fence lines included."""
    return _scan(data)[1]


def _scan(data: bytes) -> tuple[list[Heading], set[int]]:
    found: list[Heading] = []
    fenced: set[int] = set()
    fence: str | None = None
    offset = 0
    for number, raw in enumerate(data.splitlines(keepends=True), start=1):
        line = raw.decode("utf-8").rstrip("\r\n")
        opener = _FENCE.match(line)
        if fence is not None or opener:
            fenced.add(number)
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
    return found, fenced


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


def extract(source_id: str, path: str, data: bytes, version: str = EXTRACTOR["version"]) -> Extraction:
    """Run the profile over one source's bytes (UTF-8 required, code ``invalid_encoding``).

    Args:
        version: one of :data:`VERSIONS` (checked by the request); see the module docstring for the difference.

    A document whose text holds prohibited content yields no candidates: ``blocked`` is set and the diagnostics
    name only the rule and line (``prohibited_content_detected``). Under 1.1.0 a credential on a fenced code line
    only blocks the candidate holding it (memory body and evidence text redacted; a diagnostic names the path,
    line, rules and candidate).

    Raises:
        CaptureError: ``source_too_large``, ``invalid_encoding``, ``capture_limit_exceeded``;
            ``extractor_safeguard_failed`` (1.1.0: malformed generated-block markers).
    """
    from git_memzoi.memzoi.records.secrets import classify

    if len(data) > MAX_SOURCE_BYTES:
        raise CaptureError(f"the source is larger than {MAX_SOURCE_BYTES} bytes", "source_too_large")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise CaptureError("the source is not UTF-8", "invalid_encoding") from None
    upstream = version == UPSTREAM_V1
    findings = classify(text)
    fenced = set() if upstream else fenced_lines(data)
    if findings and (upstream or any(f.kind != "credential" or f.line not in fenced for f in findings)):
        return blocked(source_id, findings)
    doc = _Document(source_id, path, data, findings, table=not upstream)
    if not upstream:
        from git_memzoi.memzoi.capture.profiles import generated

        if generated.is_projection(text):
            return Extraction([], [{"code": "generated_projection_excluded", "source_id": source_id, "line_start": 1}])
        blocks = generated.byte_ranges(text)
        if blocks is None:
            raise CaptureError("the source has malformed Memzoi generated markers", "extractor_safeguard_failed")
        doc.blocks = blocks
    return doc.extract()


class _Document:
    """One Markdown source: its bytes, the credential findings of fenced lines, the generated blocks left out."""

    def __init__(self, source_id: str, path: str, data: bytes, findings: list[Any], *, table: bool) -> None:
        self.source_id, self.path, self.data, self.findings, self.table = source_id, path, data, findings, table
        self.locator = {"kind": "project_path", "path": path}
        self.source_hash = content_hash(data)
        self.blocks: list[tuple[int, int]] = []
        self.out = Extraction()

    def extract(self) -> Extraction:
        data, out = self.data, self.out
        visible = self._masked()
        heads = headings(visible)
        if not any(typed(h.text) for h in heads):
            self._untyped(visible, heads)
        else:
            if heads[0].byte_start and visible[: heads[0].byte_start].strip():
                out.diagnostics.append(_unsupported(self.source_id, 1))
            stack: list[Heading] = []
            for i, head in enumerate(heads):
                end = self._end(head.byte_start, heads[i + 1].byte_start if i + 1 < len(heads) else len(data))
                stack = [h for h in stack if h.level < head.level] + [head]
                line_end = data.find(b"\n", head.byte_start, end)
                body = data[line_end + 1 if line_end >= 0 else end : end].decode("utf-8").strip()
                kind = typed(head.text)
                if kind is None:
                    if body:
                        out.diagnostics.append(_unsupported(self.source_id, head.line))
                    continue
                title, memory_type, lane, destination = kind
                route = (memory_type, lane, destination)
                self._add(head.byte_start, end, head.line, [h.text for h in stack], memory_type, route, title, body)
            self._after_blocks(visible, heads)
        self._unplaced()
        if len(out.candidates) > MAX_CANDIDATES:
            raise CaptureError(f"the source yields more than {MAX_CANDIDATES} candidates", "capture_limit_exceeded")
        if sum(len(c["evidence"][0]["text"].encode("utf-8")) for c in out.candidates) > MAX_EVIDENCE_TOTAL:
            raise CaptureError(f"the evidence is larger than {MAX_EVIDENCE_TOTAL} bytes", "capture_limit_exceeded")
        return out

    def _untyped(self, visible: bytes, heads: list[Heading]) -> None:
        """A document without a typed heading: one ``needs_review`` candidate of its hand-written text before
        the first generated block (any hand-written text after one is reported as unsupported)."""
        end = self.blocks[0][0] if self.blocks else len(self.data)
        body = self.data[:end].decode("utf-8").strip()
        title = heads[0].text if heads and heads[0].text else self.path.rsplit("/", 1)[-1][: -len(".md")]
        if body:
            self._add(0, end, 1, [], "unclassified", ("fact", "semantic", None), title, body, routed=False)
        self._after_blocks(visible, [])

    def _masked(self) -> bytes:
        masked = bytearray(self.data)
        for start, end in self.blocks:
            masked[start:end] = bytes(b if b in b"\r\n" else 0x20 for b in self.data[start:end])
        return bytes(masked)

    def _end(self, start: int, end: int) -> int:
        """A section ends at the next heading or at the first generated block after its start."""
        return min([end, *(s for s, _ in self.blocks if start < s < end)])

    def _after_blocks(self, visible: bytes, heads: list[Heading]) -> None:
        """Hand-written text between a generated block's end and the next heading is never silently dropped."""
        for _, stop in self.blocks:
            following = [h.byte_start for h in heads if h.byte_start >= stop]
            if visible[stop : min([len(visible), *following])].strip():
                self.out.diagnostics.append(_unsupported(self.source_id, self.data[:stop].count(b"\n") + 1))

    def _add(
        self,
        start: int,
        end: int,
        line: int,
        heading_path: list[str],
        section_kind: str,
        kind: tuple[str, str, str | None],
        title: str,
        body: str,
        *,
        routed: bool = True,
    ) -> None:
        span = _span(self.data, start, end, line)
        hits = [f for f in self.findings if span["line_start"] <= f.line <= span["line_end"]]
        candidate = _candidate(
            self.source_id,
            self.locator,
            self.source_hash,
            self.data,
            span,
            heading_path,
            section_kind,
            kind,
            title,
            body,
            routed=self.table and routed,
            redacted=bool(hits),
        )
        if hits:
            candidate["prohibited"] = {"detectors": sorted({f.rule for f in hits}), "line_start": hits[0].line}
            self._diagnostics(hits, candidate["candidate_id"])
        self.out.candidates.append(candidate)

    def _diagnostics(self, hits: list[Any], candidate_id: str | None) -> None:
        for line in sorted({f.line for f in hits}):
            on_line = [f for f in hits if f.line == line]
            diagnostic: DiagnosticJson = {
                "code": "prohibited_content_detected",
                "source_id": self.source_id,
                "line_start": line,
                "path": self.path,
                "detectors": sorted({f.rule for f in on_line}),
                "classes": sorted({f.kind for f in on_line}),
            }
            if candidate_id is not None:
                diagnostic["candidate_id"] = candidate_id
            self.out.diagnostics.append(diagnostic)

    def _unplaced(self) -> None:
        """Fenced credentials outside every candidate (a preamble, an untyped section) are still reported."""
        spans = [c["evidence"][0]["span"] for c in self.out.candidates]
        rest = [f for f in self.findings if not any(s["line_start"] <= f.line <= s["line_end"] for s in spans)]
        if rest:
            self._diagnostics(rest, None)


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
    *,
    routed: bool = False,
    redacted: bool = False,
) -> ExtractedJson:
    """One extracted candidate; ``routed``: the heading table's destination is its route (1.1.0), else only its
    suggestion; ``redacted``: it holds a fenced credential, so its body and evidence text are :data:`REDACTED`
    (its identities hash the redacted memory and the real excerpt's hash)."""
    memory_type, lane, destination = kind
    excerpt = data[span["byte_start"] : span["byte_end"]]
    if len(excerpt) > MAX_EVIDENCE_ITEM:
        raise CaptureError(f"an evidence item is larger than {MAX_EVIDENCE_ITEM} bytes", "capture_limit_exceeded")
    memory: MemoryJson = {
        "type": memory_type,
        "lane": lane,
        "title": title,
        "body": REDACTED if redacted else body,
        "scope": {"kind": "repo", "id": None, "paths": [locator["path"]]},
        "tags": [],
    }
    evidence: EvidenceJson = {
        "source_id": source_id,
        "locator": locator,
        "source_content_hash": source_hash,
        "span": span,
        "evidence_content_hash": content_hash(excerpt),
        "text": REDACTED if redacted else excerpt.decode("utf-8"),
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
        "routed_destination": destination if routed else None,
        "suggested_destination": destination,
    }
