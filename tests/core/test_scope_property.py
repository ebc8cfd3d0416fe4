"""Scope fast paths agree with the general machinery they short-cut."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from git_memzoi.core import globs
from git_memzoi.core.scope_index import ScopeIndex

components = st.sampled_from(["src", "a", "b", "..", ".", "", "*", "**", "x.md", "*.py", "f*", "mod_1", "[ab]", "é"])
patterns = st.builds(
    lambda neg, lead, parts, trail: neg + lead + "/".join(parts) + trail,
    st.sampled_from(["", "!"]),
    st.sampled_from(["", "/"]),
    st.lists(components, min_size=1, max_size=4),
    st.sampled_from(["", "/"]),
)
paths = st.lists(
    st.sampled_from(
        [
            "src/a/x.md",
            "a/b/f1.py",
            "src/mod_1/f.py",
            "x.md",
            "b/é/x.md",
            "a/[ab]/z",
            "a/b",
            "a/b.c",
            "a/bc/x",
            "src/mod_1",
            "src/mod_1.py",
        ]
    ),
    min_size=1,
    max_size=6,
)


@given(patterns)
def test_the_quick_validity_check_never_accepts_what_the_full_one_rejects(pattern: str) -> None:
    if globs._SIMPLE.fullmatch(pattern) and not pattern.startswith("#"):
        assert globs._problem(pattern) is None


@given(st.lists(patterns, min_size=1, max_size=4), paths)
def test_scope_index_agrees_with_scope(scope: list[str], universe: list[str]) -> None:
    valid = [p for p in scope if globs.pattern_problem(p) is None]
    if not valid:
        return
    expected = {p for p in universe if globs.Scope(valid).matches(p)}
    assert ScopeIndex(universe).select(valid) == expected
