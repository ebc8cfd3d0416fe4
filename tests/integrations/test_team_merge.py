"""Memory at team scale (issue 16), over real repositories: derived indexes merge without a human in both orders,
through rebase, cherry-pick and an octopus merge; post-merge regenerates what a merge without the driver left;
records made on two branches never share an id, and the claims they disagree on surface as review items
(``find_conflicts``, ``doctor``, the CI annotations); a fresh clone and a branch made before the first record
work like any other checkout."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from git_memzoi.integrations import derived_merge, merge_config
from git_memzoi.memkeep import api
from git_memzoi.memzoi import Layout, Workspace, conflicts
from tests.support.repos import Repo, entry_text, memkeep, new_repo, ok_json, run

ENTRIES = "agent-memory/entries"
INDEX = "agent-memory/INDEX.md"


def _entry(repo: Repo, entry_id: str, claim: str | None = None, anchor: str | None = None) -> None:
    text = entry_text(entry_id, anchor=anchor or repo.git("rev-list", "--max-parents=0", "HEAD"), scope=["src/app.py"])
    repo.write(f"{ENTRIES}/{entry_id}.md", text.replace("A claim that holds.", claim or f"Claim {entry_id}."))


def _index(repo: Repo) -> None:
    assert memkeep("-C", str(repo.root), "index").exit_code == 0


def _drift(repo: Repo) -> str:
    loaded = api.load_store(api.locate_store(repo.root, repo.root))
    return api.index_drift(loaded.entries, (repo.root / INDEX).read_text())


def _base(repo: Repo, *, driver: bool = True) -> None:
    """A commit of code, then memzoi initialised, a memkeep store of three entries and its index."""
    from git_memzoi.memzoi import workspace

    repo.commit("code", **{"src/app.py": "print('hi')\n"})
    workspace.init(repo.root)
    for entry_id in ("base-1", "base-2", "base-3"):
        _entry(repo, entry_id)
    _index(repo)
    if driver:
        merge_config.install(repo.root)
    repo.commit("memory")


def _branch(repo: Repo, name: str, *entry_ids: str, reindex: bool = True) -> None:
    repo.git("checkout", "-q", "-b", name, "main")
    for entry_id in entry_ids:
        _entry(repo, entry_id)
    if reindex:
        _index(repo)
    repo.commit(name)
    repo.git("checkout", "-q", "main")


def _merge(repo: Repo, *refs: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", "merge", "--no-edit", *refs], cwd=repo.root, capture_output=True, text=True, check=False
    )


def _propose(repo: Repo, title: str, body: str, *extra: str) -> str:
    data = ok_json(repo, "propose", "--title", title, "--body", body, "--sensitivity", "repo-safe", "--apply", *extra)
    return str(data["applied"]["record_id"])


def _conflicts(repo: Repo) -> list[conflicts.Conflict]:
    return conflicts.find_conflicts(Workspace(Layout(repo.root)))


# ------------------------------------------------------------------------------------------------ derived files


@pytest.mark.parametrize("order", [("a", "b"), ("b", "a")])
def test_index_merges_without_a_conflict_in_either_order(repo: Repo, order: tuple[str, str]) -> None:
    _base(repo)
    _branch(repo, "a", "base-1a", "base-2a")  # lines next to b's: git's text merge conflicts on them
    _branch(repo, "b", "base-1b", "base-2b")
    for ref in order:
        merged = _merge(repo, ref)
        assert merged.returncode == 0, merged.stdout + merged.stderr
    rows = (repo.root / INDEX).read_text().splitlines()
    ids = [line.split(" | ")[0] for line in rows if " | " in line and not line.startswith("<!--")]
    assert ids == ["base-1", "base-1a", "base-1b", "base-2", "base-2a", "base-2b", "base-3"]
    assert _drift(repo) == ""
    assert repo.git("status", "--porcelain") == ""


def test_a_subfolder_stores_index_is_marked_and_merges_without_a_conflict(repo: Repo) -> None:
    """``svc/agent-memory/`` (a store in a subfolder) gets its own ``.gitattributes`` line at install, so two
    branches adding entries there merge as the root's store does (only the root's INDEX.md was once marked)."""
    sub = "svc/agent-memory"
    base = repo.commit("code", **{"svc/app.py": "x = 1\n"})

    def add(entry_id: str) -> None:
        repo.write(f"{sub}/entries/{entry_id}.md", entry_text(entry_id, anchor=base, scope=["svc/app.py"]))
        assert memkeep("-C", str(repo.root / "svc"), "index").exit_code == 0

    for entry_id in ("s-1", "s-2"):
        add(entry_id)
    repo.commit("store")
    assert merge_config.attribute_lines(repo.root) == (
        "/agent-memory/INDEX.md merge=memzoi",
        f"/{sub}/INDEX.md merge=memzoi",
        "/.memzoi/index.md merge=memzoi",
        "/.memzoi/records/** merge=memzoi",
    )
    merge_config.install(repo.root)
    repo.commit("driver")
    for name, entry_id in (("a", "s-1a"), ("b", "s-1b")):
        repo.git("checkout", "-q", "-b", name, "main")
        add(entry_id)
        repo.commit(name)
        repo.git("checkout", "-q", "main")
    for ref in ("a", "b"):
        merged = _merge(repo, ref)
        assert merged.returncode == 0, merged.stdout + merged.stderr
    rows = (repo.root / sub / "INDEX.md").read_text().splitlines()
    assert [line.split(" | ")[0] for line in rows if " | " in line and not line.startswith("<!--")] == [
        "s-1",
        "s-1a",
        "s-1b",
        "s-2",
    ]
    assert repo.git("status", "--porcelain") == ""


def test_without_the_driver_the_same_merge_stops_for_a_human(repo: Repo) -> None:
    _base(repo, driver=False)
    _branch(repo, "a", "base-1a")
    _branch(repo, "b", "base-1b")
    assert _merge(repo, "a").returncode == 0
    stopped = _merge(repo, "b")
    assert stopped.returncode == 1 and f"CONFLICT (content): Merge conflict in {INDEX}" in stopped.stdout


def test_rebase_and_cherry_pick_use_the_driver(repo: Repo) -> None:
    _base(repo)
    _branch(repo, "a", "base-1a")
    _branch(repo, "b", "base-1b")
    _branch(repo, "c", "base-1c")
    assert _merge(repo, "a").returncode == 0
    repo.git("checkout", "-q", "b")
    repo.git("rebase", "-q", "main")
    assert _drift(repo) == "" and (repo.root / f"{ENTRIES}/base-1a.md").is_file()
    repo.git("checkout", "-q", "main")
    repo.git("cherry-pick", "c")
    assert _drift(repo) == "" and "base-1c | fact" in (repo.root / INDEX).read_text()


def test_an_octopus_merge_of_records_and_entries_needs_no_human(repo: Repo) -> None:
    # git's octopus strategy runs no merge driver: the index lines of its branches must not be neighbours
    # (docs/integrations.md "Teams"); the records, each its own file with a merge-safe id, always merge
    _base(repo)
    made = {}
    for name, entry_id in (("a", "aaa-top"), ("b", "base-2m"), ("c", "zzz-end")):
        repo.git("checkout", "-q", "-b", name, "main")
        made[name] = _propose(repo, "Use one lockfile", f"Branch {name} keeps one lockfile.")
        _entry(repo, entry_id)
        _index(repo)
        repo.commit(name)
        repo.git("checkout", "-q", "main")
    merged = _merge(repo, "a", "b", "c")
    assert merged.returncode == 0, merged.stdout + merged.stderr
    assert len(set(made.values())) == 3 and all(
        (repo.root / f".memzoi/records/{r}.md").is_file() for r in made.values()
    )
    assert _drift(repo) == ""
    assert [c.kind for c in _conflicts(repo)] == ["diverging_claims"]  # three bodies for one title


def test_post_merge_regenerates_an_index_the_merge_left_behind(repo: Repo) -> None:
    _base(repo)
    assert run(repo, "hooks", "install").exit_code == 0
    merge_config.uninstall(repo.root)  # a clone without the driver: .gitattributes names one git does not know
    repo.commit("attributes")
    _branch(repo, "a", "aaa-new")
    _branch(repo, "b", "zzz-new", reindex=False)  # an agent forgot `git memkeep index`
    repo.git("checkout", "-q", "b")
    lint = memkeep("-C", str(repo.root), "lint")
    assert (
        lint.exit_code == 1
        and (
            f"{INDEX}: index: index_drift: INDEX.md does not match what `git memkeep index` writes (not listed or "
            "changed: zzz-new); run git memkeep lint --fix"
        )
        in lint.stdout
    )
    repo.git("checkout", "-q", "main")
    assert _merge(repo, "a").returncode == 0
    merged = _merge(repo, "b")
    assert merged.returncode == 0
    said = f"memkeep: regenerated {INDEX} from the merged entries (it did not match them); commit it"
    assert said in merged.stderr
    assert _drift(repo) == "" and repo.git("status", "--porcelain") == f"M {INDEX}"


def test_post_merge_leaves_the_index_alone_while_entries_have_uncommitted_changes(repo: Repo) -> None:
    # the drift is then the user's work in progress: an index listing an uncommitted entry, and "commit it",
    # would commit a line for a file no commit holds (a fresh user's walk)
    _base(repo)
    assert run(repo, "hooks", "install").exit_code == 0
    _branch(repo, "a", "aaa-new")
    repo.git("checkout", "-q", "main")
    _entry(repo, "wip-draft")  # written, not indexed, not committed
    before = (repo.root / INDEX).read_bytes()
    merged = _merge(repo, "a")
    assert merged.returncode == 0, merged.stdout + merged.stderr
    assert "regenerated" not in merged.stderr
    assert (repo.root / INDEX).read_bytes() != before  # the merge itself brought aaa-new's committed line
    assert "wip-draft" not in (repo.root / INDEX).read_text()
    assert repo.git("status", "--porcelain") == f"?? {ENTRIES}/wip-draft.md"


def test_the_driver_merges_index_lines_three_ways() -> None:
    header = api.INDEX_HEADER
    base = header + "a | fact | verified | A.\nb | fact | verified | B.\n"
    ours = header + "a | fact | verified | A.\nb | fact | stale | B.\nc | fact | verified | C.\n"
    theirs = header + "b | fact | verified | B.\nd | rule | verified | D.\n"  # removed a, added d
    assert derived_merge.merge_index_lines(base, ours, theirs) == (
        header + "b | fact | stale | B.\nc | fact | verified | C.\nd | rule | verified | D.\n"
    )
    assert derived_merge.merge_index_lines("", "", "") == header


def test_an_entry_both_sides_changed_merges_cell_by_cell() -> None:
    """One side re-verified the entry's status, the other reworded its claim: the entry merges cleanly, so its index
    line is the merged entry's, never both lines (a fresh user's walk found both committed)."""
    header = api.INDEX_HEADER
    base = header + "eps | fact | verified | Eps claim.\nz | fact | verified | Z.\n"
    ours = header + "eps | fact | verified | Eps claim, reworded.\nz | fact | verified | Z.\n"
    theirs = header + "eps | fact | observed | Eps claim.\nz | fact | stale | Z.\n"
    assert derived_merge.merge_index_lines(base, ours, theirs) == (
        header + "eps | fact | observed | Eps claim, reworded.\nz | fact | stale | Z.\n"
    )
    # the same cell changed two ways: the entry conflicts too, both lines wait for post-merge
    clash = header + "eps | fact | verified | Eps, otherwise.\nz | fact | verified | Z.\n"
    assert derived_merge.merge_index_lines(base, ours, clash) == (
        header
        + "eps | fact | verified | Eps claim, reworded.\neps | fact | verified | Eps, otherwise.\n"
        + "z | fact | verified | Z.\n"
    )


@pytest.mark.parametrize("how", ["merge", "rebase"])
def test_a_status_change_and_a_reworded_claim_merge_into_one_index_line(repo: Repo, how: str) -> None:
    _base(repo)
    repo.git("checkout", "-q", "-b", "theirs", "main")
    path = repo.root / ENTRIES / "base-2.md"
    path.write_text(path.read_text().replace("status: verified", "status: observed"))
    _index(repo)
    repo.commit("theirs: observed")
    repo.git("checkout", "-q", "main")
    path.write_text(path.read_text().replace("Claim base-2.", "Claim base-2, reworded."))
    _index(repo)
    repo.commit("ours: reworded")
    if how == "merge":
        done = _merge(repo, "theirs")
    else:
        done = subprocess.run(["git", "rebase", "-q", "theirs"], cwd=repo.root, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert repo.git("status", "--porcelain") == ""
    committed = repo.git("show", f"HEAD:{INDEX}")
    assert [line for line in committed.splitlines() if line.startswith("base-2 ")] == [
        "base-2 | fact | observed | Claim base-2, reworded."
    ]
    assert _drift(repo) == ""


def test_the_driver_command_writes_over_current_and_exits_0(tmp_path: Path) -> None:
    header = api.INDEX_HEADER
    files = {name: tmp_path / name for name in ("O", "A", "B")}
    files["O"].write_text(header)
    files["A"].write_text(header + "x | fact | verified | X.\n")
    files["B"].write_text(header + "y | fact | verified | Y.\n")
    args = [str(files[n]) for n in ("O", "A", "B")]
    done = subprocess.run([sys.executable, "-m", "git_memzoi", "merge-driver", *args, INDEX], check=False)
    assert done.returncode == 0
    assert files["A"].read_text() == header + "x | fact | verified | X.\ny | fact | verified | Y.\n"
    files["A"].write_text("edited by hand\n")
    fixed = subprocess.run([sys.executable, "-m", "git_memzoi", "merge-driver", *args, ".memzoi/index.md"], check=False)
    from git_memzoi.memzoi import layout

    assert fixed.returncode == 0 and files["A"].read_text() == layout.INDEX_TEXT
    files["A"].write_text("ours")
    unknown = memkeep("merge-driver", *args, "docs/notes.md")  # not a derived file: a conflict for a human
    assert unknown.exit_code == 1
    assert files["A"].read_text() == f"<<<<<<< ours\nours\n=======\n{files['B'].read_text()}>>>>>>> theirs\n"


def test_hooks_install_registers_the_driver_once(repo: Repo) -> None:
    repo.commit("empty")
    repo.write(".gitattributes", "*.png binary")
    repo.git("config", "user.signingkey", "kept")
    first = ok_json(repo, "hooks", "install")
    command = merge_config.driver_command()
    assert first["merge_driver"] == [
        f"registered merge driver memzoi in the repository's git config: {command}",
        "added /agent-memory/INDEX.md, /.memzoi/index.md, /.memzoi/records/** to .gitattributes (merge=memzoi): "
        "commit it so every clone merges them the same way",
    ]
    assert (repo.root / ".gitattributes").read_text() == (
        "*.png binary\n" + merge_config.ATTRIBUTES_COMMENT + "\n/agent-memory/INDEX.md merge=memzoi\n"
        "/.memzoi/index.md merge=memzoi\n/.memzoi/records/** merge=memzoi\n"
    )
    assert repo.git("config", "merge.memzoi.driver") == command
    assert repo.git("check-attr", "merge", INDEX) == f"{INDEX}: merge: memzoi"
    again = ok_json(repo, "hooks", "install")
    assert again["merge_driver"] == [
        "merge driver memzoi unchanged in the repository's git config",
        ".gitattributes already marks the memory indexes and records for the merge driver",
    ]
    gone = ok_json(repo, "hooks", "uninstall")
    assert gone["merge_driver"] == ["removed merge driver memzoi from the repository's git config"]
    assert repo.git("config", "merge.memzoi.driver", check=False) == ""
    assert repo.git("config", "user.signingkey") == "kept"


def test_uninstall_keeping_the_merge_driver_removes_the_shims_alone(repo: Repo) -> None:
    """What the hints say when pre-commit, husky or lefthook runs memzoi: plain uninstall also removed the
    driver, and `hooks status` then asked for `hooks install` again."""
    from git_memzoi.integrations import git_hooks

    repo.commit("empty")
    ok_json(repo, "hooks", "install")
    gone = ok_json(repo, "hooks", "uninstall", "--keep-merge-driver")
    assert not any("merge driver" in action for action in gone["actions"])
    assert not (repo.root / ".git" / "hooks" / "pre-commit").exists()
    assert repo.git("config", "merge.memzoi.driver") == merge_config.driver_command()
    # no shims and no manager: install is due, and nothing is said of the driver (it is registered)
    assert git_hooks.status(repo.root).recommendation == (
        "run `git memzoi hooks install` to install the shims where git runs hooks"
    )


def test_integrate_install_registers_the_driver_too(repo: Repo) -> None:
    repo.commit("empty")
    data = ok_json(repo, "integrate", "install", "--profile", "claude-code")
    assert data["merge_driver"][0].startswith("registered merge driver memzoi")
    assert merge_config.registered(repo.root) == merge_config.driver_command()


# ------------------------------------------------------------------------------------------------ record ids


def test_two_branches_recording_one_title_merge_and_surface_one_review_item(repo: Repo) -> None:
    _base(repo)
    ids = {}
    for name, body in (("a", "Postgres holds the events."), ("b", "Postgres holds the events, partitioned.")):
        repo.git("checkout", "-q", "-b", name, "main")
        ids[name] = _propose(repo, "Use Postgres for events", body, "--type", "decision")
        repo.commit(name)
        repo.git("checkout", "-q", "main")
    assert ids["a"] != ids["b"] and all(i.startswith("use-postgres-for-events-") for i in ids.values())
    assert _merge(repo, "a").returncode == 0 and _merge(repo, "b").returncode == 0
    found = _conflicts(repo)
    first, second = sorted(ids.values())
    assert [c.as_json() for c in found] == [
        {
            "kind": "diverging_claims",
            "records": [first, second],
            "target": None,
            "message": f"{first}, {second} record 'Use Postgres for events' in scope repo with different bodies: "
            "keep one claim, tombstone or supersede the others",
        }
    ]
    doctor = ok_json(repo, "doctor")
    check = next(c for c in doctor["checks"] if c["name"] == "conflicts")
    assert check["status"] == "warn" and check["message"].startswith("1 conflicting claim(s) from merged branches")
    ci = memkeep("-C", str(repo.root), "status", "--format", "github")
    line = f"::warning file=.memzoi/records/{first}.md,line=1,title=memkeep conflict/diverging_claims::{first}"
    assert line in ci.stdout and "1 to review after merges" in ci.stdout
    sarif = json.loads(memkeep("-C", str(repo.root), "status", "--format", "sarif").stdout)
    assert [r["ruleId"] for r in sarif["runs"][0]["results"]] == ["conflict/diverging_claims"]
    inbox = ok_json(repo, "review")  # the review inbox lists it beside the items, uncounted (no verb resolves it)
    assert (inbox["count"], inbox["conflicts"]) == (0, [c.as_json() for c in found])
    text = run(repo, "review").stdout.splitlines()
    assert text[1:] == [
        "1 conflicting claim(s) among the records (supersede or tombstone one):",
        f"  [diverging_claims] {found[0].message}",
    ]
    run(repo, "tombstone", second, "--reason", "kept the other")
    assert _conflicts(repo) == []
    assert ok_json(repo, "review")["conflicts"] == []


def test_supersedes_of_one_record_on_two_branches_are_a_review_item(repo: Repo) -> None:
    _base(repo)
    target = _propose(repo, "Deploy from CI", "Deploys run from CI.")
    repo.commit("record")
    made = []
    for name in ("a", "b"):
        repo.git("checkout", "-q", "-b", name, "main")
        done = ok_json(repo, "supersede", target, "--title", f"Deploy from {name}", "--body", "Changed.",
                       "--sensitivity", "repo-safe")  # fmt: skip
        made.append(done["record_id"])
        repo.commit(name)
        repo.git("checkout", "-q", "main")
    assert _merge(repo, "a").returncode == 0 and _merge(repo, "b").returncode == 0
    [found] = _conflicts(repo)
    assert (found.kind, found.records, found.target) == ("double_supersede", tuple(sorted(made)), target)


def test_a_tombstone_and_a_supersede_of_one_record_merge_and_surface(repo: Repo) -> None:
    _base(repo)
    target = _propose(repo, "Deploy from CI", "Deploys run from CI.")
    repo.commit("record")
    repo.git("checkout", "-q", "-b", "a", "main")
    replacement = ok_json(repo, "supersede", target, "--title", "Deploy by hand", "--body", "Changed.",
                          "--sensitivity", "repo-safe")["record_id"]  # fmt: skip
    repo.commit("a")
    repo.git("checkout", "-q", "-b", "b", "main")
    assert run(repo, "tombstone", target, "--reason", "no deploys any more").exit_code == 0
    repo.commit("b")
    merged = _merge(repo, "a")  # on b: both changed the record's status line
    assert merged.returncode == 0, merged.stdout + merged.stderr
    text = (repo.root / f".memzoi/records/{target}.md").read_text()
    assert "status: tombstoned\n" in text and "<<<<<<<" not in text
    [found] = _conflicts(repo)
    assert (found.kind, found.records, found.target) == ("supersede_of_inactive", (replacement,), target)


def test_two_branches_verifying_one_record_merge_to_the_later_verification(repo: Repo) -> None:
    _base(repo)
    record_id = _propose(
        repo, "App prints", "It prints hi.", "--applies-to", "src/app.py", "--check", "true", "--check-safe"
    )
    repo.commit("record")
    for name, now in (("b", "2026-07-12T12:00:00Z"), ("a", "2026-07-11T12:00:00Z")):
        repo.git("checkout", "-q", "-b", name, "main")
        repo.commit(f"code {name}", **{"src/app.py": f"print('{name}')\n"})  # the record is suspect here
        verified = run(repo, "verify", record_id, "--json", env={"MEMZOI_NOW": now})
        assert verified.exit_code == 0, verified.stdout + verified.stderr
        repo.commit(f"verified on {name}")
        repo.git("checkout", "-q", "main")
    repo.git("checkout", "-q", "a")
    repo.commit("code a again", **{"src/app.py": "print('b')\n"})  # the code agrees; the envelopes still differ
    merged = _merge(repo, "b")
    assert merged.returncode == 0, merged.stdout + merged.stderr
    text = (repo.root / f".memzoi/records/{record_id}.md").read_text()
    assert '  verified_at: "2026-07-12"\n' in text and "<<<<<<<" not in text


def test_a_record_both_sides_rewrote_is_a_conflict_for_a_human() -> None:
    from git_memzoi.integrations.record_merge import merge_record

    base = "---\nid: r\nkind: memory\n---\nBody.\n"
    assert merge_record(base.encode(), b"---\nid: r\n---\nOurs.\n", b"---\nid: r\n---\nTheirs.\n", "r", "x") is None
    assert merge_record(b"", b"---\nid: r\n---\nOurs.\n", b"---\nid: r\n---\nTheirs.\n", "r", "x") is None


def test_contradictory_types_and_a_replacement_of_a_tombstoned_record_are_found() -> None:
    from git_memzoi.memzoi.records.conflicts import conflicts_among
    from git_memzoi.memzoi.records.okf import Record

    def record(rid: str, title: str, kind: str = "decision", status: str = "active", sup: str | None = None) -> Record:
        return Record(rid, kind, "semantic", title, "repo", "repo", "general_repo_knowledge", status, 1.0,
                      "2026-07-10T12:00:00Z", "Body.", supersedes=sup)  # fmt: skip

    found = conflicts_among(
        [
            record("tabs-1", "Indent with tabs"),
            record("tabs-2", "Indent with tabs", kind="rejected"),
            record("old", "Old", status="tombstoned"),
            record("new", "New", sup="old"),
            record("same-1", "Same"),
            record("same-2", "Same"),  # identical claims: a duplicate, not a conflict
        ]
    )
    assert [(c.kind, c.records, c.target) for c in found] == [
        ("supersede_of_inactive", ("new",), "old"),
        ("contradictory_types", ("tabs-1", "tabs-2"), None),
    ]


def test_new_ids_carry_a_content_suffix_and_old_ids_still_resolve(repo: Repo) -> None:
    from git_memzoi.memzoi import workspace

    repo.commit("empty")
    workspace.init(repo.root)
    record_id = _propose(repo, "Pin Node 22", "CI pins Node 22.")
    assert record_id.rsplit("-", 1)[0] == "pin-node-22" and len(record_id.rsplit("-", 1)[1]) == 6
    old = (repo.root / f".memzoi/records/{record_id}.md").read_text().replace(f"id: {record_id}", "id: node-pin")
    repo.write(".memzoi/records/node-pin.md", old)  # a record named before the rule
    replaced = ok_json(repo, "supersede", "node-pin", "--title", "Pin Node 24", "--body", "CI pins Node 24.",
                       "--sensitivity", "repo-safe")  # fmt: skip
    assert replaced["superseded"] == "node-pin" and replaced["record_id"].startswith("pin-node-24-")
    repo.write(".memzoi/config.toml", '[records]\nids = "slug"\n')
    assert _propose(repo, "Spec ids", "The memzoi-spec v0 shape.") == "spec-ids"
    repo.write(".memzoi/config.toml", '[records]\nids = "uuid"\n')
    bad = run(repo, "propose", "--title", "T", "--body", "B", "--sensitivity", "repo-safe", "--apply", "--json")
    assert bad.exit_code == 2 and json.loads(bad.stdout)["error"]["code"] == "invalid_config"


# ------------------------------------------------------------------------------------------------ initialisation


def test_a_fresh_clone_of_an_initialised_repository_works(repo: Repo, tmp_path: Path) -> None:
    assert run(repo, "init").exit_code == 0
    repo.commit("init")
    assert repo.git("ls-files", ".memzoi") == ".memzoi/.gitignore\n.memzoi/index.md\n.memzoi/initialized"
    subprocess.run(["git", "clone", "-q", str(repo.root), str(tmp_path / "clone")], check=True)
    clone = Repo(tmp_path / "clone")
    assert not (clone.root / ".memzoi/records").exists()
    assert run(clone, "doctor").exit_code == 0
    assert run(clone, "search", "anything").exit_code == 0
    made = _propose(clone, "First record", "Made in a fresh clone.")
    assert (clone.root / f".memzoi/records/{made}.md").is_file()


def test_hooks_status_names_the_merge_driver_a_fresh_clone_lacks(repo: Repo, tmp_path: Path) -> None:
    """git config is not cloned: .gitattributes asks for merge=memzoi, git finds no driver and merges as text."""
    from git_memzoi.integrations import git_hooks

    _base(repo)  # registers the driver and writes .gitattributes
    repo.commit("attributes")
    assert "merge driver" not in git_hooks.status(repo.root).recommendation
    subprocess.run(["git", "clone", "-q", str(repo.root), str(tmp_path / "clone")], check=True)
    clone = tmp_path / "clone"
    assert git_hooks.status(clone).recommendation.endswith(
        ".gitattributes marks memory files merge=memzoi but this clone has no such merge driver (git config is "
        "not cloned): run `git memzoi hooks install` so they merge without a human"
    )
    git_hooks.install(clone)
    assert git_hooks.status(clone).recommendation == ""


def test_hooks_status_names_a_subfolder_store_added_after_install(repo: Repo) -> None:
    from git_memzoi.integrations import git_hooks

    _base(repo)
    git_hooks.install(repo.root)
    repo.commit("attributes")
    assert git_hooks.status(repo.root).recommendation == ""
    repo.commit(
        "svc store",
        **{
            "svc/agent-memory/entries/s-1.md": entry_text("s-1", anchor=repo.git("rev-parse", "HEAD"), scope=["svc/**"])
        },
    )
    assert git_hooks.status(repo.root).recommendation == (
        ".gitattributes does not mark /svc/agent-memory/INDEX.md merge=memzoi: run `git memzoi hooks install` and "
        "commit .gitattributes so they merge without a human"
    )
    git_hooks.install(repo.root)
    assert git_hooks.status(repo.root).recommendation == ""


def test_a_branch_made_after_init_before_the_first_record_works(repo: Repo) -> None:
    assert run(repo, "init").exit_code == 0
    repo.commit("init")
    repo.git("branch", "feature")
    _propose(repo, "On main", "A record on main.")
    repo.commit("record")
    repo.git("checkout", "-q", "feature")
    assert not (repo.root / ".memzoi/records").exists()  # git removed the folder with its last file
    assert ok_json(repo, "search", "record")["results"] == []
    assert _propose(repo, "On feature", "A record on the branch.").startswith("on-feature-")


def test_a_repository_initialised_before_the_marker_counts_as_initialised(tmp_path: Path) -> None:
    old = new_repo(tmp_path / "old")
    old.write(".memzoi/index.md", "# Memzoi memory\n")  # what init wrote before the marker existed
    assert Layout(old.root).initialized
    assert run(old, "search", "x").exit_code == 0
    bare = new_repo(tmp_path / "none")
    bare.write(".memzoi/notes.txt", "not memzoi\n")
    assert not Layout(bare.root).initialized
    assert run(bare, "search", "x").exit_code == 2


def test_committing_a_resolved_entry_conflict_says_index_md_is_behind(repo: Repo) -> None:
    """Both branches change one entry's claim: the driver keeps both INDEX.md lines, and committing the resolved
    merge runs no post-merge, so the pre-commit hook says INDEX.md does not match ("listed more than once"); after
    `git memkeep index` the commit is quiet (a fresh user's walk)."""
    _base(repo)
    assert run(repo, "hooks", "install").exit_code == 0
    repo.commit("attributes")
    for name, claim in (("x", "Claim base-2 (X)."), ("y", "Claim base-2 (Y).")):
        repo.git("checkout", "-q", "-b", name, "main")
        _entry(repo, "base-2", claim)
        _index(repo)
        repo.commit(name)
    repo.git("checkout", "-q", "x")
    assert _merge(repo, "y").returncode == 1  # the entry conflicts
    _entry(repo, "base-2", "Claim base-2 (Y).")  # resolved by hand
    repo.git("add", "-A")
    said = f"memkeep: {INDEX} does not match the entries (listed more than once: base-2); run `git memkeep index` and add it"
    resolved = subprocess.run(["git", "commit", "--no-edit"], cwd=repo.root, capture_output=True, text=True)
    assert resolved.returncode == 0 and said in resolved.stderr, resolved.stderr
    _index(repo)
    repo.git("add", "-A")
    again = subprocess.run(["git", "commit", "-m", "index"], cwd=repo.root, capture_output=True, text=True)
    assert again.returncode == 0 and "does not match the entries" not in again.stderr
    assert _drift(repo) == ""


def test_conflict_marker_lines_in_index_md_are_drift_not_ids(repo: Repo) -> None:
    """A conflicted INDEX.md staged as it is: the drift names the entry listed twice, never ``<<<<<<< HEAD``
    as an id "listed but no such entry" (a fresh user's walk)."""
    _base(repo)
    loaded = api.load_store(api.locate_store(repo.root, repo.root))
    text = (repo.root / INDEX).read_text()
    line = next(row for row in text.splitlines() if row.startswith("base-2 | "))
    conflicted = text.replace(line, f"<<<<<<< HEAD\n{line}\n=======\n{line} (Y)\n>>>>>>> y")
    assert api.index_drift(loaded.entries, conflicted) == "listed more than once: base-2"


def test_post_merge_regenerates_the_index_of_a_store_below_the_root(repo: Repo) -> None:
    """A store in ``svc/agent-memory/`` is one the merge changed (``ORIG_HEAD`` to ``HEAD``): its INDEX.md is
    regenerated as the root store's is (a fresh user's walk: only the root's store was looked at)."""
    repo.commit("code", **{"svc/a.py": "A = 1\n"})
    assert run(repo, "hooks", "install").exit_code == 0
    text = entry_text("s1", anchor=repo.head(), scope=["svc/a.py"])
    repo.write("svc/agent-memory/entries/s1.md", text)
    assert memkeep("-C", str(repo.root / "svc"), "index").exit_code == 0
    repo.commit("store")
    repo.git("checkout", "-q", "-b", "side")
    repo.write("svc/agent-memory/entries/s2.md", text.replace("id: s1", "id: s2"))
    repo.git("add", "-A")
    repo.git("commit", "-q", "--no-verify", "-m", "s2 without its index line")
    repo.git("checkout", "-q", "main")
    repo.commit("main moves", **{"other.txt": "x\n"})
    merged = _merge(repo, "side")
    assert merged.returncode == 0, merged.stderr
    said = "memkeep: regenerated svc/agent-memory/INDEX.md from the merged entries (it did not match them); commit it"
    assert said in merged.stderr
    assert repo.git("status", "--porcelain") == "M svc/agent-memory/INDEX.md"
