"""``git memzoi update --check`` (issue 20; Memzoi reference "Update Command"): offline unless asked, a release
ref compared as PEP 440 orders versions, branches and commits refused, a failed lookup reported (exit 1)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from click.testing import CliRunner

from git_memzoi import __version__
from git_memzoi.cli.memzoi import cli
from git_memzoi.errors import InputError
from git_memzoi.integrations import update


@pytest.mark.parametrize(
    ("ref", "status", "target"),
    [("0.1.0", "up_to_date", "0.1.0"), ("v0.0.9", "up_to_date", "0.0.9"), ("0.10.0", "update_available", "0.10.0")],
)
def test_a_release_ref_is_compared_offline(ref: str, status: str, target: str) -> None:
    result = update.check("0.1.0", ref, fetch=lambda: pytest.fail("no lookup for a release ref"))
    assert (result.status, result.target, result.installed) == (status, target, "0.1.0")


def test_latest_is_looked_up_only_when_asked() -> None:
    offline = update.check("0.1.0", fetch=lambda: pytest.fail("offline by default"))
    assert (offline.status, offline.target) == ("not_checked", None)
    online = update.check("0.1.0", online=True, fetch=lambda: "0.2.0")
    assert (online.status, online.target) == ("update_available", "0.2.0")


def test_a_failed_lookup_is_download_failed() -> None:
    def unreachable() -> str:
        raise OSError("network is unreachable")

    result = update.check("0.1.0", online=True, fetch=unreachable)
    assert (result.status, result.to_json()["ok"]) == ("download_failed", False)
    assert result.reason == "the index did not answer: network is unreachable"


def test_a_package_the_index_does_not_have_is_an_answer_not_silence() -> None:
    """PyPI's 404 said "the index did not answer" (a fresh user's walk): it answered that it has no release."""
    import urllib.error

    def missing() -> str:
        raise urllib.error.HTTPError("https://pypi.org/pypi/git-memzoi/json", 404, "Not Found", None, None)  # type: ignore[arg-type]

    result = update.check("0.1.0", online=True, fetch=missing)
    assert (result.status, result.reason) == (
        "download_failed",
        "the package index has no git-memzoi release (HTTP 404); pass --ref X.Y.Z to compare with a release",
    )


@pytest.mark.parametrize("ref", ["main", "4a1780219e67", "https://example.com/x.whl", "1.2", "v1.2.3-rc1"])
def test_branches_commits_and_urls_are_invalid_refs(ref: str) -> None:
    with pytest.raises(InputError) as caught:
        update.check("0.1.0", ref)
    assert caught.value.code == "invalid_ref"


def test_the_command_reports_json_and_refuses_a_bad_ref_with_exit_2() -> None:
    result = CliRunner().invoke(cli, ["update", "--check", "--ref", "v9.0.0", "--json"])
    assert result.exit_code == 0
    payload = json.loads(result.stdout)
    assert (payload["ok"], payload["status"], payload["installed"], payload["target"]) == (
        True,
        "update_available",
        __version__,
        "9.0.0",
    )
    assert payload["install"] in ("pip", "pipx", "editable") and payload["command"]
    refused = subprocess.run(
        [sys.executable, "-m", "git_memzoi", "update", "--check", "--ref", "main", "--json"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert refused.returncode == 2
    assert json.loads(refused.stdout)["error"]["code"] == "invalid_ref"
    assert refused.stderr.count("\n") == 1


def test_a_failed_lookup_exits_1(monkeypatch: pytest.MonkeyPatch) -> None:
    def unreachable() -> str:
        raise OSError("offline")

    monkeypatch.setattr(update, "_latest", unreachable)
    result = CliRunner().invoke(cli, ["update", "--check", "--online"])
    assert result.exit_code == 1
    assert result.stdout.startswith(f"download_failed: installed {__version__}; the index did not answer: offline")
