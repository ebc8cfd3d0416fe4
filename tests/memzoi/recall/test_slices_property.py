"""Properties of compact reads (issue 18, seed vault-memory "Compact v2 context"), over generated Markdown files:
each slice's text is the file's bytes at ``[start_byte, end_byte)`` (a prefix of them when cut), its line range
agrees with its offsets, one budget bounds all slices and no cut splits a surrogate pair."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from git_memzoi.memzoi.recall import slices

TITLES = st.sampled_from(["Context", "Details", "Use pnpm", "Why", "Ünïcode", "\U0001f600 emoji", "a/b"])
PROSE = st.text(alphabet=st.sampled_from([*"ab #`~\t", "é", "\U0001f600", "\u4e2d"]), max_size=12)


@st.composite
def markdown(draw: st.DrawFn) -> tuple[bytes, int]:
    """A file of a frontmatter-like head and a body of headings, prose and fenced blocks; ``(bytes, body start)``."""
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    head = f"---{newline}id: x{newline}---{newline}" if draw(st.booleans()) else ""
    lines: list[str] = []
    for _ in range(draw(st.integers(0, 14))):
        kind = draw(st.sampled_from(["heading", "prose", "fence", "blank"]))
        if kind == "heading":
            lines.append(f"{'#' * draw(st.integers(1, 4))} {draw(TITLES)}")
        elif kind == "prose":
            lines.append(draw(PROSE))
        elif kind == "fence":
            lines += ["```", f"# {draw(TITLES)}", "```"]
        else:
            lines.append("")
    body = newline.join(lines) + (newline if draw(st.booleans()) else "")
    return (head + body).encode("utf-8"), len(head.encode("utf-8"))


def _check(data: bytes, part: slices.Slice) -> None:
    whole = data[part.start_byte : part.end_byte].decode("utf-8")
    assert 0 <= part.start_byte < part.end_byte <= len(data)
    assert part.start_line == data[: part.start_byte].count(b"\n") + 1
    assert part.end_line == data[: part.end_byte - 1].count(b"\n") + 1
    assert part.start_byte == 0 or data[part.start_byte - 1 : part.start_byte] == b"\n"  # a range starts a line
    assert part.original_chars == len(whole.encode("utf-16-le")) // 2
    assert whole.startswith(part.text)
    part.text.encode("utf-8")  # no lone surrogate: a cut never splits a pair
    assert part.truncated == (part.text != whole)


@settings(max_examples=300, deadline=None)
@given(markdown(), st.data())
def test_slices_are_the_file_bytes_at_their_offsets(file: tuple[bytes, int], data: st.DataObject) -> None:
    raw, body_start = file
    found = slices.headings(raw, body_start)
    counts: dict[tuple[str, ...], int] = {}
    for heading in found:
        counts[heading.path] = counts.get(heading.path, 0) + 1
        nested = [h for h in found if heading.start < h.start < heading.end]
        assert all(h.level > heading.level for h in nested)  # a section holds only its subsections
    unique = sorted(p for p, n in counts.items() if n == 1 and all(p))  # an empty title cannot be named
    budget = data.draw(st.one_of(st.none(), st.integers(0, 80)))
    if unique:
        chosen = data.draw(st.lists(st.sampled_from(unique), min_size=1, max_size=4))
        compact = slices.project(raw, body_start, "sections", chosen, budget)
        limit = slices.SECTION_BUDGET if budget is None else budget
        asked = list(dict.fromkeys(chosen))
        returned = [s.heading_path for s in compact.slices]
        assert sorted(returned + [e.heading_path for e in compact.excluded]) == sorted(asked)  # type: ignore[type-var]
        assert returned == [p for p in asked if p in returned]  # in the order asked
    else:
        compact = slices.project(raw, body_start, "full", (), budget)
        limit = budget
    for part in (*compact.slices, *compact.excluded):
        _check(raw, part)
    assert compact.budget_used == sum(s.chars for s in compact.slices)
    assert limit is None or compact.budget_used <= limit
    assert all(e.reason == "budget_exhausted" and e.original_chars > 0 for e in compact.excluded)
    assert compact.truncated == (bool(compact.excluded) or any(s.truncated for s in compact.slices))
    assert compact.file_bytes == len(raw)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=30), st.integers(0, 40))
def test_clip_is_the_longest_whole_prefix(text: str, budget: int) -> None:
    cut = slices.clip(text.encode("utf-8", "surrogatepass").decode("utf-8", "replace"), budget)
    assert slices.units(cut) <= budget
    cut.encode("utf-8")
    source = text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
    assert source.startswith(cut)
    rest = source[len(cut) :]
    assert not rest or slices.units(cut + rest[0]) > budget
