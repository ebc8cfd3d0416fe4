"""The hostile-YAML drill of issue 13 ("Hangs") in bounded form: generated frontmatter with alias bombs, deep
nesting, huge scalars and odd types, spliced into real files of this repository, fed to the three readers -- a
memkeep entry (the store loader, then lint), a memzoi record (the index's record parser) and a proposal packet.

Each reader either reads the file or refuses it with a documented error (an ``InputError``: exit 2, or an
unreadable item), nothing else; and each example has a deadline, so an expansion that runs away fails the example
instead of running on. A hard deadline ends the process should a reader never return at all.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from datetime import timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from git_memzoi.errors import InputError
from git_memzoi.memkeep import api as memkeep
from git_memzoi.memkeep.store import Store, StoreConfig
from git_memzoi.memzoi.proposals import packets
from git_memzoi.memzoi.recall.index import rows
from tests.support import hostile
from tests.support.repos import PROJECT

ENTRY = (PROJECT / "agent-memory" / "entries" / "byte-stable-frontmatter.md").read_bytes()
RECORD_PATH = sorted((PROJECT / ".memzoi" / "records").glob("*.md"))[0]
RECORD = RECORD_PATH.read_bytes()
PACKET_PATH = sorted((PROJECT / ".memzoi" / "proposals" / "resolved" / "applied").glob("*.md"))[0]
PACKET = PACKET_PATH.read_bytes()
BOUNDED = settings(
    deadline=timedelta(seconds=3),  # a few ms each; an expansion that runs away fails here
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

ODD_VALUES = [
    "!!binary aGVsbG8=",
    "!!set {a, b}",
    "!!omap [a: 1, b: 2]",
    "!!python/object:os.system echo",
    "!custom tagged",
    "!!float abc",
    "!!int 12x",
    "!!timestamp 2026-13-01",
    "2026-02-30",
    "9999-12-31T23:59:59Z",
    ".nan",
    "-.inf",
    "9" * 5000,
    "0x1F",
    "~",
    "{? [a, b]: c}",
    "[a, b]: c",
    "'unterminated",
    '"\\ud800"',
    "|\n  block\n   more",
    ">-\n  folded",
    "\t tab",
    "- a\n- b",
]


@st.composite
def hostile_values(draw: st.DrawFn) -> str:
    """One hostile YAML value: an alias bomb, nesting, a huge scalar or an odd type."""
    kind = draw(st.sampled_from(["bomb", "alias", "flow", "mapping", "block", "scalar", "odd"]))
    if kind == "bomb":
        width, levels = draw(st.integers(2, 12)), draw(st.integers(1, 12))
        inner = ", ".join(["*a0"] * width)
        return "&a0 [" + ", ".join(["l"] * width) + "]" + "".join(f"\nl{n}: &a{n} [{inner}]" for n in range(levels))
    if kind == "alias":
        return draw(st.sampled_from(["*a", "&a x", "&a [1]\nb: *a", "<<: *a", "!!str &a x"]))
    if kind == "flow":
        n = draw(st.integers(0, 3000))
        return "[" * n + "x" + "]" * n
    if kind == "mapping":
        n = draw(st.integers(0, 300))
        return "{a: " * n + "1" + "}" * n
    if kind == "block":
        n = draw(st.integers(1, 120))
        return "\n" + "".join("  " * (d + 1) + f"k{d}:\n" for d in range(n)) + "  " * (n + 1) + "v"
    if kind == "scalar":
        size = draw(st.sampled_from([10, 4096, 70_000, 300_000]))
        return draw(st.sampled_from(['"', "'", ""])).join(["", "x" * size, ""])
    return draw(st.sampled_from(ODD_VALUES))


@st.composite
def hostile_files(draw: st.DrawFn, base: bytes) -> bytes:
    """``base`` (a real memory file) with one field's value replaced, a key appended, or its whole frontmatter
    replaced by hostile YAML; sometimes with stray bytes on top."""
    head, _, rest = base.decode("utf-8").removeprefix("---\n").partition("\n---\n")
    lines = head.split("\n")
    how = draw(st.sampled_from(["replace", "append", "whole"]))
    value = draw(hostile_values())
    if how == "replace":
        keyed = [n for n, line in enumerate(lines) if line[:1].isalpha() and ":" in line]
        n = draw(st.sampled_from(keyed))
        lines[n] = lines[n].split(":", 1)[0] + ": " + value
    elif how == "append":
        lines.append(f"{draw(st.sampled_from(['extra', 'scope', 'id', 'status']))}: {value}")
    else:
        lines = [f"k: {value}"]
    text = "---\n" + "\n".join(lines) + "\n---\n" + rest
    data = text.encode("utf-8", "surrogatepass")
    noise = draw(st.sampled_from([b"", b"", b"\xff\xfe", b"\x00", b"\xef\xbb\xbf", b"\r\n"]))
    at = draw(st.integers(0, len(data)))
    return data[:at] + noise + data[at:]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    root = tmp_path_factory.mktemp("drill")
    (root / "agent-memory" / "entries").mkdir(parents=True)
    yield Store(root, root / "agent-memory", StoreConfig())


@BOUNDED
@given(data=hostile_files(ENTRY))
def test_the_entry_reader_reads_or_refuses_every_hostile_entry(store: Store, data: bytes) -> None:
    (store.entries_dir / "hostile.md").write_bytes(data)
    with hostile.hard_deadline():
        loaded = memkeep.load_store(store)
        memkeep.lint_entries(loaded.entries, loaded.unreadable, None, dt.date(2026, 12, 1))
    assert len(loaded.entries) + len(loaded.unreadable) == 1
    for problem in loaded.unreadable:
        assert problem.code and problem.reason and "\n" not in problem.reason


@BOUNDED
@given(data=hostile_files(RECORD))
def test_the_record_reader_reads_or_refuses_every_hostile_record(data: bytes) -> None:
    with hostile.hard_deadline():
        try:
            rows.parse_record(RECORD_PATH.stem, f".memzoi/records/{RECORD_PATH.name}", data)
        except InputError as exc:
            assert exc.code and exc.exit_code == 2


@BOUNDED
@given(data=hostile_files(PACKET))
def test_the_packet_reader_reads_or_refuses_every_hostile_packet(data: bytes) -> None:
    with hostile.hard_deadline():
        try:
            packet = packets.parse(PACKET_PATH.stem, PACKET_PATH.name, data)
            packets.check_shape(packet, PACKET_PATH.name)
        except InputError as exc:
            assert exc.code and exc.exit_code == 2


def test_the_drill_bases_read_cleanly(store: Store) -> None:
    """The unmodified bases parse, so the drill's refusals come from what it splices in."""
    rows.parse_record(RECORD_PATH.stem, f".memzoi/records/{RECORD_PATH.name}", RECORD)
    packets.parse(PACKET_PATH.stem, PACKET_PATH.name, PACKET)
    (store.entries_dir / "hostile.md").write_bytes(ENTRY)
    assert [e.path for e in memkeep.load_store(store).entries] == ["agent-memory/entries/hostile.md"]


def test_the_bomb_in_each_base_is_refused_as_too_complex(store: Store) -> None:
    for base in (ENTRY, RECORD, PACKET):
        head, _, rest = base.decode().removeprefix("---\n").partition("\n---\n")
        data = f"---\n{head}\n# not the writer's subset\n{hostile.bomb()}---\n{rest}".encode()
        (store.entries_dir / "hostile.md").write_bytes(data)
        [refused] = memkeep.load_store(store).unreadable
        assert refused.code == "yaml_too_complex"
        for parse in (
            lambda d: rows.parse_record(RECORD_PATH.stem, "r.md", d),
            lambda d: packets.parse(PACKET_PATH.stem, "p.md", d),
        ):
            with pytest.raises(InputError) as caught:
                parse(data)
            assert "uses anchors or aliases" in caught.value.message


def test_a_number_of_5000_digits_is_a_refused_value_not_a_crash() -> None:
    """Found by the drill: the fast subset reader handed int() more digits than it converts (ValueError, exit 3)."""
    for base, parse in (
        (RECORD, lambda d: rows.parse_record(RECORD_PATH.stem, "r.md", d)),
        (PACKET, lambda d: packets.parse(PACKET_PATH.stem, "p.md", d)),
    ):
        head, _, rest = base.decode().removeprefix("---\n").partition("\n---\n")
        with pytest.raises(InputError) as caught:
            parse(f"---\n{head}\nhuge: {'9' * 5000}\n---\n{rest}".encode())
        assert "a value cannot be read (ValueError: Exceeds the limit (4300 digits)" in caught.value.message
