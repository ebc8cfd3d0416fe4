"""``git memzoi hook run`` never hangs a git operation: past ``GIT_MEMZOI_HOOK_TIMEOUT`` it says so on stderr and
exits 0, for pre-commit (the commit goes on) and for post-checkout (whose "never fail" handler must not eat it)."""

from __future__ import annotations

import time

import pytest

from git_memzoi.cli import memzoi_hooks
from git_memzoi.integrations import guard, newly_suspect
from tests.support import repos
from tests.support.repos import Repo


def hang(*args: object, **kwargs: object) -> None:
    time.sleep(10)
    raise AssertionError("the hook was not stopped")


def no_store(repo: Repo) -> str:
    """The one line a hook says first in a repository without a memory store (issue 12)."""
    return f"no memory store in {repo.root.resolve()} (no memkeep store, no .memzoi/); nothing to check"


def test_pre_commit_past_the_limit_warns_and_lets_the_commit_through(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(guard, "pre_commit", hang)
    started = time.monotonic()
    result = repos.run(repo, "hook", "run", "pre-commit", env={"GIT_MEMZOI_HOOK_TIMEOUT": "0.5"})
    assert time.monotonic() - started < 5
    assert result.exit_code == 0
    assert result.stderr == (  # the guard itself says when there is no store (it was stopped before)
        "git-memzoi: pre-commit hook did not finish within 0.5s; the commit goes on unchecked (warning)\n"
    )


def test_post_checkout_past_the_limit_warns_and_exits_0(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    repo.commit("a", **{"a.txt": "a\n"})
    monkeypatch.setattr(newly_suspect, "after_move", hang)
    head = repo.head()
    args = ("hook", "run", "post-checkout", "--", head, head, "1")
    result = repos.run(repo, *args, env={"GIT_MEMZOI_HOOK_TIMEOUT": "0.5"})
    assert result.exit_code == 0
    assert result.stderr == "git-memzoi: post-checkout hook did not finish within 0.5s; skipped the rest (warning)\n"


@pytest.mark.parametrize(("value", "seconds"), [(None, 300.0), ("", 300.0), ("7", 7.0), ("0", 0.0), ("soon", 300.0)])
def test_the_limit_comes_from_the_environment(value: str | None, seconds: float) -> None:
    environ = {} if value is None else {"GIT_MEMZOI_HOOK_TIMEOUT": value}
    assert memzoi_hooks.hook_timeout(environ) == seconds


def test_no_limit_leaves_no_timer(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    import signal

    result = repos.run(repo, "hook", "run", "pre-commit", env={"GIT_MEMZOI_HOOK_TIMEOUT": "0"})
    assert result.exit_code == 0 and signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    repos.run(repo, "hook", "run", "pre-commit", env={"GIT_MEMZOI_HOOK_TIMEOUT": "30"})
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)  # the timer is cleared when the hook finishes
