"""The record writer's scalars read back as the same string, whatever the text (control characters included)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from git_memzoi.core import yamlio
from git_memzoi.memzoi.records import okf


@given(st.text())
def test_any_string_scalar_round_trips(text: str) -> None:
    fields, _ = yamlio.load_mapping("k: " + okf.scalar(text) + "\n")
    assert fields["k"] == text
