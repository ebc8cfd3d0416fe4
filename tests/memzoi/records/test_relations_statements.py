"""The ``relations:`` list and the categorized statements of a record (records/relations.py, records/statements.py):
each rule of vault-memory "Domain relation roles" and "Categorized statements" (F04) at its boundary."""

from __future__ import annotations

from typing import Any

import pytest

from git_memzoi.memzoi.records import okf, relations, statements
from git_memzoi.memzoi.records.relations import Relation, RelationError
from git_memzoi.memzoi.records.statements import Statement


def test_relations_keep_their_order_and_role_names_are_open() -> None:
    value = [{"depends_on": "use-pnpm-1a2b3c"}, {"owns": "src/auth/**"}, {"refines": "a/b_c"}, {"x9_y": "z"}]
    assert relations.parse(value) == (
        Relation("depends_on", "use-pnpm-1a2b3c"),
        Relation("owns", "src/auth/**"),
        Relation("refines", "a/b_c"),
        Relation("x9_y", "z"),
    )
    assert relations.parse(None) == ()
    assert relations.parse([]) == ()


@pytest.mark.parametrize(
    ("value", "phrase"),
    [
        ({"depends_on": "x"}, "must be a list"),
        ("depends_on: x", "must be a list"),
        (["x"], "item 1 must be one"),
        ([{"depends_on": "a", "owns": "b/**"}], "item 1 must be one"),
        ([{}], "item 1 must be one"),
        ([{"Depends": "x"}], "role 'Depends' must match"),
        ([{"9role": "x"}], "must match"),
        ([{"_role": "x"}], "must match"),
        ([{"depends-on": "x"}], "must match"),
        ([{"depends_on": ""}], "non-empty string"),
        ([{"depends_on": "  "}], "non-empty string"),
        ([{"depends_on": 7}], "non-empty string"),
        ([{"depends_on": None}], "non-empty string"),
        ([{"depends_on": "Use-Pnpm"}], "is not a record id"),
        ([{"depends_on": "a/../b"}], "is not a record id"),
        ([{"depends_on": "-a"}], "is not a record id"),
        ([{"depends_on": "a" * 401}], "at most 400"),
        ([{"owns": "/etc/**"}], "inside the repository"),
        ([{"owns": "../x/**"}], "inside the repository"),
        ([{"depends_on": "a\nb"}], "one line"),
        ([{"depends_on": "x"}] * 65, "at most 64"),
    ],
)
def test_a_bad_shape_is_invalid_relation(value: Any, phrase: str) -> None:
    with pytest.raises(RelationError) as caught:
        relations.parse(value)
    assert caught.value.code == "invalid_relation"
    assert phrase in caught.value.message


def test_the_boundaries_that_hold() -> None:
    assert len(relations.parse([{"depends_on": "x"}] * 64)) == 64
    assert relations.parse([{"depends_on": "a" * 400}]) == (Relation("depends_on", "a" * 400),)
    assert relations.parse([{"a": "b"}]) == (Relation("a", "b"),)  # a one-letter role


def test_relation_options() -> None:
    assert relations.from_options([]) is None
    assert relations.from_options(["depends_on=a", "owns = src/**"]) == (
        Relation("depends_on", "a"),
        Relation("owns", "src/**"),
    )
    with pytest.raises(RelationError, match="write role=target"):
        relations.from_options(["depends_on"])
    with pytest.raises(RelationError, match="--relation: item 2"):
        relations.from_options(["depends_on=a", "Bad=b"])


def test_a_record_with_a_bad_list_is_refused_with_its_code() -> None:
    fields = {
        "id": "a",
        "kind": "memory",
        "profile": "memzoi",
        "type": "fact",
        "lane": "semantic",
        "title": "A",
        "scope": "repo",
        "visibility": "repo",
        "content_class": "general_repo_knowledge",
        "status": "active",
        "confidence": 1,
        "timestamp": "2026-07-01T00:00:00Z",
        "retention": {},
        "origin": {"origin_key": "k", "route": "owner_command"},
    }
    good = okf.record_from_fields("a", "a.md", {**fields, "relations": [{"depends_on": "b"}]}, "body")
    assert good.relations == (Relation("depends_on", "b"),)
    assert "relations:\n  - depends_on: b\n" in okf.render(good)
    with pytest.raises(okf.RecordError) as caught:
        okf.record_from_fields("a", "a.md", {**fields, "relations": [{"Bad": "b"}]}, "body")
    assert (caught.value.code, caught.value.field) == ("invalid_relation", "relations")
    assert okf.record_from_fields("a", "a.md", fields, "body").relations == ()
    assert "relations" not in okf.render(okf.record_from_fields("a", "a.md", fields, "body"))


def test_item_lines() -> None:
    text = 'id: a\nrelations:\n  - depends_on: b\n  -  owns: "x/**"\nretention: {}\n'
    assert relations.item_lines(text, 2, 2) == [4, 5]
    assert relations.item_lines("relations: [{depends_on: b}]\n", 1, 2) == [2]  # flow style: the key's line


# ------------------------------------------------------------------------------------------------ statements

BODY = """Prose that mentions [fact] inline is not a statement.

- [fact] The rollout starts in June
  and ends in July
  - [risk] Staging is shared
    by two teams
  - a plain nested item
    under it
- [ ] write the runbook
- [x] done
- [X] also done
- [decision] Use a local model

- [fact]
- [Fact] capital category
* [preference] Write asynchronously
+ [odd_cat-2] unknown categories stay
1. [procedure] ordered items count
2) [risk] both ordered forms
```
- [fact] inside fenced code
```
~~~~
- [fact] inside a tilde fence
~~~~
- [fact] after the fences
    deep continuation

  not a continuation after a blank line
-  [fact]   extra spaces kept out
"""


def test_statements_follow_f04() -> None:
    assert statements.parse(BODY, 10) == (
        Statement("fact", "The rollout starts in June\nand ends in July", 12, 13),
        Statement("risk", "Staging is shared\nby two teams", 14, 15),
        Statement("decision", "Use a local model", 21, 21),
        Statement("preference", "Write asynchronously", 25, 25),
        Statement("odd_cat-2", "unknown categories stay", 26, 26),
        Statement("procedure", "ordered items count", 27, 27),
        Statement("risk", "both ordered forms", 28, 28),
        Statement("fact", "after the fences\ndeep continuation", 35, 36),
        Statement("fact", "extra spaces kept out", 39, 39),
    )


def test_statement_edges() -> None:
    assert statements.parse("") == ()
    assert statements.parse("- [fact] one") == (Statement("fact", "one", 1, 1),)
    assert statements.parse("- [fact] one\n- [fact] one") == (
        Statement("fact", "one", 1, 1),
        Statement("fact", "one", 2, 2),
    )
    # an item's continuation must be deeper than its marker: a sibling line at the same indent is not
    assert statements.parse("- [fact] a\nb") == (Statement("fact", "a", 1, 1),)
    # a fence opened inside a statement ends it; an unclosed fence hides the rest
    assert statements.parse("- [fact] a\n```\n- [fact] b") == (Statement("fact", "a", 1, 1),)
    assert statements.parse("- [x] done") == ()
    assert statements.parse("- [x]") == ()
    assert statements.parse("- [xy] two letters is a category") == (Statement("xy", "two letters is a category", 1, 1),)
