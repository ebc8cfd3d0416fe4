"""Markdown files with a YAML frontmatter block: split, parse, and update byte-stably.

Rules (field reports BR-10 to BR-13): an optional UTF-8 BOM, then a first line ``---`` opens the block and the
next line that is exactly ``---`` (or ``...``) closes it; no closing fence means no frontmatter, and the whole
file is body. Line endings are kept as they are (never read in universal-newline mode). A later ``---`` in the
body is body. An update changes only the lines of the fields it changes; comments, key order, quoting and the
body stay byte-identical, and a file whose YAML does not parse is refused, never stacked with a second block.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from git_memzoi.core import yamlio
from git_memzoi.core.patterns import lazy
from git_memzoi.errors import InputError, ToolError

BOM = b"\xef\xbb\xbf"
# a fence line: the marker, then spaces or tabs, then carriage returns, then the line feed (the opening needs one)
_OPENING = lazy(r"---[ \t]*\r*\n")
_CLOSING = lazy(r"^(?:---|\.\.\.)[ \t]*\r*(?:\n|\Z)", re.MULTILINE)
# git's conflict markers, all three in order at line starts: a file a merge left unresolved
_CONFLICT = lazy(r"^<<<<<<<(?: |\r?$).*?^=======\r?$.*?^>>>>>>>(?: |\r?$)", re.MULTILINE | re.DOTALL)
_YAML_LINE = lazy(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+")  # YAML's line breaks, as ruamel counts lines


class FrontmatterError(InputError):
    """A file whose frontmatter cannot be read: names the 1-based file ``line`` when known."""

    default_code = "bad_frontmatter"

    def __init__(self, reason: str, line: int | None = None, code: str | None = None, path: str | None = None) -> None:
        where = f"line {line}: " if line else ""
        super().__init__(f"{path}: {where}{reason}" if path else f"{where}{reason}", code)
        self.reason = reason
        self.line = line
        self.path = path

    def located(self, path: str) -> FrontmatterError:
        """The same error naming the file it was found in, ``path`` (repository-relative)."""
        return FrontmatterError(self.reason, self.line, self.code, path)


@dataclass(frozen=True)
class Split:
    """A file cut into its parts, without parsing the YAML. Text parts keep their own line endings."""

    bom: bytes
    has_frontmatter: bool
    opening: str  # the opening fence line, with its line ending ('' without frontmatter)
    yaml_text: str  # between the fences
    closing: str  # the closing fence line, with its line ending
    body: str
    newline: str  # the line ending new lines get: that of the opening fence, else '\n'

    @property
    def body_start_line(self) -> int:
        """1-based file line where the body starts."""
        return 1 + (self.opening + self.yaml_text + self.closing).count("\n")


@dataclass(frozen=True)
class Document:
    """A parsed file: its fields (plain Python values) and body, plus the raw parts for byte-stable edits."""

    split: Split
    fields: dict[str, Any]
    spans: dict[str, yamlio.KeySpan] = field(repr=False)

    @property
    def body(self) -> str:
        """The body text after the closing fence."""
        return self.split.body


def split(data: bytes) -> Split:
    """Cut ``data`` into BOM, fences, YAML text and body.

    Raises:
        FrontmatterError: when ``data`` is not UTF-8 (code ``not_utf8``), or holds git's conflict markers
            (``<<<<<<<``, ``=======``, ``>>>>>>>`` at line starts, in that order: ``merge_conflict``): a memory
            file a merge left unresolved is unreadable, never a claim that holds.
    """
    bom = BOM if data.startswith(BOM) else b""
    try:
        text = data[len(bom) :].decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FrontmatterError(f"not UTF-8 text (byte {exc.start})", None, "not_utf8") from None
    if "\n>>>>>>>" in text and (conflict := _CONFLICT.search(text)) is not None:
        line = text.count("\n", 0, conflict.start()) + 1
        raise FrontmatterError(
            f"unresolved merge conflict (<<<<<<< on line {line}): resolve it, then git add the file",
            line,
            "merge_conflict",
        )
    # the fences by pattern: the body is the rest of the text, never split into lines
    opening = _OPENING.match(text)
    if opening is None:
        first = text.find("\n")
        return Split(bom, False, "", "", "", text, _ending(text[: first + 1] if first >= 0 else text))
    closing = _CLOSING.search(text, opening.end())
    if closing is None:
        return Split(bom, False, "", "", "", text, _ending(opening.group()))
    yaml_text = text[opening.end() : closing.start()]
    return Split(
        bom, True, opening.group(), yaml_text, closing.group(), text[closing.end() :], _ending(opening.group())
    )


def missing_reason(parts: Split) -> str:
    """Why ``parts`` (of a file that must have frontmatter) has none, in words: an opening ``---`` line whose
    block never closes, or no opening line at all."""
    if _OPENING.match(parts.body) is not None:
        return "the frontmatter block opened by --- on line 1 has no closing --- line"
    return "no frontmatter block (the file must start with ---)"


def _ending(line: str) -> str:
    return "\r\n" if line.endswith("\r\n") else "\n"


def parse(data: bytes) -> Document:
    """Parse the frontmatter of ``data``; a file without frontmatter has no fields.

    Raises:
        FrontmatterError: on invalid YAML (with the 1-based file line), or frontmatter that is not a mapping.
    """
    parts = split(data)
    if not parts.has_frontmatter:
        return Document(parts, {}, {})
    try:
        fields, spans = yamlio.load_mapping(parts.yaml_text)
    except yamlio.YamlProblem as exc:
        line = None if exc.line is None else exc.line + 2  # YAML line 0 is file line 2
        raise FrontmatterError(exc.reason, line, exc.code) from None
    return Document(parts, fields, spans)


def update(data: bytes, changes: Mapping[str, Any]) -> bytes:
    """Return ``data`` with the top-level ``changes`` applied, touching only the changed fields' lines.

    A changed key whose value is a one-line scalar is rewritten in place (its trailing comment kept); a new key
    is appended as the block's last line; a file without frontmatter gets a new block. A key set to the value
    (and type) it already has is no change, and without changes ``data`` comes back as it is. The result is
    re-parsed and checked before it is returned.

    Raises:
        FrontmatterError: when the existing frontmatter does not parse (nothing is changed).
        ToolError: when a field cannot be rewritten in place (a block or multi-line value).
    """
    doc = parse(data)
    parts = doc.split
    nl = parts.newline
    lines = _YAML_LINE.findall(parts.yaml_text)
    appended: list[str] = []
    changed = False
    for key, value in changes.items():
        if key in doc.fields and _same(doc.fields[key], value):
            continue
        changed = True
        rendered = yamlio.dump_scalar(value)
        span = doc.spans.get(key)
        if span is None:
            appended.append(f"{key}: {rendered}{nl}")
        elif span.is_scalar and span.key_line == span.value_line:
            lines[span.value_line] = _replace_scalar(lines[span.value_line], span.value_col, rendered)
        else:
            raise ToolError(f"field {key!r} is not a one-line value; edit it by hand", "not_rewritable")
    if not changed:
        return data
    if lines and appended and not lines[-1].endswith("\n"):
        lines[-1] += nl
    yaml_text = "".join(lines) + "".join(appended)
    if parts.has_frontmatter:
        text = parts.opening + yaml_text + parts.closing + parts.body
    else:
        text = f"---{nl}{yaml_text}---{nl}" + parts.body
    result = parts.bom + text.encode("utf-8")
    _check(result, doc.fields, changes)
    return result


def _replace_scalar(line: str, col: int, rendered: str) -> str:
    end = _scalar_end(line, col)
    return line[:col] + rendered + line[end:]


def _scalar_end(line: str, col: int) -> int:
    """Index just past the scalar token that starts at ``col`` (quoted or plain, before any comment)."""
    content_end = len(line.rstrip("\r\n"))
    if col < content_end and line[col] in "\"'":
        quote, i = line[col], col + 1
        while i < content_end:
            if quote == '"' and line[i] == "\\":
                i += 2
                continue
            if line[i] == quote:
                if quote == "'" and i + 1 < content_end and line[i + 1] == "'":
                    i += 2
                    continue
                return i + 1
            i += 1
        return content_end
    comment = re.search(r"\s#", line[col:content_end])
    end = col + comment.start() if comment else content_end
    while end > col and line[end - 1] in " \t":
        end -= 1
    return end


def _same(old: Any, new: Any) -> bool:
    # 1 == True == 1.0 in Python, but `n: 1` set to true is a change
    return type(old) is type(new) and old == new


def _check(result: bytes, before: Mapping[str, Any], changes: Mapping[str, Any]) -> None:
    try:
        after = parse(result).fields
    except FrontmatterError:
        after = None
    if after != {**before, **changes} or not all(_same(after[k], v) for k, v in changes.items()):
        raise ToolError("the frontmatter could not be updated byte-stably; edit it by hand", "not_rewritable")
