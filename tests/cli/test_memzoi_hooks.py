"""`git memzoi hooks …`, the hidden `hook run`, the hook argument parser and `git memkeep status --format`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from git_memzoi.cli.memkeep import cli as memkeep_cli
from git_memzoi.integrations import ci_report, hook_events
from tests.support import repos
from tests.support.repos import PROJECT, Repo, entry_text


def run(repo: Repo, *args: str) -> tuple[int, str]:
    result = repos.run(repo, *args, env=None)
    return result.exit_code, result.output


def test_install_status_uninstall_json(repo: Repo) -> None:
    code, output = run(repo, "hooks", "status", "--json")
    assert code == 1 and {h["state"] for h in json.loads(output)["hooks"]} == {"missing"}
    code, output = run(repo, "hooks", "install", "--json")
    assert code == 0 and json.loads(output)["ok"] is True
    code, output = run(repo, "hooks", "status")
    assert code == 0 and output.count("installed") == 3
    code, output = run(repo, "hooks", "uninstall", "--json")
    assert code == 0 and not (repo.root / ".git/hooks/pre-commit").exists()


def test_foreign_hook_is_reported_and_kept_name_conflict_refused(repo: Repo) -> None:
    hooks = repo.root / ".git/hooks"
    (hooks / "post-merge").write_text("#!/bin/sh\n")
    code, output = run(repo, "hooks", "status", "--json")
    assert {h["hook"]: h["state"] for h in json.loads(output)["hooks"]}["post-merge"] == "foreign"
    (hooks / "post-merge.before-memzoi").write_text("#!/bin/sh\necho other\n")
    code, output = run(repo, "hooks", "install")
    assert code == 2 and not (hooks / "pre-commit").exists()
    assert f"{hooks / 'post-merge'} must be kept as post-merge.before-memzoi to be chained, and" in output


def test_hook_run_bad_arguments(repo: Repo) -> None:
    code, output = run(repo, "hook", "run", "pre-push", "--")
    assert code == 2 and "unknown hook type 'pre-push'" in output
    code, output = run(repo, "hook", "run", "post-merge", "--", "a", "b")  # never fails a merge
    assert code == 0 and "skipped" in output


def test_post_checkout_file_checkout_is_silent(repo: Repo) -> None:
    head = repo.commit("one")
    code, output = run(repo, "hook", "run", "post-checkout", "--", head, head, "0")
    assert code == 0 and output == ""


def test_parser_counts_and_flags() -> None:
    zero = "0" * 40
    event = hook_events.parse("post-checkout", [zero, "a" * 40, "1"])
    assert isinstance(event, hook_events.PostCheckout) and event.after_clone and event.branch_checkout
    assert hook_events.parse("post-merge", ["1"]) == hook_events.PostMerge(squash=True)
    for hook, argv in (
        ("post-merge", []),
        ("post-checkout", ["x", "y", "1"]),
        ("post-merge", ["2"]),
        ("pre-push", []),
        ("pre-commit", ["a"]),
    ):
        with pytest.raises(hook_events.HookUsageError):
            hook_events.parse(hook, argv)
    env = {"PRE_COMMIT_CHECKOUT_TYPE": "1", "PRE_COMMIT_FROM_REF": zero, "PRE_COMMIT_TO_REF": "b" * 40}
    assert isinstance(hook_events.from_pre_commit_env(env), hook_events.PostCheckout)
    assert hook_events.from_pre_commit_env({"PRE_COMMIT_IS_SQUASH_MERGE": "0"}) == hook_events.PostMerge(False)
    assert hook_events.from_pre_commit_env({}) is None


@pytest.fixture
def suspect_repo(repo: Repo) -> Repo:
    base = repo.commit("base", **{"src/a.py": "1\n"})
    repo.commit(
        "entry",
        **{
            "agent-memory/entries/e1.md": entry_text(
                "e1", anchor=base, scope=["src/**"], claim="Claim, with: 100% colon\nand more"
            )
        },
    )
    repo.commit("change", **{"src/a.py": "2\n"})
    return repo


def test_status_format_github_escapes_and_keeps_exit_code(
    suspect_repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    result = CliRunner().invoke(memkeep_cli, ["-C", str(suspect_repo.root), "status", "--format", "github"])
    assert result.exit_code == 1
    line = result.output.splitlines()[0]
    # line 9 is the entry's scope: field (entry_text: ---, schema_version, id, type, status, 2 dates, anchor, scope)
    assert line.startswith("::warning file=agent-memory/entries/e1.md,line=9,title=memkeep scope_hit::e1 is suspect")
    assert "e1" in summary.read_text()
    assert ci_report.escape_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A"
    assert ci_report.escape_data("50%\r\n: ,") == "50%25%0D%0A: ,"


def test_status_format_sarif_has_stable_fingerprints(suspect_repo: Repo) -> None:
    args = ["-C", str(suspect_repo.root), "status", "--format", "sarif"]
    first, second = (json.loads(CliRunner().invoke(memkeep_cli, args).output) for _ in range(2))
    assert first["version"] == "2.1.0"
    results = first["runs"][0]["results"]
    assert results[0]["ruleId"] == "scope_hit"
    assert results[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "agent-memory/entries/e1.md"
    assert [r["partialFingerprints"] for r in results] == [
        r["partialFingerprints"] for r in second["runs"][0]["results"]
    ]


def test_status_format_with_json_is_a_usage_error(suspect_repo: Repo) -> None:
    result = CliRunner().invoke(memkeep_cli, ["-C", str(suspect_repo.root), "status", "--json", "--format", "sarif"])
    assert result.exit_code == 2


def test_pre_commit_manifest_offers_the_three_hooks() -> None:
    text = (PROJECT / ".pre-commit-hooks.yaml").read_text()
    for hook_id in ("memkeep-lint", "memkeep-status", "memzoi-guard"):
        assert f"- id: {hook_id}" in text
    assert "stages: [post-merge, post-checkout, manual]" in text and "always_run: true" in text
    workflow = (PROJECT / "templates" / "memkeep-status.yml").read_text()
    assert "fetch-depth: 0" in workflow and "pull_request" in workflow and "--format github" in workflow


def test_install_says_each_hook_once(repo: Repo) -> None:
    code, output = run(repo, "hooks", "install")
    lines = output.splitlines()
    assert code == 0 and [line.split()[-1].rsplit("/", 1)[-1] for line in lines[:3]] == [
        "pre-commit",
        "post-merge",
        "post-checkout",
    ]
    assert [line.split(":")[0] for line in lines[3:]] == [  # then the merge driver, once (test_team_merge.py)
        "registered merge driver memzoi in the repository's git config",
        "added /agent-memory/INDEX.md, /.memzoi/index.md, /.memzoi/records/** to .gitattributes (merge=memzoi)",
    ]
    code, output = run(repo, "hooks", "status")
    assert code == 0 and [line.split()[:2] for line in output.splitlines()] == [
        ["installed", "pre-commit"],
        ["installed", "post-merge"],
        ["installed", "post-checkout"],
    ]


def test_pre_commit_checks_named_files_that_are_not_staged(repo: Repo) -> None:
    """The pre-commit framework names files (CI modes); unstaged ones are read from the working tree."""
    repo.write(".memzoi/local/notes.md", "private\n")
    repo.write("docs/missing-is-fine.txt", "x\n")
    code, output = run(repo, "hook", "run", "pre-commit", "--", ".memzoi/local/notes.md", "gone.md", "../outside.md")
    assert code == 1 and ".memzoi/local/notes.md  [private_local]" in output
    code, output = run(repo, "hook", "run", "pre-commit", "--", "gone.md", "docs/missing-is-fine.txt")
    assert code == 0 and "refused" not in output
