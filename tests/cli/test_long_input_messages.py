"""An error message quoting what it was given is bounded: a 2 MB id comes back as 2,000 characters and a count,
on the command line and over MCP alike (both render ``MemzoiError.message``)."""

from __future__ import annotations

import json

from git_memzoi.errors import MAX_MESSAGE, InputError
from tests.support.repos import Repo, run


def test_a_long_message_is_cut_with_the_count_of_what_was_left_out() -> None:
    error = InputError("no record " + "x" * 5000, "unknown_record")
    assert error.message == "no record " + "x" * (MAX_MESSAGE - 10) + "… (3,010 more characters)"
    assert str(error) == error.message and error.code == "unknown_record"
    assert InputError("short").message == "short"


def test_a_two_megabyte_id_is_refused_with_a_bounded_message(repo: Repo) -> None:
    assert run(repo, "init").exit_code == 0
    result = run(repo, "show", "a" * 2_000_000, "--json")
    assert result.exit_code == 2
    error = json.loads(result.stdout)["error"]
    assert len(error["message"]) < MAX_MESSAGE + 40 and error["message"].endswith("more characters)")
    assert len(result.stderr) < MAX_MESSAGE + 100
