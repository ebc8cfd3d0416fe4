"""Core errors reach an agent in the tool's own argument names (``as_of``), not the command line's (``--as-of``)."""

from __future__ import annotations

from git_memzoi.mcp.arguments import in_tool_terms, tool_arguments
from git_memzoi.mcp.server import _Server

NAMES = frozenset({"as_of", "relations", "ttl_days", "limit"})


def test_an_option_a_tool_takes_is_named_as_its_argument() -> None:
    assert in_tool_terms("--as-of: 'x' must be a date", NAMES) == "as_of: 'x' must be a date"
    assert in_tool_terms("--relation 'bad': write role=target", NAMES) == "relations 'bad': write role=target"
    assert (
        in_tool_terms("--ttl-days must be 1 to 36500; --limit too", NAMES) == "ttl_days must be 1 to 36500; limit too"
    )


def test_an_unknown_option_a_quoted_command_and_a_word_with_dashes_stay_as_written() -> None:
    text = "run `git memzoi verify --as-of x` or pass --force; pre--as-of stays"
    assert in_tool_terms(text, NAMES) == text


def test_the_tools_arguments_are_read_from_their_signatures() -> None:
    names = tool_arguments(_Server)
    assert {"as_of", "valid_from", "valid_to", "ttl_days", "relations", "anchor", "max_chars", "query"} <= names
    assert "self" not in names
