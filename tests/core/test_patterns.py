"""Patterns compile on first use and behave as ``re.compile`` does (issue 17, "Start-up")."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from git_memzoi.core.patterns import lazy
from git_memzoi.memzoi.recall import budget


def test_a_lazy_pattern_is_not_compiled_until_used_and_then_matches_as_re_does() -> None:
    pattern = lazy(r"(?P<word>[a-z]+)-(\d+)", re.I)
    assert "search" not in vars(pattern)
    assert pattern.search("x Ab-12 y").group("word") == "Ab"  # type: ignore[union-attr]
    assert "search" in vars(pattern)  # bound once: later calls are plain attribute lookups
    assert (pattern.pattern, pattern.flags & re.I, pattern.groups, dict(pattern.groupindex)) == (
        r"(?P<word>[a-z]+)-(\d+)",
        re.I,
        2,
        {"word": 1},
    )
    assert pattern.sub("#", "a-1 b-2") == "# #"
    assert lazy(rb"\x00+").split(b"a\x00\x00b") == [b"a", b"b"]


def test_an_invalid_pattern_fails_on_first_use() -> None:
    import pytest

    broken = lazy("(")
    with pytest.raises(re.error):
        broken.search("x")


_TEXT = st.text(alphabet=st.sampled_from(list("ab -\t\n.,記憶管理APIテスト한국ไทย\u3000\uff21")), max_size=60)


@given(_TEXT)
def test_the_ascii_shortcut_counts_the_units_the_full_pattern_counts(text: str) -> None:
    full = [m.end() for m in budget._UNIT_RE.finditer(text)]
    assert budget.unit_ends(text) == full
    assert budget.estimate(text) == len(full)


@given(st.text(alphabet=st.characters(max_codepoint=127), max_size=80))
def test_ascii_text_measures_as_whitespace_words(text: str) -> None:
    assert budget.estimate(text) == len(text.split()) == len(budget.unit_ends(text))
