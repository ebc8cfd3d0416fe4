"""Frontmatter parse and byte-stable update: field reports BR-06, BR-08, BR-10 to BR-13, and the update contract."""

from __future__ import annotations

import datetime as dt
import hashlib
from pathlib import Path

import pytest

from git_memzoi.core import frontmatter
from git_memzoi.core.frontmatter import BOM, FrontmatterError
from git_memzoi.errors import ToolError

QUOTE_HINT = "; quote a value that holds ': ' (run: \"grep -q 'x: y' f\")"  # the hint for the commonest slip


def fences(data: bytes) -> int:
    """How many lines of ``data`` are exactly a ``---`` fence (any line ending)."""
    return sum(1 for line in data.splitlines() if line == b"---")


# BR-06: YAML 1.2 core schema, no "Norway problem".

BR06 = b"---\nid: locale-defaults\nregion: NO\ntags: [en, no, sv]\nstatus: active\n---\nLocale defaults.\n"


def test_br06_no_and_NO_stay_strings_and_survive_an_update() -> None:
    doc = frontmatter.parse(BR06)
    assert doc.fields == {"id": "locale-defaults", "region": "NO", "tags": ["en", "no", "sv"], "status": "active"}
    assert type(doc.fields["region"]) is str
    assert [type(t) for t in doc.fields["tags"]] == [str, str, str]

    out = frontmatter.update(BR06, {"status": "retired"})

    assert out == b"---\nid: locale-defaults\nregion: NO\ntags: [en, no, sv]\nstatus: retired\n---\nLocale defaults.\n"
    assert out.splitlines()[2:4] == [b"region: NO", b"tags: [en, no, sv]"]
    assert b"false" not in out.lower()
    assert "no" in frontmatter.parse(out).fields["tags"]


# BR-08: dates are not re-serialised by an unrelated update.

BR08 = (
    b"---\nid: cache-policy\nreviewed: 2026-03-16\nobserved_at: 2026-03-16T09:05:28-06:00\n"
    b"expires: 2026-06-30\nstatus: active\n---\nCache entries live 10 minutes.\n"
)


def test_br08_only_the_status_line_changes_and_dates_keep_their_bytes() -> None:
    doc = frontmatter.parse(BR08)
    assert doc.fields["reviewed"] == dt.date(2026, 3, 16)
    assert type(doc.fields["reviewed"]) is dt.date
    assert doc.fields["observed_at"] == dt.datetime(2026, 3, 16, 9, 5, 28, tzinfo=dt.timezone(dt.timedelta(hours=-6)))
    assert doc.fields["observed_at"].utcoffset() == dt.timedelta(hours=-6)
    assert doc.fields["expires"] == dt.date(2026, 6, 30)
    assert doc.fields["reviewed"].isoformat() == "2026-03-16"  # what JSON output shows

    out = frontmatter.update(BR08, {"status": "retired"})

    assert out == BR08.replace(b"status: active", b"status: retired")
    before, after = BR08.splitlines(), out.splitlines()
    assert [i for i, (a, b) in enumerate(zip(before, after, strict=True)) if a != b] == [5]
    assert after[2:5] == [b"reviewed: 2026-03-16", b"observed_at: 2026-03-16T09:05:28-06:00", b"expires: 2026-06-30"]
    assert b"T00:00:00" not in out and b".000Z" not in out and b"2026-03-16 " not in out


def test_br08_a_date_or_datetime_written_by_an_update_is_iso_8601() -> None:
    data = b"---\nid: x\nreviewed: old\n---\n"
    assert frontmatter.update(data, {"reviewed": dt.date(2026, 3, 16)}) == b"---\nid: x\nreviewed: 2026-03-16\n---\n"
    when = dt.datetime(2026, 3, 16, 9, 5, 28, tzinfo=dt.timezone(dt.timedelta(hours=-6)))
    out = frontmatter.update(data, {"reviewed": when})
    assert out == b"---\nid: x\nreviewed: 2026-03-16T09:05:28-06:00\n---\n"
    assert frontmatter.parse(out).fields["reviewed"] == when


# BR-10: invalid or foreign frontmatter.

BR10A = (
    b"---\nid: spec-rules\nsummary: Rules for spec files (REQ/DESIGN): read the schema first\nkind: guideline\n"
    b"---\nBody.\n"
)
BR10B = b"---\ntitle: KB: Cache rules\nstatus: active\n---\nBody.\n"
BR10C = b'---\ntitle: "Field Notes"\nkind: litnote\ntags:\n  - research\ncitekey: note2024\n---\nBody.\n'
BR10D = b"# Heading\n\nSome text.\n\n---\n\nMore text after a rule.\n"


def test_br10a_unquoted_colon_is_a_parse_error_at_file_line_3() -> None:
    with pytest.raises(FrontmatterError) as caught:
        frontmatter.parse(BR10A)
    assert caught.value.line == 3
    assert caught.value.code == "bad_frontmatter"
    assert caught.value.message == "line 3: mapping values are not allowed here" + QUOTE_HINT


@pytest.mark.parametrize(("data", "line"), [(b"---\ntype:\tfact\n---\n", 2), (b"---\nscope:\n\t- a\n---\n", 3)])
def test_a_tab_ruamel_refuses_is_named_with_the_fix(data: bytes, line: int) -> None:
    with pytest.raises(FrontmatterError) as caught:
        frontmatter.parse(data)
    assert caught.value.message == (
        f"line {line}: found character '\\t' that cannot start any token; indent and separate with spaces, not tabs"
    )


def test_a_tab_inside_a_quoted_value_is_read() -> None:
    assert frontmatter.parse(b'---\na: "x\ty"\n---\n').fields == {"a": "x\ty"}


def test_br10b_update_is_refused_and_never_stacks_a_second_block(tmp_path: Path) -> None:
    file = tmp_path / "kb.md"
    file.write_bytes(BR10B)
    digest = hashlib.sha256(BR10B).hexdigest()

    with pytest.raises(FrontmatterError) as caught:
        file.write_bytes(frontmatter.update(file.read_bytes(), {"status": "retired"}))

    assert caught.value.line == 2
    assert caught.value.message == "line 2: mapping values are not allowed here" + QUOTE_HINT
    assert hashlib.sha256(file.read_bytes()).hexdigest() == digest
    assert fences(file.read_bytes()) == 2


def test_br10c_the_tool_field_is_merged_into_the_one_foreign_block() -> None:
    out = frontmatter.update(BR10C, {"id": "field-notes"})
    assert out == (
        b'---\ntitle: "Field Notes"\nkind: litnote\ntags:\n  - research\ncitekey: note2024\nid: field-notes\n'
        b"---\nBody.\n"
    )
    assert fences(out) == 2
    assert list(frontmatter.parse(out).fields) == ["title", "kind", "tags", "citekey", "id"]


def test_br10d_a_heading_and_a_later_rule_is_no_frontmatter_and_no_error() -> None:
    doc = frontmatter.parse(BR10D)
    assert doc.split.has_frontmatter is False
    assert doc.fields == {}
    assert doc.body == BR10D.decode()
    assert frontmatter.update(BR10D, {}) == BR10D
    assert frontmatter.update(BR10D, {"status": "retired"}) == b"---\nstatus: retired\n---\n" + BR10D


# BR-11: a UTF-8 BOM does not hide the frontmatter.

BR11 = BOM + b"---\nid: bom-note\nkind: decision\n---\nBody\n"


def test_br11_bom_is_read_through_and_kept() -> None:
    doc = frontmatter.parse(BR11)
    assert doc.fields == {"id": "bom-note", "kind": "decision"}
    assert doc.split.bom == BOM
    assert doc.body == "Body\n"
    assert frontmatter.update(BR11, {}) == BR11

    out = frontmatter.update(BR11, {"status": "active"})

    assert out == b"\xef\xbb\xbf---\nid: bom-note\nkind: decision\nstatus: active\n---\nBody\n"
    assert out[:3] == b"\xef\xbb\xbf"
    assert fences(out[3:]) == 2


# BR-12: CRLF frontmatter.

BR12 = b"---\r\nid: crlf-note\r\nstatus: active\r\n---\r\nLine one\r\n"


def test_br12_crlf_is_parsed_without_cr_and_kept_on_update() -> None:
    doc = frontmatter.parse(BR12)
    assert doc.fields == {"id": "crlf-note", "status": "active"}
    assert doc.body == "Line one\r\n"
    assert frontmatter.update(BR12, {}) == BR12

    out = frontmatter.update(BR12, {"status": "retired"})

    assert out == b"---\r\nid: crlf-note\r\nstatus: retired\r\n---\r\nLine one\r\n"
    assert out.count(b"\n") == out.count(b"\r\n") == 5


def test_br12_a_new_key_in_a_crlf_file_gets_crlf() -> None:
    out = frontmatter.update(BR12, {"kind": "fact"})
    assert out == b"---\r\nid: crlf-note\r\nstatus: active\r\nkind: fact\r\n---\r\nLine one\r\n"


# BR-13: `---` in the body, lone leading `---`, empty frontmatter.

BR13A = b"---\nid: deploy-notes\nstatus: active\n---\nIntro paragraph.\n\n---\n\nstatus: retired\nowner: ops\n"
BR13B = b"---\n---\nBody\n"
BR13C = b"---\n\nExample\n"


def test_br13a_a_later_rule_is_body() -> None:
    doc = frontmatter.parse(BR13A)
    assert doc.fields == {"id": "deploy-notes", "status": "active"}
    assert doc.body == "Intro paragraph.\n\n---\n\nstatus: retired\nowner: ops\n"
    assert doc.split.body_start_line == 5


def test_br13b_empty_frontmatter_has_no_fields() -> None:
    doc = frontmatter.parse(BR13B)
    assert doc.split.has_frontmatter is True
    assert doc.fields == {}
    assert doc.body == "Body\n"
    assert frontmatter.update(BR13B, {"id": "x"}) == b"---\nid: x\n---\nBody\n"


def test_br13c_no_closing_fence_means_the_whole_file_is_body() -> None:
    doc = frontmatter.parse(BR13C)
    assert doc.split.has_frontmatter is False
    assert doc.fields == {}
    assert doc.body == "---\n\nExample\n"


@pytest.mark.parametrize("data", [BR13A, BR13B, BR13C], ids=["body-rule", "empty", "unclosed"])
def test_br13_no_op_rewrite_is_byte_identical(data: bytes) -> None:
    assert frontmatter.update(data, {}) == data


def test_br13a_update_leaves_the_body_fields_alone() -> None:
    out = frontmatter.update(BR13A, {"status": "retired"})
    assert out == BR13A.replace(b"status: active", b"status: retired", 1)
    assert out.endswith(b"---\n\nstatus: retired\nowner: ops\n")


# The update contract.


def test_setting_fields_to_their_current_values_is_byte_identical() -> None:
    assert frontmatter.update(BR08, frontmatter.parse(BR08).fields) == BR08
    assert frontmatter.update(BR06, {"region": "NO", "tags": ["en", "no", "sv"]}) == BR06


def test_a_changed_type_is_a_change_even_when_python_calls_it_equal() -> None:
    data = b"---\nflag: 1\nratio: 1\n---\n"
    assert frontmatter.update(data, {"flag": True}) == b"---\nflag: true\nratio: 1\n---\n"
    assert frontmatter.update(data, {"ratio": 1.0}) == b"---\nflag: 1\nratio: 1.0\n---\n"
    assert frontmatter.parse(frontmatter.update(data, {"flag": True})).fields["flag"] is True


def test_a_trailing_comment_is_kept() -> None:
    data = b"---\nid: a\nstatus: active   # verified by hand\nkind: fact # why\n---\nB\n"
    out = frontmatter.update(data, {"status": "retired", "kind": "decision"})
    assert out == b"---\nid: a\nstatus: retired   # verified by hand\nkind: decision # why\n---\nB\n"


@pytest.mark.parametrize(
    ("line", "value", "expected"),
    [
        (b'title: "Old title"', "New", b"title: New"),
        (b"title: 'it''s old'  # c", "plain", b"title: plain  # c"),
        (b'title: "a \\" # not a comment"', "b", b"title: b"),
        (b"title: old", "New: title", b"title: 'New: title'"),
        (b"title: old", "2026-03-16", b"title: '2026-03-16'"),
        (b"title: old", "no", b"title: no"),
        (b"title: old", "#hash", b"title: '#hash'"),
        (b"title: old", "two\nlines", b'title: "two\\nlines"'),
        (b"title: old", None, b"title: null"),
        (b"title: ~", "set", b"title: set"),
    ],
)
def test_quoted_and_special_values_are_rewritten_exactly(line: bytes, value: object, expected: bytes) -> None:
    data = b"---\nid: q\n" + line + b"\nend: 1\n---\nBody\n"
    out = frontmatter.update(data, {"title": value})
    assert out == b"---\nid: q\n" + expected + b"\nend: 1\n---\nBody\n"
    assert frontmatter.parse(out).fields == {"id": "q", "title": value, "end": 1}


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"Body only\n", b"---\nid: new\n---\nBody only\n"),
        (b"", b"---\nid: new\n---\n"),
        (b"Body without newline", b"---\nid: new\n---\nBody without newline"),
        (b"Line\r\nTwo\r\n", b"---\r\nid: new\r\n---\r\nLine\r\nTwo\r\n"),
        (BOM + b"Body\n", BOM + b"---\nid: new\n---\nBody\n"),
        (BR13C, b"---\nid: new\n---\n---\n\nExample\n"),
    ],
    ids=["lf", "empty", "no-eol", "crlf", "bom", "lone-fence"],
)
def test_a_new_key_in_a_file_without_frontmatter_creates_exactly_one_block(data: bytes, expected: bytes) -> None:
    out = frontmatter.update(data, {"id": "new"})
    assert out == expected
    doc = frontmatter.parse(out)
    assert doc.fields == {"id": "new"}
    assert doc.body == frontmatter.parse(data).body


def test_a_block_scalar_cannot_be_rewritten_in_place() -> None:
    data = b"---\nid: a\nevidence: |\n  Seen in the code.\nstatus: active\n---\nB\n"
    with pytest.raises(ToolError) as caught:
        frontmatter.update(data, {"evidence": "Something else."})
    assert caught.value.code == "not_rewritable"
    assert frontmatter.update(data, {"status": "retired"}) == data.replace(b"active", b"retired")


@pytest.mark.parametrize(
    "data",
    [
        b"---\nid: a\nsummary: first line\n  continued\n---\n",  # multi-line plain scalar
        b"---\nid: a\nsummary:\n  on the next line\n---\n",
    ],
    ids=["multi-line", "next-line"],
)
def test_values_that_cannot_be_rewritten_byte_stably_are_refused(data: bytes) -> None:
    with pytest.raises(ToolError) as caught:
        frontmatter.update(data, {"summary": "new"})
    assert caught.value.code == "not_rewritable"


def test_a_lone_cr_line_break_in_the_yaml_is_counted_as_yaml_counts_it() -> None:
    data = b"---\nnote: a\rstatus: active\n---\n"
    assert frontmatter.parse(data).fields == {"note": "a", "status": "active"}
    assert frontmatter.update(data, {"status": "retired"}) == b"---\nnote: a\rstatus: retired\n---\n"


def test_non_utf8_input_is_refused() -> None:
    with pytest.raises(FrontmatterError) as caught:
        frontmatter.parse(b"---\nid: caf\xe9\n---\n")
    assert caught.value.code == "not_utf8"
    assert caught.value.message == "not UTF-8 text (byte 11)"


@pytest.mark.parametrize(
    ("data", "line", "message"),
    [
        (b"---\n- a\n- b\n---\nBody\n", 2, "line 2: frontmatter is not a mapping of keys to values"),
        (b"---\njust a sentence\n---\nBody\n", 2, "line 2: frontmatter is not a mapping of keys to values"),
        (
            b"---\nid: a\nkind: x\nid: b\n---\n",
            4,
            'line 4: found duplicate key "id" with value "b" (original value: "a")',
        ),
        (b"---\n1: one\n---\n", 2, "line 2: key 1 is not a string"),
        (b"---\nbase: {p: 1}\n<<: {p: 1}\n---\n", None, "merge keys ('<<') are not supported in frontmatter"),
    ],
    ids=["list", "scalar", "duplicate", "int-key", "merge-key"],
)
def test_frontmatter_that_is_not_a_mapping_of_string_keys_is_an_error(
    data: bytes, line: int | None, message: str
) -> None:
    with pytest.raises(FrontmatterError) as caught:
        frontmatter.parse(data)
    assert caught.value.code == "bad_frontmatter"
    assert caught.value.line == line
    assert caught.value.message == message
    with pytest.raises(FrontmatterError):
        frontmatter.update(data, {"id": "x"})


@pytest.mark.parametrize(
    ("data", "has_frontmatter", "body"),
    [
        (b"--- \nid: a\n---\t\nB\n", True, "B\n"),  # fences may carry trailing blanks
        (b"---\nid: a\n...\nB\n", True, "B\n"),  # `...` closes
        (b"---", False, "---"),  # a fence without a line ending opens nothing
        (b"----\nid: a\n---\nB\n", False, "----\nid: a\n---\nB\n"),
        (b"\n---\nid: a\n---\n", False, "\n---\nid: a\n---\n"),  # the fence must be the first line
    ],
    ids=["blanks", "dots", "no-eol", "four-dashes", "not-first-line"],
)
def test_fence_rules(data: bytes, has_frontmatter: bool, body: str) -> None:
    doc = frontmatter.parse(data)
    assert doc.split.has_frontmatter is has_frontmatter
    assert doc.body == body
    assert frontmatter.update(data, {}) == data
