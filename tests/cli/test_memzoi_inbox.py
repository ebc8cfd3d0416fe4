"""``git memzoi propose``, ``proposals``, ``approve``, ``reject`` and ``apply`` through the command line.

CliRunner on real repositories with the clock pinned by ``MEMZOI_NOW`` and the user config by ``MEMZOI_HOME``:
exact ``--json`` objects, exit codes, the approval policy's four layers, and the privacy rule (a proposal that
is not repo-safe never reaches a git-visible path, and a refusal never echoes its title or body).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from blake3 import blake3
from click.testing import Result

from git_memzoi.memzoi.proposals import review
from tests.support import repos
from tests.support.repos import Repo, spec_ids

NOW = "2026-07-10T12:00:00Z"
TITLE = "Use pnpm for installs"
BODY = "Install dependencies with pnpm, never npm."
PNPM_ID = "prop_019f4be6-1e00-70e5-84bf-14b59269a9d9"  # the decision below, proposed by cli at NOW
SECRET_TITLE = "Opal vault token"
# sensitive, not a credential: a credential is refused before sensitivity is looked at, private memory included
SECRET_BODY = "SENTINEL opal notes live in the staging vault."
MANUAL = '[workflow]\nproposal_approval = "manual" # or "auto"\n'
SLUG_IDS = '[records]\nids = "slug"\n'  # spec_ids() wrote it; a test that rewrites the file keeps it
AUTO = '[workflow]\nproposal_approval = "auto"\n'
DECISION = ("propose", "--type", "decision", "--sensitivity", "repo-safe", "--title", TITLE, "--body", BODY)
SECRET = ("propose", "--type", "fact", "--sensitivity", "secret", "--title", SECRET_TITLE, "--body", SECRET_BODY)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    folder = tmp_path / "memzoi-home"
    folder.mkdir()
    return folder


@pytest.fixture
def root(repo: Repo, home: Path) -> Repo:
    assert run(repo, home, "init").exit_code == 0
    spec_ids(repo.root)  # records named by their bare slugs (memzoi-spec v0 ids) below
    repo.commit("memzoi init")
    return repo


def run(repo: Repo, home: Path, *args: str) -> Result:
    """Invoke ``git memzoi -C <repo> ...`` in-process; never an internal error."""
    return repos.run(repo, *args, env={"MEMZOI_NOW": NOW, "MEMZOI_HOME": str(home)}, prog_name="git-memzoi")


def run_json(repo: Repo, home: Path, *args: str, code: int = 0) -> Any:
    result = run(repo, home, *args, "--json")
    assert result.exit_code == code, (result.stdout, result.stderr)
    return json.loads(result.stdout)


def tree(repo: Repo) -> dict[str, bytes]:
    return {
        p.relative_to(repo.root).as_posix(): p.read_bytes()
        for p in sorted(repo.root.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(repo.root).parts and p.name != "lifecycle.lock"
    }


def git_status(repo: Repo) -> str:
    return repo.git("status", "--porcelain", "--untracked-files=all")


def state(**changes: Any) -> dict[str, Any]:
    """The ``proposal`` object of the decision draft, as first proposed under the default policy."""
    base = {
        "id": PNPM_ID,
        "status": "approved",
        "sensitivity": "repo-safe",
        "type": "decision",
        "lane": "semantic",
        "scope_kind": "repo",
        "visibility": "repo",
        "source_kind": None,
        "file_id": PNPM_ID,
        "location": "pending",
        "content_hash": blake3(BODY.encode()).hexdigest(),
        "proposed_by": "cli",
        "created_at": NOW,
        "updated_at": NOW,
        "approval_mode": "auto",
        "approval_source": "default",
        "approved_by": "cli",
        "approved_at": NOW,
        "rejected_by": None,
        "rejected_at": None,
        "reason": None,
        "applied_by": None,
        "applied_at": None,
        "record_id": None,
        "packet_missing": False,
        "repo_safe": True,
    }
    return {**base, **changes}


# --------------------------------------------------------------------------------------------- propose


def test_propose_auto_approves_by_default(root: Repo, home: Path) -> None:
    out = run_json(root, home, *DECISION)
    assert out == {
        "ok": True,
        "proposal": state(),
        "created": True,
        "policy": {"mode": "auto", "source": "default", "path": None},
        "auto_approved": True,
        "applied": None,
        "warnings": [],
        "watch": {
            "watched": False,
            "reason": "no_scope",
            "message": "no --scope or --applies-to path: no change in the repository can flag this record",
            "envelope": None,
        },
        "next": f"git memzoi apply {PNPM_ID}",  # approved is not written yet: the command that writes it
    }
    assert git_status(root) == f"?? .memzoi/proposals/pending/{PNPM_ID}.md"
    assert not list((root.root / ".memzoi/records").iterdir())
    text = run(root, home, *DECISION[:-4], "--title", "Second", "--body", "Another.")
    assert text.exit_code == 0
    assert text.stdout.startswith("proposed prop_019f4be6-1e00-7")
    first, second = text.stdout.splitlines()
    assert first.endswith(": approved (approval auto from default)")
    assert second == f"next: git memzoi apply {first.split()[1].rstrip(':')}"


@pytest.mark.parametrize(
    ("user", "repo_cfg", "flag", "status", "source"),
    [
        (None, None, None, "approved", "default"),
        (MANUAL, None, None, "pending", "user"),
        (MANUAL, AUTO, None, "approved", "repo"),
        (AUTO, MANUAL, None, "pending", "repo"),
        (MANUAL, AUTO, "--manual", "pending", "override"),
        (None, MANUAL, "--auto-approve", "approved", "override"),
        (MANUAL, MANUAL, "--auto-approve", "approved", "override"),
    ],
)
def test_policy_layers(
    root: Repo, home: Path, user: str | None, repo_cfg: str | None, flag: str | None, status: str, source: str
) -> None:
    if user is not None:
        (home / "config.toml").write_text(user)
    if repo_cfg is not None:
        root.write(".memzoi/config.toml", repo_cfg)
    out = run_json(root, home, *DECISION, *([flag] if flag else []))
    path = {"user": str(home / "config.toml"), "repo": str(root.root / ".memzoi/config.toml")}.get(source)
    mode = "pending" if status == "pending" else "approved"
    assert (out["proposal"]["status"], out["policy"]) == (
        mode,
        {"mode": "manual" if status == "pending" else "auto", "source": source, "path": path},
    )
    assert out["proposal"]["approval_source"] == source and out["applied"] is None


def test_propose_apply_end_to_end(root: Repo, home: Path) -> None:
    root.write(".memzoi/config.toml", MANUAL + SLUG_IDS)  # --apply approves whatever the policy says
    out = run_json(root, home, *DECISION, "--source-kind", "url", "--source-ref", "https://example.com/pr/7", "--apply")
    pid = out["proposal"]["id"]
    assert out["proposal"]["status"] == "applied" and out["proposal"]["record_id"] == "use-pnpm-for-installs"
    assert out["applied"] == {
        "record_id": "use-pnpm-for-installs",
        "file_id": pid,
        "action": "create",
        "resolved_path": f".memzoi/proposals/resolved/applied/{pid}.md",
        "written": [
            ".memzoi/records/use-pnpm-for-installs.md",
            f".memzoi/proposals/resolved/applied/{pid}.md",
            f".memzoi/proposals/pending/{pid}.md",
        ],
        "replayed": False,
    }
    record = (root.root / ".memzoi/records/use-pnpm-for-installs.md").read_text()
    assert f"proposal_id: {pid}\n" in record and "source: url\n" in record and "status: active\n" in record
    assert record.endswith(f"# {TITLE}\n\n{BODY}\n")
    assert git_status(root).splitlines() == [
        "M .memzoi/config.toml",  # committed with spec_ids(), now with the manual policy too
        f"?? .memzoi/proposals/resolved/applied/{pid}.md",
        "?? .memzoi/records/use-pnpm-for-installs.md",
    ]
    listed = run_json(root, home, "proposals", "list", "--status", "applied")
    assert [(p["id"], p["title"], p["record_id"]) for p in listed["proposals"]] == [
        (pid, TITLE, "use-pnpm-for-installs")
    ]


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (("--apply", "--manual"), "conflicting_options"),
        (("--manual", "--auto-approve"), "conflicting_options"),
        (("--type", "opinion"), "invalid_type"),
        (("--scope-kind", "galaxy"), "invalid_scope_kind"),
        (("--visibility", "hidden"), "invalid_visibility"),
        (("--sensitivity", "safe"), "invalid_sensitivity"),
        (("--title", " "), "empty_title"),
        (("--body", ""), "empty_body"),
        (("--source-kind", "path", "--source-ref", "../../etc/passwd"), "invalid_proposal"),
        (("--actor", ""), "empty_actor"),
    ],
)
def test_bad_input_exits_2_and_writes_nothing(root: Repo, home: Path, args: tuple[str, ...], code: str) -> None:
    before = tree(root)
    result = run(root, home, *DECISION, *args, "--json")
    assert result.exit_code == 2, result.output
    error = json.loads(result.stdout)["error"]
    assert (error["code"], error["exit_code"]) == (code, 2)
    assert len(result.stderr.strip().splitlines()) == 1 and result.stderr.startswith("git-memzoi: error: ")
    assert tree(root) == before and git_status(root) == ""


def test_malformed_config_names_the_file(root: Repo, home: Path) -> None:
    (home / "config.toml").write_text("[workflow]\nproposal_approval = 'maybe'\n")
    before = tree(root)
    result = run(root, home, *DECISION)
    assert result.exit_code == 2
    assert result.stderr == (
        f"git-memzoi: error: {home / 'config.toml'}: [workflow] proposal_approval must be "
        '"auto" or "manual", not \'maybe\'\n'
    )
    root.write(".memzoi/config.toml", "[workflow]\nmode = 'auto'\n")
    (home / "config.toml").unlink()
    result = run(root, home, *DECISION, "--json")
    assert json.loads(result.stdout)["error"]["code"] == "invalid_config"
    assert str(root.root / ".memzoi/config.toml") in result.stderr and "unknown key 'mode'" in result.stderr
    assert tree(root) == {**before, ".memzoi/config.toml": b"[workflow]\nmode = 'auto'\n"}


# --------------------------------------------------------------------------------------------- transitions


def test_transitions_through_the_cli(root: Repo, home: Path) -> None:
    pid = run_json(root, home, *DECISION, "--manual")["proposal"]["id"]
    refused = run_json(root, home, "apply", pid, code=2)
    assert refused["error"]["code"] == "proposal_not_approved"
    first = run_json(root, home, "approve", pid, "--actor", "reviewer")
    assert (first["changed"], first["proposal"]["status"], first["proposal"]["approved_by"]) == (
        True,
        "approved",
        "reviewer",
    )
    again = run(root, home, "approve", pid)
    assert (again.exit_code, again.stdout) == (0, f"{pid} is already approved; nothing changed\n")
    applied = run(root, home, "apply", pid)
    assert (applied.exit_code, applied.stdout) == (0, f"applied {pid} as record use-pnpm-for-installs\n")
    replay = run_json(root, home, "apply", pid)
    assert (replay["changed"], replay["applied"], replay["proposal"]["status"]) == (False, None, "applied")
    for args in (("approve", pid), ("reject", pid, "--reason", "late")):
        error = run_json(root, home, *args, code=2)["error"]
        assert error["code"] == "proposal_applied"


def test_reject_is_terminal_and_needs_a_reason(root: Repo, home: Path) -> None:
    pid = run_json(root, home, *DECISION)["proposal"]["id"]
    assert run_json(root, home, "reject", pid, code=2)["error"]["code"] == "missing_reason"
    out = run_json(root, home, "reject", pid, "--reason", "superseded by the uv decision")
    assert (out["changed"], out["proposal"]["status"], out["proposal"]["reason"]) == (
        True,
        "rejected",
        "superseded by the uv decision",
    )
    again = run_json(root, home, "reject", pid, "--reason", "other")
    assert (again["changed"], again["proposal"]["reason"]) == (False, "superseded by the uv decision")
    assert git_status(root) == f"?? .memzoi/proposals/resolved/rejected/{pid}.md"
    for verb in ("approve", "apply"):
        assert run_json(root, home, verb, pid, code=2)["error"]["code"] == "proposal_rejected"


@pytest.mark.parametrize("bad", ["../../etc/passwd", "prop_nope", "mem_test_one", PNPM_ID])
def test_wrong_ids_exit_2(root: Repo, home: Path, bad: str) -> None:
    # one id scheme: neither a proposal nor a packet is unknown_proposal, one line, the id never echoed
    for args in (("approve", bad), ("apply", bad), ("reject", bad, "--reason", "x"), ("proposals", "show", bad)):
        error = run_json(root, home, *args, code=2)["error"]
        assert error == {"code": "unknown_proposal", "message": review.NOT_FOUND, "exit_code": 2}
        text = run(root, home, *args)
        assert (text.exit_code, text.stderr) == (2, f"git-memzoi: error: {review.NOT_FOUND}\n")


def test_list_show_and_bulk_apply(root: Repo, home: Path) -> None:
    a = run_json(root, home, *DECISION)["proposal"]["id"]
    b = run_json(root, home, *DECISION[:-4], "--title", "Pin Node 22", "--body", "Use Node 22 LTS.")["proposal"]["id"]
    c = run_json(root, home, *DECISION[:-4], "--title", "Later", "--body", "Maybe.", "--manual")["proposal"]["id"]
    listed = run(root, home, "proposals", "list")
    assert listed.stdout.splitlines() == sorted(
        [
            f"{a}  approved  proposal    decision       {NOW}  {TITLE}",
            f"{b}  approved  proposal    decision       {NOW}  Pin Node 22",
            f"{c}  pending   proposal    decision       {NOW}  Later",
        ]
    )
    shown = run_json(root, home, "proposals", "show", a)
    assert (shown["path"], shown["withheld"], shown["packet"]["title"], shown["packet"]["body"]) == (
        f".memzoi/proposals/pending/{a}.md",
        False,
        TITLE,
        BODY,
    )
    assert run_json(root, home, "proposals", "apply", code=2)["error"]["code"] == "missing_all_approved"
    bulk = run_json(root, home, "proposals", "apply", "--all-approved", "--actor", "reviewer")
    assert bulk["ok"] is True and bulk["failed"] == []
    assert sorted((x["proposal_id"], x["record_id"]) for x in bulk["applied"]) == sorted(
        [(a, "use-pnpm-for-installs"), (b, "pin-node-22")]
    )
    assert [p["id"] for p in run_json(root, home, "proposals", "list")["proposals"]] == [c]
    assert run(root, home, "proposals", "list", "--status", "approved").stdout == "no approved proposals\n"
    assert run_json(root, home, "proposals", "list", "--status", "closed", code=2)["error"]["code"] == "invalid_status"


# --------------------------------------------------------------------------------------------- privacy


def test_non_repo_safe_proposal_stays_private_and_is_never_echoed(root: Repo, home: Path) -> None:
    out = run_json(root, home, *SECRET)
    pid = out["proposal"]["id"]
    assert (out["proposal"]["status"], out["proposal"]["location"], out["auto_approved"]) == (
        "pending",
        "private",
        False,
    )
    assert git_status(root) == ""
    envelope = {
        "ok": False,
        "error": {
            "code": "repo_sensitivity_required",
            "operation": "apply",
            "classification": "secret",
            "sensitivity": "secret",
            "message": "canonical repo apply requires sensitivity repo-safe; got secret; secret proposals must not "
            "become repo-shared memory",
            "next_step": "secret proposals must not become repo-shared memory",
        },
    }
    outputs = []
    for args, operation in ((("apply", pid), "apply"), (("approve", pid), "approve"), (SECRET[1:], "propose_apply")):
        command = ("propose", *args, "--apply") if operation == "propose_apply" else args
        result = run(root, home, *command, "--json")
        assert result.exit_code == 1
        expected = json.loads(json.dumps(envelope).replace('"apply"', json.dumps(operation)))
        assert json.loads(result.stdout) == expected
        outputs.append(result.stdout + result.stderr)
    listed = run(root, home, "proposals", "list")
    shown = run_json(root, home, "proposals", "show", pid)
    assert (shown["packet"], shown["path"], shown["withheld"]) == (None, None, True)
    assert listed.stdout == f"{pid}  pending   proposal    fact           {NOW}  [content withheld: secret]\n"
    rejected = run(root, home, "reject", pid, "--reason", "belongs in local memory")
    assert rejected.exit_code == 0
    outputs += [listed.stdout, json.dumps(shown), rejected.stdout + rejected.stderr]
    for text in outputs:
        assert SECRET_TITLE not in text and "SENTINEL" not in text
    assert git_status(root) == ""
    assert (root.root / f".git/memzoi/local/proposals/{pid}.md").is_file()
    assert pid not in root.git("status", "--porcelain", "--ignored", "-uall")  # git never lists its own folder


def test_private_visibility_is_never_written_as_repo_memory(root: Repo, home: Path) -> None:
    before = tree(root)
    applied = run_json(root, home, *DECISION, "--visibility", "private", "--apply", code=2)
    assert applied["error"]["code"] == "private_visibility"
    assert tree(root) == before  # nothing written: no record, no packet, no state
    kept = run_json(root, home, *DECISION, "--visibility", "private")
    assert kept["proposal"]["status"] == "pending" and kept["proposal"]["location"] == "private"
    assert "visibility private: the proposal is kept privately and can never be applied to the repo" in kept["warnings"]
    assert git_status(root) == ""  # nothing git-visible
    for verb in ("approve", "apply"):
        refused = run_json(root, home, verb, kept["proposal"]["id"], code=2)
        assert refused["error"]["code"] == "private_visibility"
    assert not (root.root / ".memzoi/records/use-pnpm-for-installs.md").exists()


def test_show_puts_the_envelope_and_a_safe_check_before_the_reviewer(root: Repo, home: Path) -> None:
    """Applying a proposal writes its earned envelope too, and a check marked safe is a command ``verify
    --all-safe`` runs: ``proposals show`` names it (text and JSON), so an agent's command is seen before it is
    approved (a fresh user's walk: the check was hidden, then ran)."""
    root.commit("code", **{"src/db.py": "x = 1\n"})
    anchor = root.head()
    proposed = run_json(
        root, home, "propose", "--type", "risk", "--title", "Fixture data", "--body", "Tests need fixture data.",
        "--sensitivity", "repo-safe", "--applies-to", "src/db.py", "--check", "make fixtures-check",
        "--check-safe", "--ttl-days", "30", "--valid-from", "2026-01-01", "--manual",
    )  # fmt: skip
    pid = proposed["proposal"]["id"]
    text = run(root, home, "proposals", "show", pid)
    assert text.exit_code == 0, text.stderr
    assert text.stdout.splitlines()[5:10] == [
        f"  anchor: {anchor}",
        "  ttl_days: 30",
        "  watched scope: src/db.py",
        "  check: make fixtures-check  (safe: `git memzoi verify --all-safe` runs it)",
        "  valid_from: 2026-01-01",
    ]
    packet = run_json(root, home, "proposals", "show", pid)["packet"]
    assert packet["memkeep"]["check"] == {"run": "make fixtures-check", "safe": True}
    listed = run(root, home, "review").stdout.splitlines()
    assert listed[0].endswith("Fixture data  [safe check, run by verify --all-safe: make fixtures-check]")
    assert run_json(root, home, "review")["proposals"][0]["safe_check"] == "make fixtures-check"
    approved = run(root, home, "approve", pid).stdout.splitlines()
    assert approved == [
        f"approved {pid}",
        "  its check is marked safe: `git memzoi verify --all-safe` runs it: make fixtures-check",
    ]
    assert (packet["validity"], packet["relations"]) == ({"valid_from": "2026-01-01"}, None)


def test_a_long_body_gets_a_summary_for_its_description(root: Repo, home: Path) -> None:
    """``description`` (written when none is given) is the body's first line cut to 200 characters at a word:
    a one-paragraph body of 13,889 characters was copied whole, so ``show --projection metadata`` printed it."""
    body = " ".join(f"word{i}" for i in range(400))
    short = run_json(
        root,
        home,
        "propose",
        "--title",
        "Short",
        "--body",
        "One line.\n\nMore.",
        "--sensitivity",
        "repo-safe",
        "--apply",
    )
    long = run_json(root, home, "propose", "--title", "Long", "--body", body, "--sensitivity", "repo-safe", "--apply")
    shown = {
        key: run_json(root, home, "show", made["applied"]["record_id"], "--projection", "metadata")["fields"][
            "description"
        ]
        for key, made in (("short", short), ("long", long))
    }
    assert shown["short"] == "One line."
    assert shown["long"] == " ".join(f"word{i}" for i in range(29)) + "…"
    assert len(shown["long"]) <= 200


def test_a_body_opening_with_a_heading_gets_its_first_sentence_for_its_description(root: Repo, home: Path) -> None:
    """The written description skips Markdown section headings: a body opening with ``## Context`` had the
    description ``## Context``. A body of headings alone gives the first one's text; ``#pnpm`` is no heading."""
    bodies = {
        "sections": "## Context\n\nUsers asked for notes.\n\n## Decision\n\nEvery release gets an entry.",
        "headings": "## Only headings\n\n### Sub",
        "hashtag": "#pnpm is our installer.",
    }
    shown = {}
    for key, body in bodies.items():
        made = run_json(root, home, "propose", "--title", key, "--body", body, "--sensitivity", "repo-safe", "--apply")
        fields = run_json(root, home, "show", made["applied"]["record_id"], "--projection", "metadata")["fields"]
        shown[key] = fields["description"]
    assert shown == {
        "sections": "Users asked for notes.",
        "headings": "Only headings",
        "hashtag": "#pnpm is our installer.",
    }
