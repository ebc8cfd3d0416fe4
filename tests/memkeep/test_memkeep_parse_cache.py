"""The memkeep parse cache (core/parse_cache.py): files with a trusted, unchanged stat signature are not opened;
every change of a file, of the cache's format, of the tool or of the YAML parser is seen.

The signature is ``[size, mtime_ns, ctime_ns, inode]``. Any write, touch or rename sets the ctime, which no
user call can set back, and a replaced file has a new inode, so an edit that keeps size and mtime (restored
with ``os.utime``) still changes it. A signature is trusted only once it is older than the run by
``RACY_NS``: these tests pass ``now_ns`` to stand "later" or "at once".
"""

from __future__ import annotations

import datetime as dt
import marshal
import os
import time
from pathlib import Path

import pytest

from git_memzoi.core import frontmatter, parse_cache
from git_memzoi.core.parse_cache import RACY_NS, ParseCache
from git_memzoi.memkeep import store as store_mod
from tests.support.repos import entry_text

LATER = 10**9 * 3600  # an hour: every file written by the test is old enough to trust
_READ, _PARSE = store_mod._read_regular, frontmatter.parse


@pytest.fixture
def store(tmp_path: Path) -> store_mod.Store:
    root = tmp_path / "repo"
    (root / "agent-memory" / "entries").mkdir(parents=True)
    return store_mod.Store(root.resolve(), (root / "agent-memory").resolve(), store_mod.StoreConfig())


@pytest.fixture
def counts(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[str]]:
    """Which files each load opened, and how many it parsed as YAML."""
    seen: dict[str, list[str]] = {"read": [], "parsed": []}
    read, parse = store_mod._read_regular, frontmatter.parse

    def counting_read(file: str, rel: str) -> object:
        seen["read"].append(rel.rsplit("/", 1)[-1])
        return read(file, rel)

    def counting_parse(data: bytes) -> object:
        seen["parsed"].append("x")
        return parse(data)

    monkeypatch.setattr(store_mod, "_read_regular", counting_read)
    monkeypatch.setattr(frontmatter, "parse", counting_parse)
    return seen


def cache_path(store: store_mod.Store) -> Path:
    return store.root / ".git-cache" / "memkeep.marshal"


def load(store: store_mod.Store, counts: dict[str, list[str]], *, now_ns: int | None = None) -> list[tuple]:
    for seen in counts.values():
        seen.clear()
    cache = ParseCache(cache_path(store), now_ns=now_ns)
    loaded = store_mod.load(store, cache)
    assert loaded.unreadable == ()
    return [(e.path, dict(e.fields), e.body, e.body_line, e.id) for e in loaded.entries]


def write(store: store_mod.Store, name: str, claim: str = "A claim that holds.", extra: str = "") -> Path:
    path = store.entries_dir / f"{name}.md"
    path.write_text(entry_text(name, anchor="abc1234", scope=["src/**"], claim=claim, extra=extra), "utf-8")
    return path


def later() -> int:
    return time.time_ns() + LATER


def fresh(store: store_mod.Store) -> list[tuple]:
    """The store as read without any cache (not counted)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(store_mod, "_read_regular", _READ)
        patch.setattr(frontmatter, "parse", _PARSE)
        loaded = store_mod.load(store, ParseCache(None))
    return [(e.path, dict(e.fields), e.body, e.body_line, e.id) for e in loaded.entries]


def test_unchanged_files_are_not_opened_and_read_the_same(store, counts) -> None:
    write(store, "one")
    write(store, "two", extra="ttl_days: 30\nwhen: 2026-01-02T03:04:05Z\nnested:\n  - on: 2026-02-03")
    first = load(store, counts, now_ns=later())
    assert (sorted(counts["read"]), len(counts["parsed"])) == (["one.md", "two.md"], 2)
    second = load(store, counts, now_ns=later())
    assert (counts["read"], counts["parsed"]) == ([], [])
    assert first == second == fresh(store)
    fields = second[1][1]
    assert type(fields["verified_at"]) is dt.date and type(fields["when"]) is dt.datetime
    assert type(fields["nested"][0]["on"]) is dt.date and type(fields["id"]) is str


def test_dates_typed_for_served_files_are_saved_as_text_when_another_file_changes(store, counts) -> None:
    write(store, "one", extra="when: 2026-01-02T03:04:05Z")
    load(store, counts, now_ns=later())
    load(store, counts, now_ns=later())  # "one" served by its signature: its dates typed in place
    write(store, "two")  # the cache is saved again, "one" included
    load(store, counts, now_ns=later())
    stored = parse_cache.decode(cache_path(store).read_bytes())["files"]["agent-memory/entries/one.md"]
    assert (stored[2]["verified_at"], stored[2]["when"]) == ("2026-11-01", "2026-01-02T03:04:05+00:00")
    assert load(store, counts, now_ns=later()) == fresh(store) and counts["read"] == []
    fields = dict(fresh(store)[0][1])
    assert type(fields["verified_at"]) is dt.date and type(fields["when"]) is dt.datetime


def test_a_file_younger_than_the_racy_margin_is_read_again_but_not_parsed(store, counts) -> None:
    write(store, "one")
    now = time.time_ns()  # the file was written "just now": its signature is not trusted yet
    load(store, counts, now_ns=now)
    assert load(store, counts, now_ns=now) == fresh(store)
    assert (counts["read"], counts["parsed"]) == (["one.md"], [])
    load(store, counts, now_ns=now + RACY_NS + LATER)  # once old enough, its signature is trusted ...
    load(store, counts, now_ns=now + RACY_NS + LATER)
    assert counts["read"] == []  # ... and the file is no longer opened


def test_a_touched_file_is_read_again_and_its_unchanged_bytes_not_parsed(store, counts) -> None:
    path = write(store, "one")
    load(store, counts, now_ns=later())
    os.utime(path, ns=(time.time_ns(), time.time_ns() + 10**9))
    assert load(store, counts, now_ns=later()) == fresh(store)
    assert (counts["read"], counts["parsed"]) == (["one.md"], [])


def _same_size_edit(path: Path, old: str, new: str) -> None:
    """Rewrite ``path`` in place with ``old`` replaced by ``new`` (same length), then restore its mtime."""
    assert len(old) == len(new)
    before = path.stat()
    path.write_text(path.read_text("utf-8").replace(old, new), "utf-8")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    while path.stat().st_ctime_ns == before.st_ctime_ns:  # same clock tick: the real run's margin covers it
        time.sleep(0.01)
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = path.stat()
    assert (after.st_size, after.st_mtime_ns, after.st_ino) == (before.st_size, before.st_mtime_ns, before.st_ino)


def test_a_same_size_edit_with_its_mtime_restored_is_seen(store, counts) -> None:
    path = write(store, "one")
    load(store, counts, now_ns=later())
    _same_size_edit(path, "A claim that holds.", "A claim that fails.")
    _same_size_edit(path, "status: verified", "status: observed")
    entries = load(store, counts, now_ns=later())
    assert (counts["read"], len(counts["parsed"])) == (["one.md"], 1)
    assert entries == fresh(store)
    assert entries[0][1]["status"] == "observed" and entries[0][2].startswith("A claim that fails.")


def test_a_file_replaced_by_rename_is_seen_even_with_equal_size_and_mtime(store, counts) -> None:
    path = write(store, "one")
    load(store, counts, now_ns=later())
    before = path.stat()
    replacement = path.with_name("one.tmp")
    replacement.write_text(path.read_text("utf-8").replace("holds.", "fails."), "utf-8")
    os.utime(replacement, ns=(before.st_atime_ns, before.st_mtime_ns))
    os.replace(replacement, path)
    entries = load(store, counts, now_ns=later())
    assert (counts["read"], len(counts["parsed"])) == (["one.md"], 1)
    assert entries == fresh(store) and entries[0][2].startswith("A claim that fails.")


def test_new_and_removed_files_are_seen(store, counts) -> None:
    one = write(store, "one")
    load(store, counts, now_ns=later())
    one.unlink()
    write(store, "two")
    entries = load(store, counts, now_ns=later())
    assert [e[4] for e in entries] == ["two"] and counts["read"] == ["two.md"]
    assert list(parse_cache.decode(cache_path(store).read_bytes())["files"]) == ["agent-memory/entries/two.md"]


@pytest.mark.parametrize("change", ["version", "tool", "parser"])
def test_another_format_tool_or_parser_drops_the_cache(store, counts, monkeypatch, change: str) -> None:
    write(store, "one")
    load(store, counts, now_ns=later())
    if change == "version":
        monkeypatch.setattr(parse_cache, "VERSION", parse_cache.VERSION + 1)
    elif change == "tool":
        monkeypatch.setattr(parse_cache, "__version__", "999.0")
    else:
        monkeypatch.setattr(parse_cache, "_parser", lambda: ["/elsewhere/ruamel/yaml/__init__.py", 1, 2])
    assert load(store, counts, now_ns=later()) == fresh(store)
    assert (counts["read"], len(counts["parsed"])) == (["one.md"], 1)


def test_the_parser_fingerprint_names_the_installed_yaml_package() -> None:
    origin, size, mtime_ns = parse_cache._parser()
    import ruamel.yaml  # only to compare where the fingerprint points

    assert Path(origin).resolve() == Path(ruamel.yaml.__file__).resolve()
    assert (size, mtime_ns) == (Path(origin).stat().st_size, Path(origin).stat().st_mtime_ns)


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"{not json",
        b'{"version": 3}',
        b"[1, 2]",
        b'{"version": 3, "tool": 1}',  # an old JSON cache, or junk
        parse_cache.MAGIC,
        parse_cache.MAGIC + b"[1, 2]",
        parse_cache.MAGIC + b"\xff\x00",  # truncated, malformed
        parse_cache.encode({"files": {}})[:-3],
        parse_cache.MAGIC + marshal.dumps([1, 2]),  # cut short, not a mapping
        parse_cache.encode({"version": parse_cache.VERSION, "tool": 1, "parser": [], "files": []}),
    ],
)
def test_a_corrupt_cache_is_ignored_and_rewritten(store, counts, content: bytes) -> None:
    write(store, "one")
    cache_path(store).parent.mkdir(parents=True, exist_ok=True)
    cache_path(store).write_bytes(content)
    assert load(store, counts, now_ns=later()) == fresh(store)
    assert load(store, counts, now_ns=later()) == fresh(store) and counts["read"] == []


def test_a_hand_edited_cache_item_is_read_from_the_file(store, counts) -> None:
    write(store, "one")
    load(store, counts, now_ns=later())
    data = parse_cache.decode(cache_path(store).read_bytes())
    [item] = data["files"].values()
    item[5] = "not a line number"
    cache_path(store).write_bytes(parse_cache.encode(data))
    assert load(store, counts, now_ns=later()) == fresh(store) and counts["read"] == ["one.md"]


def test_a_key_like_the_cache_date_tag_is_never_mistaken_for_a_date(store, counts) -> None:
    write(store, "one", extra='odd:\n  "\\0date": "2026-01-01"\nwhen: 2026-01-01')
    for _ in range(2):
        [entry] = load(store, counts, now_ns=later())
        assert entry[1]["odd"] == {"\x00date": "2026-01-01"} and entry[1]["when"] == dt.date(2026, 1, 1)


def test_equal_strings_are_stored_once_and_decode_as_one_object(store, counts) -> None:
    write(store, "one")
    write(store, "two")
    load(store, counts, now_ns=later())
    data = parse_cache.decode(cache_path(store).read_bytes())
    one, two = (item[2] for item in data["files"].values())
    assert [a is b for a, b in zip(one, two, strict=False)] == [True] * len(one)  # the keys
    assert one["status"] is two["status"]
    assert load(store, counts, now_ns=later()) == fresh(store) and counts["read"] == []
