"""Random bytes and strings where users type (issue 13, "Exit 3 where exit 2 is right"): ``MEMZOI_TODAY``,
``MEMZOI_NOW`` and ``MEMKEEP_STORE``, an id, a title and a query are either accepted or refused as bad input, never an internal error
(exit 3) nor a traceback. One repository serves every example; the bounded drill of the exit-2 cases lives in
``test_bad_input_exit_2.py``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.repos import NOW_TEXT, TODAY, Repo, entry_text, invoke, new_repo

# what an environment variable can hold: any bytes but NUL, as Python decodes them (surrogateescape)
ENV_VALUES = st.one_of(
    st.binary(max_size=40).filter(lambda b: b"\0" not in b).map(os.fsdecode),
    st.sampled_from(["2026-07-10", "2026-13-01", "9999-12-31", "2026-07-10T12:00:00", "9999-12-31T23:59:59Z"]),
)
# what an in-process caller can pass as an argument: any text, lone surrogates and NUL included
ARGUMENTS = st.one_of(st.text(max_size=60), st.text(min_size=300, max_size=6000, alphabet="a-/"))

_shared: dict[str, Repo] = {}


@pytest.fixture
def project(tmp_path_factory: pytest.TempPathFactory) -> Repo:
    """One repository with a memkeep entry and a memzoi memory, built once for the module's examples."""
    if "repo" not in _shared or not _shared["repo"].root.exists():
        repo = new_repo(Path(tmp_path_factory.mktemp("property")) / "repo")
        repo.commit("start", **{"src/app.py": "x = 1\n"})
        repo.write("agent-memory/entries/one.md", entry_text("one", anchor=repo.head(), scope=["src/**"]))
        assert _memzoi(repo, "init").exit_code == 0
        repo.commit("memory")
        _shared["repo"] = repo
    return _shared["repo"]


def _memzoi(repo: Repo, *args: str, env: dict[str, str] | None = None) -> object:
    from git_memzoi.cli.memzoi import cli

    return invoke(cli, ["-C", str(repo.root), *args], env=env or {"MEMZOI_NOW": NOW_TEXT}, prog_name="git-memzoi")


def _memkeep(repo: Repo, *args: str, env: dict[str, str] | None = None) -> object:
    from git_memzoi.cli.memkeep import cli

    return invoke(cli, ["-C", str(repo.root), *args], env=env or {"MEMZOI_TODAY": TODAY}, prog_name="git-memkeep")


def _settable(value: str) -> bool:
    """Whether ``value`` can be put in the environment at all (a surrogate outside surrogateescape's cannot)."""
    try:
        os.fsencode(value)
    except UnicodeEncodeError:
        return False
    return True


QUICK = settings(max_examples=25, suppress_health_check=[HealthCheck.function_scoped_fixture])


@QUICK
@given(today=ENV_VALUES, now=ENV_VALUES, store=ENV_VALUES)
def test_environment_values_are_accepted_or_refused_never_a_crash(
    project: Repo, today: str, now: str, store: str
) -> None:
    if not all(_settable(v) for v in (today, now, store)):
        return
    env = {"MEMZOI_TODAY": today, "MEMZOI_NOW": now}
    for result in (
        _memzoi(project, "search", "claim", env=env),
        _memkeep(project, "status", env=env),
        _memkeep(project, "status", env={"MEMZOI_TODAY": TODAY, "MEMKEEP_STORE": store}),
    ):
        # invoke() asserts the exit is 0, 1 or 2 and no traceback; a refusal names the variable on one line
        if result.exit_code == 2:  # type: ignore[attr-defined]
            assert result.stderr.count("\n") == 1, result.stderr  # type: ignore[attr-defined]


@QUICK
@given(value=ARGUMENTS)
def test_ids_titles_and_queries_are_accepted_or_refused_never_a_crash(project: Repo, value: str) -> None:
    for result in (
        _memzoi(project, "expiry", value),
        _memzoi(project, "search", value),
        _memzoi(project, "propose", "--title", value, "--body", "b", "--sensitivity", "repo-safe"),
        _memkeep(project, "verify", value, "--dry-run"),
    ):
        if result.exit_code == 2:  # type: ignore[attr-defined]
            assert result.stderr.count("\n") == 1, result.stderr  # type: ignore[attr-defined]


def test_a_store_path_with_a_line_break_is_refused_on_one_escaped_line(project: Repo) -> None:
    """Hypothesis found it: MEMKEEP_STORE=$'\\n' printed the raw line break, a two-line error."""
    result = _memkeep(project, "status", env={"MEMZOI_TODAY": TODAY, "MEMKEEP_STORE": "\n"})
    assert result.exit_code == 2  # type: ignore[attr-defined]
    assert result.stderr == "git-memkeep: error: no memkeep store at \\n: no such folder\n"  # type: ignore[attr-defined]
