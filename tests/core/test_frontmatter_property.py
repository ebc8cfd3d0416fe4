"""Frontmatter round-trip: a no-op update is byte-identical, and a one-key update changes only that key's line."""

from __future__ import annotations

import datetime as dt
import json
import re

from hypothesis import assume, given
from hypothesis import strategies as st

from git_memzoi.core import frontmatter
from git_memzoi.core.frontmatter import BOM

KEYS = st.from_regex(r"[a-z][a-z0-9_]{0,10}", fullmatch=True).filter(lambda k: k not in ("true", "false", "null"))
# YAML-printable characters: no controls, surrogates, private use, line/paragraph separators or BOM
TEXT = st.text(st.characters(categories=("L", "M", "N", "P", "S", "Zs")), max_size=30)
PLAIN = re.compile(r"[A-Za-z][A-Za-z0-9 _.-]*[A-Za-z0-9_.]|[A-Za-z]")

values = st.one_of(
    TEXT,
    st.integers(min_value=-(10**15), max_value=10**15),
    st.dates(min_value=dt.date(1000, 1, 1), max_value=dt.date(9999, 12, 31)),
)
styles = st.sampled_from(["plain", "single", "double"])


def render(value: object, style: str) -> str:
    """YAML 1.2 text for ``value``, written independently of the code under test."""
    if isinstance(value, (int, dt.date)):
        return value.isoformat() if isinstance(value, dt.date) else str(value)
    assert isinstance(value, str)
    if style == "plain" and PLAIN.fullmatch(value) and value.lower() not in ("true", "false", "null", "y", "n"):
        return value
    if style in ("plain", "single"):
        return "'" + value.replace("'", "''") + "'"
    return json.dumps(value, ensure_ascii=False)


body_lines = st.lists(
    st.one_of(
        st.sampled_from(["---", "...", "--- ", "", "status: retired", "# Heading", "id: other"]),
        st.text(st.characters(exclude_categories=("Cs",), exclude_characters="\n\r"), max_size=20),
    ),
    max_size=8,
)


@st.composite
def documents(draw: st.DrawFn) -> tuple[bytes, dict[str, object], str, str]:
    """(file bytes, the mapping, the body, the line ending) for a file with a frontmatter block."""
    keys = draw(st.lists(KEYS, min_size=1, max_size=6, unique=True))
    mapping = {k: draw(values) for k in keys}
    nl = draw(st.sampled_from(["\n", "\r\n"]))
    bom = draw(st.sampled_from([b"", BOM]))
    lines = [f"{k}: {render(v, draw(styles))}" for k, v in mapping.items()]
    body = nl.join(draw(body_lines))
    body += draw(st.sampled_from(["", nl]))
    text = nl.join(["---", *lines, "---"]) + nl + body
    return bom + text.encode("utf-8"), mapping, body, nl


@given(documents())
def test_parse_returns_the_mapping_and_a_no_op_update_is_byte_identical(
    doc: tuple[bytes, dict[str, object], str, str],
) -> None:
    data, mapping, body, _ = doc
    parsed = frontmatter.parse(data)
    assert parsed.fields == mapping
    assert {k: type(v) for k, v in parsed.fields.items()} == {k: type(v) for k, v in mapping.items()}
    assert parsed.body == body
    assert frontmatter.update(data, {}) == data
    assert frontmatter.update(data, mapping) == data


@given(documents(), st.data())
def test_updating_one_key_changes_only_that_key_line(
    doc: tuple[bytes, dict[str, object], str, str], data_: st.DataObject
) -> None:
    data, mapping, body, nl = doc
    key = data_.draw(st.sampled_from(sorted(mapping)))
    new = data_.draw(values)
    assume(not (type(new) is type(mapping[key]) and new == mapping[key]))

    out = frontmatter.update(data, {key: new})

    assert out[:3] == data[:3]  # the BOM, or its absence, is kept
    before, after = data.split(b"\n"), out.split(b"\n")
    assert len(after) == len(before)
    index = list(mapping).index(key) + 1  # line 0 is the opening fence
    assert [i for i, (a, b) in enumerate(zip(before, after, strict=True)) if a != b] == [index]
    assert after[index].startswith(f"{key}: ".encode())
    assert after[index].endswith(b"\r") == (nl == "\r\n")
    parsed = frontmatter.parse(out)
    assert parsed.fields == {**mapping, key: new}
    assert type(parsed.fields[key]) is type(new)
    assert parsed.body == body


@given(documents(), KEYS, values)
def test_adding_a_key_adds_exactly_one_line_before_the_closing_fence(
    doc: tuple[bytes, dict[str, object], str, str], key: str, value: object
) -> None:
    data, mapping, body, nl = doc
    assume(key not in mapping)

    out = frontmatter.update(data, {key: value})

    before, after = data.split(b"\n"), out.split(b"\n")
    fence = len(mapping) + 1  # the closing fence's line
    assert after[:fence] == before[:fence]
    assert after[fence + 1 :] == before[fence:]
    assert after[fence].startswith(f"{key}: ".encode()) and after[fence].endswith(b"\r") == (nl == "\r\n")
    assert frontmatter.parse(out).fields == {**mapping, key: value}
    assert frontmatter.parse(out).body == body


FENCE_PIECES = st.sampled_from(["---", "...", "--", "----", " ", "\t", "\r", "\n", "\r\n", "a: b", "x---", "-", "é"])


def _is_fence(line: str, closing: bool) -> bool:
    """The fence rule of the module docstring, written line by line (the reader finds fences by pattern)."""
    content = line.rstrip("\r\n").rstrip(" \t")
    return content == "---" or (closing and content == "...")


@given(st.lists(FENCE_PIECES, max_size=14), st.sampled_from([b"", BOM]))
def test_the_fences_are_the_first_line_and_the_next_fence_line(pieces: list[str], bom: bytes) -> None:
    text = "".join(pieces)
    parts = frontmatter.split(bom + text.encode("utf-8"))
    lines = re.findall(r"[^\n]*\n|[^\n]+", text)  # lines end at a line feed only
    opens = bool(lines) and lines[0].endswith("\n") and _is_fence(lines[0], False)
    closing_at = next((i for i, line in enumerate(lines[1:], 1) if _is_fence(line, True)), None) if opens else None
    assert parts.bom == bom
    assert parts.has_frontmatter == (closing_at is not None)
    if closing_at is None:
        assert (parts.opening, parts.yaml_text, parts.closing, parts.body) == ("", "", "", text)
    else:
        assert parts.opening == lines[0]
        assert parts.yaml_text == "".join(lines[1:closing_at])
        assert parts.closing == lines[closing_at]
        assert parts.body == "".join(lines[closing_at + 1 :])
    first = lines[0] if lines else ""
    assert parts.newline == ("\r\n" if first.endswith("\r\n") else "\n")
