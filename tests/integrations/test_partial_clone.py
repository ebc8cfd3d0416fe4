"""A treeless partial clone (``git clone --filter=tree:0``, issue 20): libgit2 cannot fetch the trees of older
commits from the promisor remote. The entries and records anchored there are reported one by one
(``anchor_unreachable`` with state ``history_unavailable`` and a hint), exit 1, while every other claim is still
judged; a blobless clone (``--filter=blob:none``) judges them all."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from git_memzoi.cli.memkeep import cli as memkeep
from tests.support import repos
from tests.support.repos import TODAY, Repo, entry_text, invoke


def source(tmp_path: Path) -> tuple[Repo, str]:
    """A repository whose entry ``old`` is anchored at the first commit and scoped to src/a.py (changed after it),
    plus a record anchored at the first commit; and that first id."""
    repo = repos.new_repo(tmp_path / "src")
    base = repo.commit("base", **{"src/a.py": "a\n", "docs/x.md": "x\n"})
    repos.ok_json(repo, "init", env=None)
    args = ["--type", "risk", "--sensitivity", "repo-safe", "--title", "A races", "--body", "Careful."]
    repos.ok_json(repo, "propose", *args, "--applies-to", "src/a.py", "--apply", env=None)
    repo.commit("memory", **{"agent-memory/entries/old.md": entry_text("old", anchor=base, scope=["src/**"])})
    repo.commit("change a", **{"src/a.py": "a2\n"})
    repo.git("config", "uploadpack.allowFilter", "true")
    return repo, base


def clone(repo: Repo, tmp_path: Path, spec: str) -> Repo:
    target = tmp_path / spec.replace(":", "-")
    subprocess.run(
        ["git", "clone", "-q", f"--filter={spec}", f"file://{repo.root}", str(target)], check=True, capture_output=True
    )
    return Repo(target)


def status(repo: Repo) -> tuple[int, dict[str, Any]]:
    result = invoke(memkeep, ["-C", str(repo.root), "status", "--json"], env={"MEMZOI_TODAY": TODAY})
    return result.exit_code, json.loads(result.stdout)


def reasons(report: dict[str, Any]) -> dict[str, tuple[str, str | None]]:
    return {v["id"]: (v["reason"], v.get("state")) for v in report["verdicts"]}


def test_a_treeless_clone_reports_each_claim_it_cannot_judge(tmp_path: Path) -> None:
    repo, base = source(tmp_path)
    treeless = clone(repo, tmp_path, "tree:0")
    # work done in the clone has its trees: an entry anchored at the clone's HEAD is still judged
    head = treeless.git("rev-parse", "HEAD")
    treeless.commit("new entry", **{"agent-memory/entries/new.md": entry_text("new", anchor=head, scope=["src/**"])})
    treeless.commit("change a again", **{"src/a.py": "a3\n"})
    code, report = status(treeless)
    assert code == 1
    assert reasons(report) == {"old": ("anchor_unreachable", "history_unavailable"), "new": ("scope_hit", None)}
    verdict = next(v for v in report["verdicts"] if v["id"] == "old")
    assert verdict["message"].startswith(f"anchor {base[:12]} is unavailable (history_unavailable): this clone")
    assert "--filter=blob:none" in verdict["message"]

    search = repos.ok_json(treeless, "search", "races", env=None)
    hit = search["results"][0]
    found = [(r["reason"], r["evidence"]["state"]) for r in hit["suspect"]["reasons"]]
    assert (hit["record"]["title"], found) == ("A races", [("anchor_unreachable", "history_unavailable")])


def test_a_blobless_clone_judges_every_claim(tmp_path: Path) -> None:
    repo, _ = source(tmp_path)
    code, report = status(clone(repo, tmp_path, "blob:none"))
    assert code == 1
    assert reasons(report) == {"old": ("scope_hit", None)}
