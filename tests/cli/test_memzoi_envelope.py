"""The earned envelope on records, set by the commands that write them (issue 14 §1), end to end on real repositories.

``propose --applies-to`` anchors the record at HEAD and scopes it to the paths; a change to one of them makes
``search``, ``precheck`` and ``context --json`` flag it suspect with ``scope_hit`` and the changed file;
``git memzoi verify`` heals it (only the envelope's lines change) or, when its check fails, marks it stale
through the governed lifecycle (event row). Bad envelope options exit 2 with one line and write nothing.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

from tests.support import repos
from tests.support.repos import Repo, spec_ids

NOW = "2026-07-10T12:00:00Z"
TITLE = "Signer sorts keys"
BODY = "src/signer.py sorts the keys before it signs; an unsorted map breaks every signature."
RISK = ("propose", "--type", "risk", "--sensitivity", "repo-safe", "--title", TITLE, "--body", BODY, "--apply")
RECORD = ".memzoi/records/signer-sorts-keys.md"


@pytest.fixture
def root(repo: Repo, tmp_path: Path) -> Repo:
    (tmp_path / "home").mkdir()
    repo.write("src/signer.py", "def sign(m):\n    return sorted(m)\n")
    repo.write("README.md", "hello\n")
    assert run(repo, tmp_path, "init").exit_code == 0
    spec_ids(repo.root)  # records named by their bare slugs (memzoi-spec v0 ids) below
    repo.commit("signer")
    return repo


def run(repo: Repo, tmp_path: Path, *args: str, now: str = NOW) -> Result:
    env = {"MEMZOI_NOW": now, "MEMZOI_HOME": str(tmp_path / "home")}
    return repos.run(repo, *args, env=env, prog_name="git-memzoi")


def ok(repo: Repo, tmp_path: Path, *args: str, now: str = NOW) -> Any:
    result = run(repo, tmp_path, *args, "--json", now=now)
    assert result.exit_code == 0, (result.stdout, result.stderr)
    return json.loads(result.stdout)


def verify_events(repo: Repo) -> list[tuple[str, str, Any]]:
    lines = (repo.root / ".git/memzoi/local/events.jsonl").read_text().splitlines()
    found = [json.loads(line) for line in lines]
    return [(e["event_type"], e["record_id"], e["payload"]) for e in found if e["event_type"].startswith("record_")]


def suspect_of(out: Any, key: str) -> list[Any]:
    return [item.get("suspect") for item in out[key]]


def test_propose_applies_to_is_watched_suspect_after_a_change_then_verify_heals(root: Repo, tmp_path: Path) -> None:
    anchor = root.head()
    out = ok(root, tmp_path, *RISK, "--applies-to", "src/signer.py")
    assert out["watch"] == {
        "watched": True,
        "reason": None,
        "message": None,
        "envelope": {"anchor": anchor, "scope": ["src/signer.py"], "verified_at": "2026-07-10"},
    }
    text = (root.root / RECORD).read_text()
    assert text.endswith(
        f'memkeep:\n  anchor: {anchor}\n  scope:\n    - src/signer.py\n  verified_at: "2026-07-10"\n---\n\n'
        f"# {TITLE}\n\n{BODY}\n"
    )
    root.commit("record")
    assert ok(root, tmp_path, "precheck", "--path", "src/signer.py")["warnings"][0].get("suspect") is None

    changed = root.commit("unsorted", **{"src/signer.py": "def sign(m):\n    return m\n"})
    hit = {
        "reasons": [
            {
                "reason": "scope_hit",
                "message": f"src/signer.py changed since {anchor[:12]}",
                "evidence": {"anchor": anchor, "files": ["src/signer.py"]},
            }
        ]
    }
    assert suspect_of(ok(root, tmp_path, "precheck", "--path", "src/signer.py"), "warnings") == [hit]
    assert suspect_of(ok(root, tmp_path, "search", "signer"), "results") == [hit]
    context = ok(root, tmp_path, "context", "--task", "edit the signer", "--path", "src/signer.py")
    assert suspect_of(context, "records") == [hit]
    assert "Suspect: scope_hit" in context["prompt"]

    before = (root.root / RECORD).read_bytes()
    healed = ok(root, tmp_path, "verify", "signer-sorts-keys", "--manual", now="2026-07-12T09:00:00Z")
    assert healed["head"] == changed
    assert [(i["id"], i["action"], i["reasons"]) for i in healed["items"]] == [
        ("signer-sorts-keys", "healed", ["scope_hit"])
    ]
    after = (root.root / RECORD).read_bytes()
    assert after == before.replace(f"anchor: {anchor}".encode(), f"anchor: {changed}".encode()).replace(
        b'verified_at: "2026-07-10"', b'verified_at: "2026-07-12"'
    )
    assert suspect_of(ok(root, tmp_path, "precheck", "--path", "src/signer.py"), "warnings") == [None]
    assert verify_events(root) == [
        ("record_verified", "signer-sorts-keys", {"reasons": ["scope_hit"], "anchor": changed})
    ]


def test_a_failing_check_marks_the_record_stale_and_a_passing_one_heals_it(root: Repo, tmp_path: Path) -> None:
    check = "grep -q sorted src/signer.py"
    out = ok(root, tmp_path, *RISK, "--applies-to", "src/signer.py", "--check", check, "--check-safe")
    assert out["watch"]["envelope"]["check"] == {"run": check, "safe": True}
    root.commit("record")
    preview = run(root, tmp_path, "verify", "--all-safe", "--dry-run")
    assert (preview.exit_code, preview.stdout) == (0, "nothing to verify: no suspect record\n")

    root.commit("unsorted", **{"src/signer.py": "def sign(m):\n    return m\n"})
    preview = run(root, tmp_path, "verify", "--all-safe", "--dry-run")
    assert preview.exit_code == 1
    assert f"signer-sorts-keys  [scope_hit]  {check}" in preview.stdout
    before = (root.root / RECORD).read_bytes()
    failed = run(root, tmp_path, "verify", "--all-safe", "--json")
    assert failed.exit_code == 1
    item = json.loads(failed.stdout)["items"][0]
    assert (item["action"], item["checks"][0]["outcome"]) == ("marked_stale", "fail")
    assert (root.root / RECORD).read_bytes() == before.replace(
        b"    safe: true\n", b"    safe: true\n  status: stale\n"
    )
    stale = {
        "reason": "stale",
        "message": "its check failed at git memzoi verify: fix the claim, supersede it, or verify it again",
        "evidence": {"status": "stale"},
    }
    assert suspect_of(ok(root, tmp_path, "precheck", "--path", "src/signer.py"), "warnings") == [{"reasons": [stale]}]
    assert verify_events(root) == [("record_marked_stale", "signer-sorts-keys", {"reasons": ["scope_hit"]})]

    head = root.commit("sorted again", **{"src/signer.py": "def sign(m):\n    return sorted(m)\n"})
    healed = ok(root, tmp_path, "verify", "signer-sorts-keys")
    assert [i["action"] for i in healed["items"]] == ["healed"]
    text = (root.root / RECORD).read_text()
    assert f"  anchor: {head}\n" in text and "  status: verified\n" in text
    assert suspect_of(ok(root, tmp_path, "precheck", "--path", "src/signer.py"), "warnings") == [None]


def test_scope_ttl_and_anchor_options_shape_the_envelope(root: Repo, tmp_path: Path) -> None:
    first = root.head()
    root.commit("second", **{"README.md": "changed\n"})
    out = ok(
        root, tmp_path, *RISK, "--scope", "src/**", "--scope", "!src/*.md", "--anchor", "HEAD~1", "--ttl-days", "5"
    )
    assert out["watch"]["envelope"] == {
        "anchor": first,
        "scope": ["src/**", "!src/*.md"],
        "verified_at": "2026-07-10",
        "ttl_days": 5,
    }
    root.commit("record")
    # README.md changed since the anchor, but it is outside the scope; five days later the claim has expired
    assert suspect_of(ok(root, tmp_path, "search", "signer"), "results") == [None]
    late = ok(root, tmp_path, "search", "signer", now="2026-07-16T12:00:00Z")
    assert [r["reason"] for r in late["results"][0]["suspect"]["reasons"]] == ["ttl_expired"]


def test_an_empty_repository_or_no_scope_leaves_the_record_valid_and_says_it_is_not_watched(
    repo: Repo, tmp_path: Path
) -> None:
    (tmp_path / "home").mkdir()
    assert run(repo, tmp_path, "init").exit_code == 0
    spec_ids(repo.root)  # records named by their bare slugs (memzoi-spec v0 ids) below
    out = ok(repo, tmp_path, *RISK, "--applies-to", "src/signer.py")
    assert out["watch"] == {
        "watched": False,
        "reason": "no_commits",
        "message": "the repository has no commits yet, so no anchor can be recorded: nothing watches this record",
        "envelope": None,
    }
    assert "memkeep:" not in (repo.root / RECORD).read_text()
    repo.commit("first")
    plain = ok(repo, tmp_path, "propose", "--sensitivity", "repo-safe", "--title", "Plain", "--body", "A fact.")
    assert (plain["watch"]["watched"], plain["watch"]["reason"]) == (False, "no_scope")


@pytest.mark.parametrize(
    ("extra", "code", "line"),
    [
        (("--scope", "src/../x"), "invalid_scope", "--scope 'src/../x': contains a '..' component"),
        (("--anchor", "nosuchbranch"), "unknown_rev", "--anchor 'nosuchbranch' names no commit in this repository"),
        (("--ttl-days", "-3"), "invalid_ttl_days", "--ttl-days must be a whole number of days, 1 to 36500"),
        (("--check-safe",), "check_safe_without_check", "--check-safe marks a --check command as safe"),
        (
            ("--check", "curl -H 'Authorization: token ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8' x"),
            "prohibited_content_detected",
            "the envelope: --check",
        ),
    ],
)
def test_bad_envelope_options_exit_2_with_one_line_and_write_nothing(
    root: Repo, tmp_path: Path, extra: tuple[str, ...], code: str, line: str
) -> None:
    before = repos.tree(root.root)
    result = run(root, tmp_path, *RISK, "--applies-to", "src/signer.py", *extra, "--json")
    assert result.exit_code == 2
    assert len(result.stderr.splitlines()) == 1 and line in result.stderr
    assert json.loads(result.stdout)["error"]["code"] == code
    assert "ghp_" not in result.stdout + result.stderr
    assert repos.tree(root.root) == before


def test_supersede_gives_the_replacement_a_fresh_envelope_keeping_the_target_check(root: Repo, tmp_path: Path) -> None:
    ok(root, tmp_path, *RISK, "--applies-to", "src/signer.py", "--check", "true", "--ttl-days", "30")
    head = root.commit("record")
    out = ok(
        root,
        tmp_path,
        "supersede",
        "signer-sorts-keys",
        "--title",
        "Signer sorts keys twice",
        "--body",
        "It sorts, then checks the order.",
        "--sensitivity",
        "repo-safe",
        "--scope",
        "src/*.py",
    )
    assert out["watch"]["envelope"] == {
        "anchor": head,
        "scope": ["src/*.py"],
        "verified_at": "2026-07-10",
        "ttl_days": 30,
        "check": {"run": "true", "safe": False},
    }


def test_a_supersede_without_scope_keeps_the_replaced_records_scope_as_its_help_says(
    root: Repo, tmp_path: Path
) -> None:
    """A fresh user's walk: supersede's help named an --applies-to option it does not have."""
    ok(root, tmp_path, *RISK, "--applies-to", "src/signer.py", "--scope", "src/**", "--scope", "tests/sign_test.py")
    root.commit("record")
    args = ("--title", "Signer sorts keys twice", "--body", "It sorts twice.", "--sensitivity", "repo-safe")
    out = ok(root, tmp_path, "supersede", "signer-sorts-keys", *args)
    assert out["watch"]["envelope"]["scope"] == ["src/**", "tests/sign_test.py"]  # its scope, not its paths
    helped = " ".join(run(root, tmp_path, "supersede", "--help").stdout.split())
    assert "default: the replaced record's scope, kept with its --ttl-days and --check" in helped
    assert "--applies-to" not in helped
    assert "default: the --applies-to paths" in " ".join(run(root, tmp_path, "propose", "--help").stdout.split())


def test_verify_refuses_what_it_cannot_verify(root: Repo, tmp_path: Path) -> None:
    ok(root, tmp_path, "propose", "--sensitivity", "repo-safe", "--title", "Plain", "--body", "A fact.", "--apply")
    ok(root, tmp_path, *RISK, "--applies-to", "src/signer.py")
    root.commit("records")
    cases = [
        (("verify", "plain"), "not_watched"),
        (("verify", "no-such-record"), "unknown_record"),
        (("verify", "signer-sorts-keys"), "no_check"),
        (("verify",), "bad_usage"),
        (("verify", "signer-sorts-keys", "--all-safe"), "bad_usage"),
        (("verify", "signer-sorts-keys", "--manual", "--dry-run"), "bad_usage"),
    ]
    ok(root, tmp_path, "search", "signer")  # builds the derived index, which verify reads
    before = repos.tree(root.root)
    for args, code in cases:
        result = run(root, tmp_path, *args, "--json")
        assert (result.exit_code, json.loads(result.stdout)["error"]["code"]) == (2, code), args
        assert len(result.stderr.splitlines()) == 1
    assert repos.tree(root.root) == before


def test_verify_of_a_memkeep_entry_names_the_tool_that_verifies_it(root: Repo, tmp_path: Path) -> None:
    root.write("agent-memory/entries/timeout.md", "---\nid: timeout\ntype: fact\nanchor: null\nscope: []\n---\n30 s.\n")
    root.commit("entry")
    result = run(root, tmp_path, "verify", "timeout", "--json")
    assert result.exit_code == 2
    assert json.loads(result.stdout)["error"] == {
        "code": "unknown_record",
        "message": "timeout is an entry of the memkeep store, not a record; verify it with `git memkeep verify timeout`",
        "exit_code": 2,
    }


MANIFEST = """version: memzoi/import-v1
sources:
  - path: README.md
candidates:
  - destination: repo
    reason: durable
    type: risk
    title: Imported signer risk
    body: The signer must sort keys.
    sensitivity: repo-safe
    scope: {kind: repo, paths: [src/signer.py]}
"""


def test_an_import_manifest_candidate_takes_the_same_envelope_options(root: Repo, tmp_path: Path) -> None:
    manifest = tmp_path / "manifest.yml"
    manifest.write_text(MANIFEST + '    watch: {scope: ["src/**"], ttl_days: 14, check: "true", check_safe: true}\n')
    plan = ok(root, tmp_path, "import", "plan", "--from-file", str(manifest))
    assert plan["candidates"][0]["watch"] == {"scope": ["src/**"], "ttl_days": 14, "check": "true", "check_safe": True}
    ok(root, tmp_path, "import", "apply", "--from-file", str(manifest), "--plan-id", plan["plan_id"])
    from git_memzoi.memzoi.proposals import packets

    (path,) = (root.root / ".memzoi/proposals/pending").glob("*.md")
    assert packets.parse(path.stem, path.name, path.read_bytes()).memkeep == {
        "anchor": root.head(),
        "scope": ["src/**"],
        "verified_at": "2026-07-10",
        "ttl_days": 14,
        "check": {"run": "true", "safe": True},
    }
    plain = tmp_path / "plain.yml"
    plain.write_text(MANIFEST)
    assert "watch" not in ok(root, tmp_path, "import", "plan", "--from-file", str(plain))["candidates"][0]

    manifest.write_text(MANIFEST + "    watch: {ttl_days: -1}\n")
    bad = run(root, tmp_path, "import", "plan", "--from-file", str(manifest))
    assert (bad.exit_code, bad.stderr) == (
        2,
        "git-memzoi: error: candidates[0].watch.ttl_days: not valid (invalid_ttl_days)\n",
    )
