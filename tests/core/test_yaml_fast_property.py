"""The fast readers (libyaml events, the line reader) answer exactly what ruamel answers, or not at all (issue 17,
"Cold status").

Generated frontmatter mixes the shapes memory files use (plain, quoted and block scalars, nested mappings,
indented and indentless lists, flow collections, comments, dates, commit ids, globs) with the ones where YAML 1.1
and 1.2 or the two libraries differ (``no``/``on``, octal, exponents, timestamps, tags, anchors, tabs, escapes),
then mutates a character; a second strategy keeps to the line reader's subset (one-line scalars, lists, a
one-level mapping, literal blocks) so that it answers often. Wherever :func:`yaml_fast.load` or
:func:`yaml_lines.load` returns a value, ruamel must read the same text without error to equal fields (types
included) and equal key spans.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from git_memzoi.core import frontmatter, yaml_fast, yaml_lines, yamlio

WORDS = st.sampled_from(
    [
        "fact", "verified", "src/mod_02/**", "docs/a.md", "45fd23c96480a45e288900d2f0e2b254de183fd7",
        "1e5", "123e4", "0x1f", "012", "0o17", "1_000", "+1", "-1", "0", "7", "300", "1.10", ".5", "-0.5",
        "2025-09-13", "2025-9-3", "2026-13-01", "2026-03-16T09:05:28Z", "2026-03-16 09:05", "no", "No", "on",
        "off", "yes", "y", "n", "true", "True", "FALSE", "null", "Null", "~", ".inf", ".nan", "<<", "=",
        "a: b", "a #b", "#c", "x y", "-x", "?x", ":x", "a,b", "[a]", "{a}", "@x", "`x`", "%x", "!x", "&x", "*x",
        "é", "日本", "a\tb", "a\\b", "\u2028", "\x85", "\ufeff", "'q'", '"q"', "|", ">", "-", "--- x", "...",
    ]
)  # fmt: skip
KEYS = st.sampled_from(["id", "type", "scope", "check", "run", "a", "b", "1", "true", "<<", "y", "'q k'", '"k"', ""])


def _scalar(word: str, style: str) -> str:
    if style == "single":
        return "'" + word.replace("'", "''") + "'"
    if style == "double":
        return '"' + word.replace('"', '\\"') + '"'
    return word


@st.composite
def _value(draw: Any, indent: int, depth: int) -> str:
    """A value written after ``key:`` (starting with a space or a newline) at ``indent`` spaces."""
    pad = " " * (indent + 2)
    kinds = ["scalar", "scalar", "empty", "block"] + (["map", "seq", "indentless", "flow"] if depth < 3 else [])
    kind = draw(st.sampled_from(kinds))
    if kind == "scalar":
        return " " + _scalar(draw(WORDS), draw(st.sampled_from(["plain", "plain", "single", "double"])))
    if kind == "empty":
        return ""
    if kind == "block":
        head = draw(st.sampled_from(["|", "|-", "|+", ">", ">-", "|2"]))
        lines = draw(
            st.lists(st.sampled_from(["text", "  more", "", "a: b", "# not a comment"]), min_size=1, max_size=3)
        )
        return f" {head}\n" + "\n".join((pad + line) if line else "" for line in lines)
    if kind == "flow":
        items = draw(st.lists(WORDS, max_size=3))
        return (
            " [" + ", ".join(items) + "]"
            if draw(st.booleans())
            else " {" + ", ".join(f"k{i}: {w}" for i, w in enumerate(items)) + "}"
        )
    if kind == "seq" or kind == "indentless":
        lead = " " * indent if kind == "indentless" else pad
        items = draw(st.lists(_value(indent + 2, depth + 1), min_size=1, max_size=3))
        return "".join(f"\n{lead}-{item}" for item in items)
    return _mapping_text(draw, indent + 2, depth + 1)


def _mapping_text(draw: Any, indent: int, depth: int) -> str:
    keys = draw(st.lists(KEYS, min_size=1, max_size=4))
    out = []
    for key in keys:
        comment = draw(st.sampled_from(["", "", " # note"]))
        out.append("\n" + " " * indent + f"{key}:" + draw(_value(indent, depth)) + comment)
    return "".join(out)


@st.composite
def frontmatter_text(draw: Any) -> str:
    text = _mapping_text(draw, 0, 0).lstrip("\n") + "\n"
    for _ in range(draw(st.integers(0, 2))):  # a mutation: one character inserted or replaced
        at = draw(st.integers(0, len(text)))
        char = draw(st.sampled_from([" ", "\n", "\t", "\r", "'", '"', ":", "-", "#", "&", "*", "!", "[", "{", "\\"]))
        text = text[:at] + char + text[at + draw(st.integers(0, 1)) :]
    return text


def _fast(text: str, max_nodes: int = yamlio.MAX_NODES) -> Any:
    found = yaml_fast.load(text, max_nodes, yamlio.MAX_DEPTH, yamlio.implicit_tag)
    return None if found is None else (found[0], {k: yamlio.KeySpan(*span) for k, span in found[1].items()})


def _lines(text: str, max_nodes: int = yamlio.MAX_NODES) -> Any:
    found = yaml_lines.load(text, max_nodes)
    return None if found is None else (found[0], {k: yamlio.KeySpan(*span) for k, span in found[1].items()})


def _typed(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: (type(k).__name__, _typed(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [_typed(v) for v in value]
    return (type(value).__name__, value)


def _assert_same(text: str) -> int:
    """Check both fast readers against ruamel on ``text``; returns how many of them answered."""
    answers = [found for found in (_fast(text), _lines(text)) if found is not None]
    if not answers:
        return 0
    try:
        fields, spans = yamlio.load_mapping_ruamel(text)
    except yamlio.YamlProblem as exc:
        pytest.fail(f"a fast reader accepted a text ruamel refuses ({exc.reason}): {text!r}")
    for fast in answers:
        assert _typed(fast[0]) == _typed(fields), text
        assert fast[1] == spans, text
    return len(answers)


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(frontmatter_text())
@example(
    "id: a\nscope:\n  - src/**\n  - '!src/x.py'\nverified_at: 2025-10-14\ncheck:\n  run: make test\n  safe: true\n"
)
@example("a: 2026-13-01\nb: 45fd23c96480\nc: 1e5\nd: 0x1f\n")
@example("a:\n  - x\n  -\nb: |\n  one\n\n  two\n")
def test_fast_reader_answers_as_ruamel_or_not_at_all(text: str) -> None:
    _assert_same(text)


SUBSET_WORDS = st.sampled_from(
    [
        "fact", "a b", "a:b", "a- b", "x [y]", "it's", 'say "hi"', "src/mod_02/**", "_x", "/abs", ".github/x",
        ".inf", ".nan", ".5", ".Inf", "45fd23c96480a45e288900d2f0e2b254de183fd7", "0b40d79f", "0b101", "0x1f",
        "0xzz", "0o17", "0o19", "0X1f", "1e5", "12e", "123e4567", "1_000", "012", "0", "7", "300", "1.10", "12a",
        "2025-09-13", "2025-9-3", "2026-13-01", "2026-02-30", "2026-03-16 09:05:28", "2026-03-16T09:05:28Z",
        "09:05", "190:20:30", "1 2", "no", "No", "on", "yes", "n", "y", "true", "True", "TRUE", "tRue", "false",
        "False", "FALSE", "null", "Null", "NULL", "nULL", "none", "~", "é", "日本", "-x", "x:", "x #y", "x#y",
    ]
)  # fmt: skip
SUBSET_KEYS = st.sampled_from(["id", "type", "scope", "check", "run", "safe", "a_b", "a-b", "_k", "y", "true", "no"])


def _subset_scalar(draw: Any) -> str:
    return _scalar(draw(SUBSET_WORDS), draw(st.sampled_from(["plain", "plain", "plain", "single", "double"])))


@st.composite
def subset_text(draw: Any) -> str:
    out = []
    for key in draw(st.lists(SUBSET_KEYS, min_size=1, max_size=5)):
        kind = draw(st.sampled_from(["scalar", "scalar", "list", "indentless", "map", "literal"]))
        if kind == "scalar":
            out.append(f"{key}: {_subset_scalar(draw)}\n")
        elif kind in ("list", "indentless"):
            lead = "  - " if kind == "list" else "- "
            items = draw(st.lists(st.just(0), min_size=1, max_size=3))
            out.append(f"{key}:\n" + "".join(f"{lead}{_subset_scalar(draw)}\n" for _ in items))
        elif kind == "map":
            subkeys = draw(st.lists(SUBSET_KEYS, min_size=1, max_size=3))
            out.append(f"{key}:\n" + "".join(f"  {k}: {_subset_scalar(draw)}\n" for k in subkeys))
        else:
            head = draw(st.sampled_from(["|", "|-", "|+", ">"]))
            body = draw(st.lists(st.sampled_from(["text", "  more", "", "a: b", "# not a comment", "- x"]), max_size=4))
            out.append(f"{key}: {head}\n" + "".join(f"  {line}\n" if line else "\n" for line in body))
    text = "".join(out)
    for _ in range(draw(st.integers(0, 1))):  # a mutation: one character inserted or replaced
        at = draw(st.integers(0, len(text)))
        char = draw(st.sampled_from([" ", "\n", "'", '"', ":", "-", "#", "|", "x"]))
        text = text[:at] + char + text[at + draw(st.integers(0, 1)) :]
    return text


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(subset_text())
@example("a:\n  b: 1\n  c: x\nd: |\n  one\n\n  two\n\n")
@example("a:\n- x\n- 'y'\nb: |-\n  t\n")
def test_the_line_reader_answers_as_ruamel_or_not_at_all(text: str) -> None:
    _assert_same(text)


@pytest.mark.parametrize(
    ("text", "fields"),
    [
        (
            "id: e\nanchor: 0b40d79f72f773f47016f7d0d08e82b08030ae8f\nttl_days: 14\nrev: 45fd23c\nwhen: 2026-02-30\n",
            {"id": "e", "anchor": "0b40d79f72f773f47016f7d0d08e82b08030ae8f", "ttl_days": 14, "rev": "45fd23c",
             "when": "2026-02-30"},
        ),
        (
            "check:\n  run: grep -q \"A = 1\" a.py && make test\n  safe: true\n  timeout_s: 10\nenvironment:\n  X: '1'\n",
            {"check": {"run": 'grep -q "A = 1" a.py && make test', "safe": True, "timeout_s": 10},
             "environment": {"X": "1"}},
        ),
        ("scope:\n- src/**\n- '!src/x.py'\nnote: |-\n  one\n\n    two\n", {"scope": ["src/**", "!src/x.py"],
         "note": "one\n\n  two"}),
        ("a: no\nb: On\nc: null\nd: False\ne: .github/x\n", {"a": "no", "b": "On", "c": None, "d": False,
         "e": ".github/x"}),
    ],
)  # fmt: skip
def test_the_line_reader_reads_what_the_tools_write(text: str, fields: dict[str, Any]) -> None:
    found = _lines(text)
    assert found is not None
    assert _typed(found[0]) == _typed(fields)
    assert _assert_same(text) >= 1


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("# a comment\na: 1\n", "comment"),
        ("a: 1\n\nb: 2\n", "blank line"),
        ("a: 1 \n", "trailing space"),
        ("a: [x]\n", "flow"),
        ("a: >\n  x\n", "folded"),
        ("a: |+\n  x\n", "keep"),
        ("a: |2\n  x\n", "indentation indicator"),
        ("a:\n", "no value"),
        ("a: x\n  y\n", "multi-line plain"),
        ("a: 0x1f\n", "hex"),
        ("a: 1e5\n", "exponent"),
        ("a: 1.10\n", "fraction"),
        ("a: " + "9" * 5000 + "\n", "an integer past the digit limit"),
        ("a: ~\n", "tilde"),
        ("a: 2026-03-16 09:05:28\n", "time of day"),
        ("a:\n  b:\n    c: 1\n", "two levels"),
        ("a: x", "no final line break"),
        ("true: x\n", "boolean key"),
        ("k" * 1025 + ": v\n", "a key past YAML's 1,024 characters"),
        ("a:\n  " + "k" * 2000 + ": v\n", "a nested key past YAML's 1,024 characters"),
    ],
)
def test_what_the_line_reader_leaves_to_the_others(text: str, why: str) -> None:
    assert _lines(text) is None, why
    _assert_same(text)


def test_the_ordinary_entry_is_read_fast_and_typed() -> None:
    text = (
        "schema_version: 1\nid: e\ntype: fact\nverified_at: 2025-10-14\nanchor: 45fd23c96480\n"
        "scope:\n  - src/**\n  - '!src/x.py'\nevidence: |\n  Read it.\ncheck:\n  run: make test\n  safe: true\n"
    )
    fast = _fast(text)
    assert fast is not None
    assert fast[0] == {
        "schema_version": 1,
        "id": "e",
        "type": "fact",
        "verified_at": dt.date(2025, 10, 14),
        "anchor": "45fd23c96480",
        "scope": ["src/**", "!src/x.py"],
        "evidence": "Read it.\n",
        "check": {"run": "make test", "safe": True},
    }
    assert fast[1]["scope"] == yamlio.KeySpan(5, 6, 2, False)
    assert fast[1]["evidence"] == yamlio.KeySpan(8, 8, 10, False)
    assert _lines(text) == fast


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("a: &x 1\nb: *x\n", "alias"),
        ("a: !!str 1\n", "explicit tag"),
        ("a: 1\na: 2\n", "duplicate key"),
        ("<<: {b: 1}\n", "merge key"),
        ("1: x\n", "non-string key"),
        ("a: 0o17\n", "octal"),
        ("a: 2026-03-16T09:05:28Z\n", "time of day"),
        ("a:\tb\n", "tab"),
        ("a: 'x\\y'\n", "backslash"),
        ("%YAML 1.2\n---\na: 1\n", "directive"),
        ("- a\n", "not a mapping"),
        ("a: [" * 40 + "]" * 40 + "\n", "too deep"),
    ],
)
def test_what_the_fast_reader_leaves_to_ruamel(text: str, why: str) -> None:
    assert _fast(text) is None, why
    assert _lines(text) is None, why


def test_too_many_values_are_left_to_ruamel_which_refuses_them() -> None:
    text = "".join(f"k{i}: v\n" for i in range(40))
    assert _fast(text, 81) is not None  # 40 keys + 40 values + the mapping = 81
    assert _fast(text, 80) is None
    assert _lines(text, 81) is not None
    assert _lines(text, 80) is None
    with pytest.raises(yamlio.YamlProblem) as refused:
        yamlio.load_mapping(text, max_nodes=80)
    assert refused.value.code == yamlio.TOO_COMPLEX


CORPORA = [Path(__file__).resolve().parents[2] / "agent-memory", Path(__file__).resolve().parents[2] / "evals"]
BENCH_OUTPUT = Path(__file__).resolve().parents[2] / "evals" / "bench" / "out"  # git-ignored: 60,000 generated files


def test_every_memory_file_in_the_repository_reads_the_same() -> None:
    seen = 0
    for root in CORPORA:
        for path in sorted(root.rglob("*.md")):
            if BENCH_OUTPUT in path.parents:  # after `make bench`, reading them through ruamel took minutes
                continue
            parts = frontmatter.split(path.read_bytes())
            if parts.has_frontmatter:
                _assert_same(parts.yaml_text)
                seen += 1
    assert seen > 50
