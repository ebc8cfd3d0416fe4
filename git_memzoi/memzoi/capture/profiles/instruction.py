"""The ``instruction-deterministic`` capture profile: one agent instruction file (``AGENTS.md`` / ``CLAUDE.md``)
→ scoped procedure candidates (memzoi-spec.md §9.3, §9.5; seed "Instruction, ADR, and Git-change profiles").

Rules:

- Every section (an ATX heading outside fences, up to the next heading of any level) with a non-empty body
  becomes a ``procedure``/``procedural`` candidate titled by its heading; a typed heading (``Fact:`` …) keeps its
  own type, lane and route, titled without the prefix. A non-empty preamble becomes the candidate
  "Repository instructions".
- ``scope.paths`` is the file's parent directory (``[]`` for a root file); tags ``[agent-instructions]``; evidence
  ``section_kind`` ``instruction`` (``instruction_<type>`` for a typed heading) with ``semantic_location
  {kind: instruction}``. Evidence spans run from the heading's first byte to the end of the trimmed section.
- A heading on the section's path, or a body/preamble line, holding a review marker word sequence
  (:data:`REVIEW_MARKERS`, whole words, case-insensitive) is routed to ``needs_review`` instead of its profile route.
- A file whose first text is the generated-projection marker is skipped (``generated_projection_excluded``);
  generated Memzoi marker blocks inside a hand-written file are left out of every candidate and evidence item
  (``generated_instruction_block_excluded``). Malformed marker pairs fail closed (``extractor_safeguard_failed``).
- Prohibited content anywhere in the file blocks the plan (``prohibited_content_detected``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from git_memzoi.core.hashing import content_hash
from git_memzoi.core.patterns import lazy
from git_memzoi.memzoi.capture import sources
from git_memzoi.memzoi.capture.profiles import generated
from git_memzoi.memzoi.capture.profiles import markdown as md
from git_memzoi.memzoi.capture.profiles.markdown import CaptureError, Extraction

if TYPE_CHECKING:
    from git_memzoi.memzoi.capture.schema import DiagnosticJson, EvidenceJson, MemoryJson, ScopeJson, SpanJson

PROFILE = "instruction-deterministic"
EXTRACTOR = {"kind": "deterministic", "id": "memzoi-instructions", "version": "1.0.0"}
BASENAMES = ("AGENTS.md", "CLAUDE.md")
TAGS = ("agent-instructions",)
PREAMBLE_TITLE = "Repository instructions"
# word sequences that make an instruction's sharing or lifetime ambiguous (matched on whole words)
REVIEW_MARKERS = (
    ("temporary",),
    ("current", "task"),
    ("this", "task"),
    ("session",),
    ("wip",),
    ("scratch",),
    ("personal",),
    ("private",),
    ("local", "only"),
)
GENERATED_HEADER = generated.GENERATED_HEADER
MARKER_PAIRS = generated.MARKER_PAIRS
_WORD = lazy(r"[^\W_]+")
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
# what the extractor's identity hashes (``extractor.configuration_hash``)
CONFIGURATION = {
    "basenames": BASENAMES,
    "prefixes": md.PREFIXES,
    "review_markers": REVIEW_MARKERS,
    "generated_header": GENERATED_HEADER,
    "marker_pairs": MARKER_PAIRS,
}


def load(ws: Any, source: dict[str, Any], supplied: Mapping[str, bytes]) -> sources.Loaded:
    """The instruction-deterministic profile: one ``project_path`` named ``AGENTS.md`` or ``CLAUDE.md``.

    Returns:
        :class:`~git_memzoi.memzoi.capture.sources.Loaded` with the snapshot, the :func:`extract` result and the
        extractor identity ``memzoi-instructions`` 1.0.0.

    Raises:
        CaptureError: ``unsupported_capture_profile`` (not a ``project_path`` locator), ``unsupported_media_type``
            (not ``text/markdown`` or another basename), the path and read rules of
            :func:`~git_memzoi.memzoi.capture.sources.read_source`, and the rules of :func:`extract`.
    """
    path = sources.project_path(source)
    if path.rsplit("/", 1)[-1] not in BASENAMES:
        raise CaptureError("the instruction profile reads one AGENTS.md or CLAUDE.md file", "unsupported_media_type")
    data = sources.read_source(ws.layout.root, path)
    return sources.Loaded(
        sources.snapshot(source, data),
        extract(source["source_id"], path, data),
        sources.extractor(EXTRACTOR, CONFIGURATION),
    )


def has_review_marker(text: str) -> bool:
    """True when ``text`` (one heading or line) holds a :data:`REVIEW_MARKERS` word sequence: words are runs of
    letters and digits, compared ASCII-case-insensitively ("Current-task" matches, "Temporarily" does not)."""
    words = _WORD.findall(text.translate(_ASCII_LOWER))
    return any(tuple(words[i : i + len(m)]) == m for m in REVIEW_MARKERS for i in range(len(words) - len(m) + 1))


def extract(source_id: str, path: str, data: bytes) -> Extraction:
    """Run the profile over one instruction file's bytes (UTF-8 required, code ``invalid_encoding``).

    Returns:
        An :class:`~git_memzoi.memzoi.capture.profiles.markdown.Extraction` whose candidates carry the routing hints
        ``routed_destination`` (``repo``/``local``/``session``, ``None`` = needs review), ``suggested_destination``,
        ``reason_code`` and ``destination_reason``; ``blocked`` with ``prohibited_content_detected`` diagnostics
        (rule and line only) when the file holds prohibited content.

    Raises:
        CaptureError: ``source_too_large``, ``invalid_encoding``, ``capture_limit_exceeded`` (headings, candidates,
            evidence), ``extractor_safeguard_failed`` (malformed generated markers).
    """
    from git_memzoi.memzoi.records.secrets import classify

    if len(data) > md.MAX_SOURCE_BYTES:
        raise CaptureError(f"the source is larger than {md.MAX_SOURCE_BYTES} bytes", "source_too_large")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise CaptureError("the source is not UTF-8", "invalid_encoding") from None
    scanned = text
    for pair in MARKER_PAIRS:  # the marker lines are ours; what sits between them is still scanned
        for marker in pair:
            scanned = scanned.replace(marker, " " * len(marker))
    findings = classify(scanned)
    if findings:
        return md.blocked(source_id, findings)
    if generated.is_projection(text):
        return Extraction([], [_diagnostic("generated_projection_excluded", source_id, 1)])
    blocks = generated.byte_ranges(text)
    if blocks is None:
        raise CaptureError("the instruction file has malformed Memzoi generated markers", "extractor_safeguard_failed")
    return _Document(source_id, path, data, blocks).extract()


def _diagnostic(code: str, source_id: str, line: int) -> DiagnosticJson:
    return {"code": code, "source_id": source_id, "line_start": line}


class _Document:
    """One hand-written instruction file: its bytes, the generated blocks left out, and the candidates built."""

    def __init__(self, source_id: str, path: str, data: bytes, blocks: list[tuple[int, int]]) -> None:
        self.source_id, self.data, self.blocks = source_id, data, blocks
        self.locator = {"kind": "project_path", "path": path}
        self.source_hash = content_hash(data)
        self.scope: ScopeJson = {
            "kind": "repo",
            "id": None,
            "paths": [path.rsplit("/", 1)[0]] if "/" in path else [],
        }
        masked = bytearray(data)
        for start, end in blocks:
            masked[start:end] = bytes(b if b in b"\r\n" else 0x20 for b in data[start:end])
        self.masked = bytes(masked)

    def extract(self) -> Extraction:
        out = Extraction()
        heads = md.headings(self.masked)
        preamble_end = heads[0].byte_start if heads else len(self.data)
        if preamble := self._visible(0, preamble_end):
            self._add(out, 0, preamble_end, preamble, [], None, PREAMBLE_TITLE, "explicit_instruction_file_preamble")
        stack: list[md.Heading] = []
        for i, head in enumerate(heads):
            end = heads[i + 1].byte_start if i + 1 < len(heads) else len(self.data)
            stack = [h for h in stack if h.level < head.level] + [head]
            newline = self.masked.find(b"\n", head.byte_start, end)
            body = self._visible(newline + 1 if newline >= 0 else end, end)
            if not body:
                continue
            typed = md.typed(head.text)
            if typed is None and not head.text:  # a bare "#" names nothing a reviewer could judge
                out.diagnostics.append(_diagnostic("unsupported_instruction_content", self.source_id, head.line))
                continue
            self._add(
                out,
                head.byte_start,
                end,
                body,
                [h.text for h in stack],
                typed,
                typed[0] if typed else head.text,
                "deterministic_instruction_section",
            )
        if len(out.candidates) > md.MAX_CANDIDATES:
            raise CaptureError(f"the source yields more than {md.MAX_CANDIDATES} candidates", "capture_limit_exceeded")
        total = sum(len(e["text"].encode("utf-8")) for c in out.candidates for e in c["evidence"])
        if total > md.MAX_EVIDENCE_TOTAL:
            raise CaptureError(f"the evidence is larger than {md.MAX_EVIDENCE_TOTAL} bytes", "capture_limit_exceeded")
        if not out.candidates and not self.blocks and not out.diagnostics:
            out.diagnostics.append(_diagnostic("unsupported_instruction_content", self.source_id, 1))
        if self.blocks:
            out.diagnostics.append(
                _diagnostic(
                    "generated_instruction_block_excluded",
                    self.source_id,
                    self.data.count(b"\n", 0, self.blocks[0][0]) + 1,
                )
            )
        return out

    def _pieces(self, start: int, end: int) -> list[tuple[int, int]]:
        """The parts of ``[start, end)`` outside every generated block, each trimmed of whitespace, non-empty."""
        pieces = [(start, end)]
        for b_start, b_end in self.blocks:
            kept = []
            for s, e in pieces:
                if b_end <= s or b_start >= e:
                    kept.append((s, e))
                else:
                    kept += [part for part in ((s, b_start), (b_end, e)) if part[0] < part[1]]
            pieces = kept
        trimmed = []
        for s, e in pieces:
            chunk = self.data[s:e].decode("utf-8")
            lead, trail = len(chunk) - len(chunk.lstrip()), len(chunk) - len(chunk.rstrip())
            if lead + trail < len(chunk):
                trimmed.append(
                    (s + len(chunk[:lead].encode("utf-8")), e - len(chunk[len(chunk) - trail :].encode("utf-8")))
                )
        return trimmed

    def _visible(self, start: int, end: int) -> str:
        return "\n".join(self.data[s:e].decode("utf-8") for s, e in self._pieces(start, end))

    def _add(
        self,
        out: Extraction,
        start: int,
        end: int,
        body: str,
        heading_path: list[str],
        typed: tuple[str, str, str, str] | None,
        title: str,
        reason: str,
    ) -> None:
        """Append the candidate of one section (or the preamble) with its evidence and routing hints."""
        memory_type, lane, route = (typed[1], typed[2], typed[3]) if typed else ("procedure", "procedural", "repo")
        section_kind = f"instruction_{memory_type}" if typed else "instruction"
        evidence = [self._evidence(s, e, heading_path, section_kind) for s, e in self._pieces(start, end)]
        ambiguous = any(has_review_marker(h) for h in heading_path) or any(
            has_review_marker(line) for line in body.splitlines()
        )
        memory: MemoryJson = {
            "type": memory_type,
            "lane": lane,
            "title": title,
            "body": body,
            "scope": {**self.scope, "paths": list(self.scope["paths"])},
            "tags": list(TAGS),
        }
        claim_id = "claim_" + md.canonical_hash(memory)[:32]
        candidate_id = "candidate_" + md.canonical_hash({"claim": claim_id, "evidence": evidence})[:32]
        out.candidates.append(
            {
                "claim_id": claim_id,
                "candidate_id": candidate_id,
                "memory": memory,
                "evidence": evidence,
                "extraction": {"profile": PROFILE, **EXTRACTOR},
                "confidence": "1.0",
                "routed_destination": None if ambiguous else route,
                "suggested_destination": None if ambiguous else route,
                "reason_code": "needs_review",
                "destination_reason": "temporary_or_ambiguous_instruction_requires_review" if ambiguous else reason,
            }
        )

    def _evidence(self, start: int, end: int, heading_path: list[str], section_kind: str) -> EvidenceJson:
        excerpt = self.data[start:end]
        if len(excerpt) > md.MAX_EVIDENCE_ITEM:
            raise CaptureError(
                f"an evidence item is larger than {md.MAX_EVIDENCE_ITEM} bytes", "capture_limit_exceeded"
            )
        line = self.data.count(b"\n", 0, start) + 1
        span: SpanJson = {
            "byte_start": start,
            "byte_end": end,
            "line_start": line,
            "line_end": line + excerpt[:-1].count(b"\n"),
        }
        return {
            "source_id": self.source_id,
            "locator": dict(self.locator),
            "source_content_hash": self.source_hash,
            "span": span,
            "evidence_content_hash": content_hash(excerpt),
            "text": excerpt.decode("utf-8"),
            "heading_path": list(heading_path),
            "section_kind": section_kind,
            "semantic_location": {"kind": "instruction"},
        }
