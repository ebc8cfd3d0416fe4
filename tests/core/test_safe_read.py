"""core/safe_read.py and the YAML caps of core/yamlio.py (issue 13, "Hangs"): only regular files are opened, never
past a cap, and a text that would cost far more than its size is refused as ``yaml_too_complex``.

Every FIFO is made in tmp_path with a watchdog (tests/support/hostile.py), so a regression fails, never hangs.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from git_memzoi.core import frontmatter, safe_read, yamlio
from git_memzoi.core.safe_read import FileRefused, JsonTooComplex
from tests.support import hostile

# ------------------------------------------------------------------------------------------------ files


def test_a_regular_file_is_read_whole_up_to_its_cap(tmp_path: Path) -> None:
    path = tmp_path / "a.md"
    path.write_bytes(b"x" * 100)
    assert safe_read.read_bytes(path, 100) == b"x" * 100
    assert safe_read.read_bytes(path, None) == b"x" * 100
    assert safe_read.read_text(path, 100) == "x" * 100


def test_a_file_over_its_cap_is_refused_unread(tmp_path: Path) -> None:
    path = tmp_path / "big.md"
    path.write_bytes(b"x" * 101)
    with pytest.raises(FileRefused) as caught:
        safe_read.read_bytes(path, 100)
    assert (caught.value.code, caught.value.reason) == ("file_too_large", "larger than 100 bytes; not read")
    assert caught.value.message == f"{path}: larger than 100 bytes; not read"
    assert caught.value.exit_code == 2


def test_a_fifo_is_refused_without_being_opened(tmp_path: Path) -> None:
    with hostile.fifo(tmp_path / "f.md") as made:
        for read in (safe_read.read_bytes, safe_read.read_text, safe_read.open_stream):
            with pytest.raises(FileRefused) as caught:
                read(made.path)
            assert (caught.value.code, caught.value.reason) == (
                "not_a_regular_file",
                "a FIFO, not a regular file; not read",
            )
    assert not made.fired


def test_a_directory_and_a_socket_are_refused(tmp_path: Path) -> None:
    (tmp_path / "dir.md").mkdir()
    with pytest.raises(FileRefused) as caught:
        safe_read.read_bytes(tmp_path / "dir.md")
    assert (caught.value.code, caught.value.reason) == (
        "not_a_regular_file",
        "a directory, not a regular file; not read",
    )
    server = socket.socket(socket.AF_UNIX)
    try:
        server.bind(str(tmp_path / "s.md"))
        with pytest.raises(FileRefused) as caught:
            safe_read.read_bytes(tmp_path / "s.md")
        assert caught.value.reason == "a socket, not a regular file; not read"
    finally:
        server.close()


def test_a_symlink_is_refused_unless_links_are_followed(tmp_path: Path) -> None:
    (tmp_path / "target.md").write_text("t")
    (tmp_path / "link.md").symlink_to("target.md")
    with pytest.raises(FileRefused) as caught:
        safe_read.read_bytes(tmp_path / "link.md")
    assert caught.value.code == "symlink"
    assert safe_read.read_bytes(tmp_path / "link.md", follow_symlinks=True) == b"t"


def test_a_symlink_to_a_fifo_is_refused_even_when_links_are_followed(tmp_path: Path) -> None:
    with hostile.fifo(tmp_path / "f") as made:
        (tmp_path / "link.md").symlink_to("f")
        with pytest.raises(FileRefused) as caught:
            safe_read.read_bytes(tmp_path / "link.md", follow_symlinks=True)
        assert caught.value.code == "not_a_regular_file"
    assert not made.fired


def test_a_missing_file_is_the_oserror_open_raises(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        safe_read.read_bytes(tmp_path / "none.md")


def test_bytes_read_elsewhere_are_held_to_the_same_cap() -> None:
    assert safe_read.within(b"abc", "x.md", 3) == b"abc"
    with pytest.raises(FileRefused) as caught:
        safe_read.within(b"abcd", "x.md", 3)
    assert caught.value.message == "x.md: larger than 3 bytes; not read"


def test_appending_refuses_a_fifo_and_a_folder_before_writing(tmp_path: Path) -> None:
    with hostile.fifo(tmp_path / "events.jsonl") as made:
        with pytest.raises(FileRefused) as caught:
            safe_read.open_append(made.path)
        assert (caught.value.code, caught.value.reason) == (
            "not_a_regular_file",
            "a FIFO, not a regular file; not written",
        )
        with pytest.raises(FileRefused):
            safe_read.require_regular_or_absent(made.path)
    assert not made.fired
    (tmp_path / "dir.jsonl").mkdir()
    with pytest.raises(FileRefused) as caught:
        safe_read.open_append(tmp_path / "dir.jsonl")
    assert caught.value.reason == "a directory, not a regular file; not written"
    fd = safe_read.open_append(tmp_path / "new.jsonl")
    os.write(fd, b"line\n")
    os.close(fd)
    assert (tmp_path / "new.jsonl").read_bytes() == b"line\n"
    safe_read.require_regular_or_absent(tmp_path / "new.jsonl")
    safe_read.require_regular_or_absent(tmp_path / "absent.jsonl")


# ------------------------------------------------------------------------------------------------ JSON


def test_json_nested_100000_deep_is_invalid_json_not_a_crash() -> None:
    with pytest.raises(JsonTooComplex) as caught:
        safe_read.load_json(hostile.deep_json())
    assert str(caught.value) == "nested deeper than 100 levels"
    assert isinstance(caught.value, ValueError)
    assert caught.value.code == "json_too_complex"


def test_json_up_to_the_depth_cap_loads() -> None:
    assert safe_read.load_json(hostile.deep_json(100)) == safe_read.load_json(hostile.deep_json(100))
    with pytest.raises(JsonTooComplex):
        safe_read.load_json(hostile.deep_json(101))
    assert safe_read.load_json('{"a": [1, {"b": null}]}') == {"a": [1, {"b": None}]}
    assert (safe_read.depth(1), safe_read.depth([]), safe_read.depth({"a": [[]]})) == (0, 1, 3)


# ------------------------------------------------------------------------------------------------ YAML


def problem(text: str, **caps: int | None) -> yamlio.YamlProblem:
    with pytest.raises(yamlio.YamlProblem) as caught:
        yamlio.load_mapping(text, **caps)
    return caught.value


def test_the_alias_bomb_is_refused_at_its_first_anchor() -> None:
    with hostile.hard_deadline():
        refused = problem(hostile.bomb())
    assert (refused.code, refused.line) == ("yaml_too_complex", 0)
    assert refused.reason == "frontmatter uses anchors or aliases (&name, *name), which are not supported"


@pytest.mark.parametrize("text", ["a: 1\nb: *x\n", "a: &x 1\n", "a: !!str &x 1\n", "- &x a\n"])
def test_any_anchor_or_alias_is_refused(text: str) -> None:
    assert problem(text).code == "yaml_too_complex"


@pytest.mark.parametrize(
    ("text", "line"),
    [(hostile.deep_flow(1000), 0), (hostile.deep_block(40), 32), ("k: " + "{a: " * 40 + "1" + "}" * 40, 0)],
    ids=["flow-1000", "block-40", "flow-mappings"],
)
def test_nesting_deeper_than_32_collections_is_refused(text: str, line: int) -> None:
    with hostile.hard_deadline():
        refused = problem(text)
    assert (refused.code, refused.line, refused.reason) == (
        "yaml_too_complex",
        line,
        "frontmatter is nested deeper than 32 levels",
    )


def test_32_levels_of_nesting_still_load() -> None:
    flow, _ = yamlio.load_mapping("k: " + "[" * 31 + "]" * 31)  # the mapping is the first of 32 levels
    nested: list[object] = []
    for _ in range(30):
        nested = [nested]
    assert flow == {"k": nested}
    block, _ = yamlio.load_mapping(hostile.deep_block(31))
    assert list(block) == ["k0"]
    assert problem("k: " + "[" * 32 + "]" * 32).reason == "frontmatter is nested deeper than 32 levels"


def test_a_text_over_the_byte_cap_is_refused_before_parsing() -> None:
    refused = problem("k: " + "x" * 300_000)
    assert (refused.code, refused.line, refused.reason) == (
        "yaml_too_complex",
        None,
        "frontmatter is larger than 262144 bytes",
    )
    assert problem("k: é\n", max_bytes=5).reason == "frontmatter is larger than 5 bytes"  # bytes, not characters
    assert yamlio.load_mapping("k: " + "x" * 300_000, max_bytes=400_000)[0]["k"] == "x" * 300_000


def test_more_values_than_the_node_cap_are_refused_unless_the_caller_lifts_it() -> None:
    text = "k:\n" + "".join(f"- v{n}\n" for n in range(5000))
    refused = problem(text)
    assert (refused.code, refused.reason) == ("yaml_too_complex", "frontmatter holds more than 4096 values")
    assert len(yamlio.load_mapping(text, max_nodes=None)[0]["k"]) == 5000


def test_ampersands_and_asterisks_inside_values_are_text() -> None:
    fields, _ = yamlio.load_mapping("a: 'R&D *x'\nb: \"&a *b\"\nc: a & b * c\nd: |\n  *bold* &amp;\n")
    assert fields == {"a": "R&D *x", "b": "&a *b", "c": "a & b * c", "d": "*bold* &amp;\n"}


def test_frontmatter_names_the_file_line_and_the_code_of_a_refused_text() -> None:
    data = hostile.frontmatter("id: x\n" + hostile.bomb()).encode()
    with pytest.raises(frontmatter.FrontmatterError) as caught:
        frontmatter.parse(data)
    assert (caught.value.code, caught.value.line) == ("yaml_too_complex", 3)
    assert caught.value.message == (
        "line 3: frontmatter uses anchors or aliases (&name, *name), which are not supported"
    )


def test_a_library_message_quoting_a_multi_line_value_stays_one_line() -> None:
    assert problem("a: |\n  x\n  y\na: 2\n").reason == (
        'found duplicate key "a" with value "2" (original value: "x\\ny\\n")'
    )
    assert len(problem('a: "' + "x" * 1000 + '"\na: 2\n').reason) == 300
