"""git memzoi doctor: each readiness check with its exact status, and the exit code."""

from __future__ import annotations

import json
import shutil

import pytest
from click.testing import CliRunner

from git_memzoi.cli.memzoi import cli
from git_memzoi.memzoi.layout import Layout
from tests.support.repos import Repo


def doctor(repo: Repo) -> tuple[int, dict[str, str]]:
    result = CliRunner().invoke(cli, ["-C", str(repo.root), "doctor", "--json"])
    data = json.loads(result.output)
    return result.exit_code, {c["name"]: c["status"] for c in data["checks"]}


def init(repo: Repo) -> None:
    assert CliRunner().invoke(cli, ["-C", str(repo.root), "init"]).exit_code == 0


def test_an_uninitialized_repository_fails_and_says_init(repo: Repo) -> None:
    result = CliRunner().invoke(cli, ["-C", str(repo.root), "doctor"])
    assert result.exit_code == 1
    assert "fail  memory: no .memzoi/ here -> run `git memzoi init`" in result.output


def test_a_fresh_memory_is_ready_its_index_not_built_yet(repo: Repo) -> None:
    """An index not built yet is no problem (issue 20): it is derived, and the first search builds it."""
    init(repo)
    code, checks = doctor(repo)
    assert code == 0
    assert {k: v for k, v in checks.items() if k != "installation"} == {
        "local": "ok",
        "records": "ok",
        "relations": "ok",
        "conflicts": "ok",
        "proposals": "ok",
        "transactions": "ok",
        "leftovers": "ok",
        "index": "ok",
        "semantic": "ok",
        "privacy": "ok",
        "credentials": "ok",
    }
    assert CliRunner().invoke(cli, ["-C", str(repo.root), "rebuild", "--json"]).exit_code == 0
    assert doctor(repo)[1]["index"] == "ok"


def test_a_force_added_private_file_fails_privacy(repo: Repo) -> None:
    init(repo)
    repo.write(".memzoi/local/notes.md", "private\n")
    repo.git("add", "-f", ".memzoi/local/notes.md")
    code, checks = doctor(repo)
    assert (code, checks["privacy"]) == (1, "fail")


def test_a_broken_record_fails_and_an_interrupted_operation_warns(repo: Repo) -> None:
    init(repo)
    repo.write(".memzoi/records/broken.md", "---\nid: broken\n---\nno profile\n")
    (Layout(repo.root).transactions / "tx-1").mkdir(parents=True)
    code, checks = doctor(repo)
    assert (code, checks["records"], checks["transactions"]) == (1, "fail", "warn")


def test_one_killed_command_is_one_interrupted_operation(repo: Repo) -> None:
    """A kill inside ``run_steps`` of an operation leaves two journals: the operation's and its steps'."""
    import json as _json

    from git_memzoi.memzoi import doctor as doctor_mod

    init(repo)
    journals = Layout(repo.root).journals
    for name, kind in (("a" * 16, "operation"), ("b" * 16, None)):
        (journals / name).mkdir(parents=True)
        journal = {"version": 1, "operation": "import_apply", "entries": [], **({"kind": kind} if kind else {})}
        (journals / name / "journal.json").write_text(_json.dumps(journal))
    (check,) = [c for c in doctor_mod.run(repo.root).checks if c.name == "transactions"]
    assert (check.status, check.message) == ("warn", "1 interrupted operation(s) left (import_apply)")


def test_a_lost_gitignore_fails_privacy(repo: Repo) -> None:
    init(repo)
    (repo.root / ".memzoi/.gitignore").unlink()
    assert doctor(repo)[1]["privacy"] == "fail"
    assert CliRunner().invoke(cli, ["-C", str(repo.root), "init", "--force"]).exit_code == 0
    assert doctor(repo)[1]["privacy"] == "ok"


def test_doctor_never_writes(repo: Repo) -> None:
    init(repo)
    before = sorted(p.relative_to(repo.root).as_posix() for p in repo.root.rglob("*") if ".git/" not in str(p))
    doctor(repo)
    after = sorted(p.relative_to(repo.root).as_posix() for p in repo.root.rglob("*") if ".git/" not in str(p))
    assert before == after
    assert shutil.which("git")


def test_the_semantic_check_names_the_model_and_what_it_has_embedded(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    from git_memzoi.memzoi import doctor as doctor_mod
    from git_memzoi.memzoi.recall import embedder

    init(repo)
    semantic = lambda: next(c for c in doctor_mod.run(repo.root).checks if c.name == "semantic")  # noqa: E731
    assert (semantic().status, semantic().message) == (
        "ok",
        "no semantic model installed: recall is lexical (add one: pip install 'git-memzoi[semantic]')",
    )
    (repo.root / ".memzoi" / "config.toml").write_text('[recall]\nmode = "hybrid"\n')
    assert semantic().status == "warn" and "is set but semantic recall is not installed" in semantic().message
    monkeypatch.setattr(embedder, "bundled_dir", lambda: repo.root)
    assert semantic().message == (
        "sentence-transformers/all-MiniLM-L6-v2 (bundled); nothing embedded yet: the first semantic or hybrid read embeds"
    )
    (repo.root / ".memzoi" / "config.toml").write_text('[semantic]\nmodel_dir = "model"\n')
    (repo.root / "model").mkdir()
    (repo.root / "model" / "manifest.json").write_text('{"schema_version": 2}')
    check = semantic()
    assert check.status == "warn" and check.message.startswith("[semantic] model_dir is refused: ")
    assert "exit 2" in check.next_step
