"""The one block-YAML emitter of records and packets (records/okf.py ``yaml_lines``): exact lines, and they parse back."""

from __future__ import annotations

from git_memzoi.core import yamlio
from git_memzoi.memzoi.records.okf import yaml_lines

VALUE = {
    "route": "import",
    "paths": ["src/**", "docs/a b.md"],
    "empty": {},
    "none": [],
    "items": [{"kind": "file", "path": "x.py"}, {}, [1, 2], "plain"],
    "flag": True,
    "quoted": "yes",
}


def test_nested_values_render_as_block_yaml_with_flow_items_for_empty_and_nested_collections() -> None:
    assert yaml_lines("origin", VALUE) == [
        "origin:",
        "  route: import",
        "  paths:",
        '    - "src/**"',
        '    - "docs/a b.md"',
        "  empty: {}",
        "  none: []",
        "  items:",
        "    - kind: file",
        "      path: x.py",
        "    - {}",
        "    - [1, 2]",
        "    - plain",
        "  flag: true",
        "  quoted: yes",  # YAML 1.2: only true/false are booleans
    ]


def test_the_lines_parse_back_to_the_same_values() -> None:
    text = "\n".join(yaml_lines("origin", VALUE)) + "\n"
    assert yamlio.load_mapping(text)[0] == {"origin": VALUE}
