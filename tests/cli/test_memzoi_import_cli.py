"""``git memzoi import plan|apply --from-file`` in-process through click's CliRunner (and once in a subprocess)
against real repositories: JSON envelopes, one-line errors with stable codes, exit 2, nothing written on error."""

from __future__ import annotations

import json
import os
import random
import string
import subprocess
import sys
from pathlib import Path

from tests.support.repos import NOW_TEXT as NOW
from tests.support.repos import Repo, ok_json, run

MANIFEST = """\
version: memzoi/import-v1
sources:
  - path: imports/source.yml
candidates:
  - destination: repo
    reason: durable project convention
    type: decision
    title: Verify release archives
    body: Check the SHA-256 before extracting.
    sensitivity: repo-safe
    tags: [release]
  - destination: local
    reason: only on this machine
    lane: procedural
    title: Local build
    body: Use make -j8 locally.
"""


def files(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
        and (".git" not in p.relative_to(root).parts or p.is_relative_to(root / ".git/memzoi/local"))
        and p.name != "lifecycle.lock"
    }


def test_plan_then_apply_then_reimport(repo: Repo) -> None:
    assert run(repo, "init").exit_code == 0
    repo.write("imports/manifest.yml", MANIFEST)
    before = files(repo.root)
    plan = ok_json(repo, "import", "plan", "--from-file", "imports/manifest.yml")
    assert files(repo.root) == before
    assert (plan["schema"], plan["mode"], plan["actor"], plan["source_file"]) == (
        "memzoi/import-plan-v1",
        "plan",
        "cli",
        "imports/manifest.yml",
    )
    assert "writes" not in plan and plan["summary"]["create_proposals"] == 1 and plan["summary"]["local_writes"] == 1
    human = run(repo, "import", "plan", "--from-file", "imports/manifest.yml")
    assert human.exit_code == 0 and plan["plan_id"] in human.stdout and "create_proposal" in human.stdout
    result = ok_json(repo, "import", "apply", "--from-file", "imports/manifest.yml", "--plan-id", plan["plan_id"])
    assert (result["mode"], result["expected_plan_id"], result["plan_id"]) == (
        "apply",
        plan["plan_id"],
        plan["plan_id"],
    )
    assert result["writes"] == [
        {
            "kind": "proposal_file",
            "index": 0,
            "proposal_id": "mem_import_verify-release-archives",
            "path": ".memzoi/proposals/pending/mem_import_verify-release-archives.md",
        },
        {"kind": "runtime_record", "index": 1, "record_id": "local-local-build", "destination": "local"},
    ]
    assert "mem_import_verify-release-archives" in json.dumps(ok_json(repo, "proposal-files", "list"))
    again = ok_json(repo, "import", "plan", "--from-file", "imports/manifest.yml")
    assert [c["action"]["kind"] for c in again["candidates"]] == ["duplicate", "duplicate"]
    stale = run(repo, "import", "apply", "--from-file", "imports/manifest.yml", "--plan-id", plan["plan_id"], "--json")
    assert stale.exit_code == 2 and json.loads(stale.stdout)["error"]["code"] == "stale_import_plan"
    assert len(stale.stderr.strip().splitlines()) == 1


def test_wrong_actor_or_id_is_stale_and_writes_nothing(repo: Repo) -> None:
    assert run(repo, "init").exit_code == 0
    repo.write("imports/manifest.yml", MANIFEST)
    plan = ok_json(repo, "import", "plan", "--from-file", "imports/manifest.yml", "--actor", "zoki")
    before = files(repo.root)
    for args in (("--plan-id", plan["plan_id"]), ("--plan-id", "import_0", "--actor", "zoki")):
        result = run(repo, "import", "apply", "--from-file", "imports/manifest.yml", *args, "--json")
        assert result.exit_code == 2 and json.loads(result.stdout)["error"]["code"] == "stale_import_plan"
    assert files(repo.root) == before


def test_unknown_field_is_exit_2_with_a_code(repo: Repo) -> None:
    assert run(repo, "init").exit_code == 0
    repo.write("m.yml", MANIFEST.replace("    tags: [release]\n", "    tags: [release]\n    colour: red\n"))
    before = files(repo.root)
    result = run(repo, "import", "plan", "--from-file", "m.yml", "--json")
    error = json.loads(result.stdout)["error"]
    assert (result.exit_code, error["code"]) == (2, "invalid_import_manifest")
    assert "candidates[0]" in error["message"] and "'colour'" in error["message"]
    assert ": error: candidates[0]" in result.stderr and len(result.stderr.strip().splitlines()) == 1
    missing = run(repo, "import", "plan", "--from-file", "nope.yml")
    assert missing.exit_code == 2 and "Traceback" not in missing.stderr
    usage = run(repo, "import", "apply", "--from-file", "m.yml", "--json")
    assert usage.exit_code == 2 and json.loads(usage.stdout)["error"]["code"] == "bad_usage"
    assert files(repo.root) == before


def test_a_misspelt_field_gets_the_hint_memkeep_gives(repo: Repo) -> None:
    assert run(repo, "init").exit_code == 0
    repo.write("m.yml", MANIFEST.replace("    tags: [release]\n", "    tags: [release]\n    sensitvity: repo-safe\n"))
    result = run(repo, "import", "plan", "--from-file", "m.yml")
    assert result.exit_code == 2
    assert "candidates[0]: unknown field 'sensitvity' — did you mean sensitivity? (allowed: " in result.stderr


def test_blocked_secret_is_never_echoed(repo: Repo) -> None:
    rng = random.Random(7)
    token = "ghp_" + "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(36))
    assert run(repo, "init").exit_code == 0
    repo.write("m.yml", MANIFEST.replace("Use make -j8 locally.", f"export GH_TOKEN={token}"))
    before = files(repo.root)
    plan = run(repo, "import", "plan", "--from-file", "m.yml", "--json")
    human = run(repo, "import", "plan", "--from-file", "m.yml")
    assert plan.exit_code == 1 and json.loads(plan.stdout)["data_class"] == "blocked"
    applied = run(repo, "import", "apply", "--from-file", "m.yml", "--plan-id", json.loads(plan.stdout)["plan_id"])
    assert applied.exit_code == 2 and "blocked" in applied.stderr
    for out in (plan, human, applied):
        text = out.stdout + out.stderr
        assert not any(token[i : i + 8] in text for i in range(len(token) - 7))
    assert files(repo.root) == before


def test_exit_codes_in_a_subprocess(repo: Repo, tmp_path: Path) -> None:
    assert run(repo, "init").exit_code == 0
    outside = tmp_path / "outside.yml"
    outside.write_text(MANIFEST, encoding="utf-8")
    env = {**os.environ, "MEMZOI_NOW": NOW}
    cmd = [sys.executable, "-c", "from git_memzoi.cli.memzoi import main; main()", "import", "plan", "--from-file"]
    ok = subprocess.run(
        [*cmd, str(outside), "--json"], cwd=repo.root, env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert ok.returncode == 0 and json.loads(ok.stdout)["source_file"] is None
    (repo.root / "bad.yml").write_text("version: memzoi/import-v1\nsources: [\n", encoding="utf-8")
    bad = subprocess.run(
        [*cmd, "bad.yml"], cwd=repo.root, env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert bad.returncode == 2 and "Traceback" not in bad.stderr and len(bad.stderr.strip().splitlines()) == 1
