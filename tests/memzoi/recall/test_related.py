"""Relations over real repositories: ``git memzoi related``, ``context --expand``, ``dependency_suspect``
through ``depends_on``, statements and relations of a changed source, ``doctor``'s broken and invalid relations,
and ``propose``/``supersede --relation`` (issue 19, "Relations and categorized statements")."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import pytest

from git_memzoi.core.clock import FixedClock
from git_memzoi.memzoi.records.relations import Relation
from tests.support import repos
from tests.support.repos import PINNED, Repo, ok_json, run

SRC = "src/api.py"


def record(repo: Repo, record_id: str, *rels: tuple[str, str], body: str | None = None, **fields: Any) -> None:
    repos.write_record(
        repo,
        record_id,
        f"Title {record_id}",
        body if body is not None else f"About {record_id}.",
        relations=tuple(Relation(role, target) for role, target in rels),
        **fields,
    )


@pytest.fixture
def graph(repo: Repo) -> Repo:
    """deploy -> depends_on ci -> depends_on deploy (a cycle); deploy owns deploy/**, depends on ghost (broken);
    docs refines ci; old is superseded and deploy refines it."""
    assert run(repo, "init").exit_code == 0
    record(repo, "deploy", ("depends_on", "ci"), ("owns", "deploy/**"), ("depends_on", "ghost"), ("refines", "old"))
    record(repo, "ci", ("depends_on", "deploy"))
    record(repo, "docs", ("refines", "ci"))
    record(repo, "old", status="superseded")
    repo.commit("records")
    return repo


def line_of(repo: Repo, record_id: str, text: str) -> int:
    """The 1-based line of ``text`` in the record file."""
    return (repo.root / f".memzoi/records/{record_id}.md").read_text().splitlines().index(text) + 1


def ids(out: dict[str, Any]) -> list[tuple[int, str, str, str]]:
    return [(r["via"]["hop"], r["via"]["direction"], r["via"]["role"], r["record"]["id"]) for r in out["related"]]


def test_related_both_directions_depth_1(graph: Repo) -> None:
    out = ok_json(graph, "related", "deploy")
    assert out["record"]["record"]["id"] == "deploy"
    assert (out["direction"], out["depth"], out["roles"]) == ("both", 1, [])
    assert ids(out) == [(1, "outgoing", "depends_on", "ci")]  # ci's incoming depends_on is the same record
    assert out["related"][0]["via"] == {
        "role": "depends_on",
        "direction": "outgoing",
        "from": "deploy",
        "to": "ci",
        "hop": 1,
        "file": ".memzoi/records/deploy.md",
        "line": line_of(graph, "deploy", "  - depends_on: ci"),
    }
    owns = line_of(graph, "deploy", '  - owns: "deploy/**"')
    assert out["paths"] == [{"role": "owns", "path": "deploy/**", "file": ".memzoi/records/deploy.md", "line": owns}]
    assert out["broken"] == [
        {
            "code": "broken_relation",
            "role": "depends_on",
            "from": "deploy",
            "target": "ghost",
            "file": ".memzoi/records/deploy.md",
            "line": line_of(graph, "deploy", "  - depends_on: ghost"),
        }
    ]
    assert out["excluded"] == [
        {
            "code": "target_not_current",
            "status": "superseded",
            "role": "refines",
            "from": "deploy",
            "target": "old",
            "file": ".memzoi/records/deploy.md",
            "line": line_of(graph, "deploy", "  - refines: old"),
        }
    ]


def test_depth_2_cycles_terminate_and_the_start_is_never_reached_again(graph: Repo) -> None:
    out = ok_json(graph, "related", "deploy", "--depth", "2")
    assert ids(out) == [(1, "outgoing", "depends_on", "ci"), (2, "incoming", "refines", "docs")]
    out = ok_json(graph, "related", "ci", "--depth", "2", "--direction", "outgoing")
    assert ids(out) == [(1, "outgoing", "depends_on", "deploy")]  # deploy -> ci is the start: not listed again


def test_direction_and_role_filters_apply_on_every_hop(graph: Repo) -> None:
    assert ids(ok_json(graph, "related", "ci", "--direction", "incoming")) == [
        (1, "incoming", "depends_on", "deploy"),
        (1, "incoming", "refines", "docs"),
    ]
    assert ids(ok_json(graph, "related", "ci", "--direction", "outgoing")) == [(1, "outgoing", "depends_on", "deploy")]
    assert ids(ok_json(graph, "related", "docs", "--direction", "outgoing", "--depth", "2")) == [
        (1, "outgoing", "refines", "ci"),
        (2, "outgoing", "depends_on", "deploy"),
    ]
    only = ok_json(graph, "related", "docs", "--role", "refines", "--depth", "2")
    assert ids(only) == [(1, "outgoing", "refines", "ci")]  # ci -> deploy is depends_on: filtered at hop 2
    assert ok_json(graph, "related", "docs", "--role", "owns")["related"] == []
    assert ok_json(graph, "related", "docs", "--direction", "incoming")["related"] == []


def test_related_text_and_refusals(graph: Repo) -> None:
    result = run(graph, "related", "deploy")
    assert result.exit_code == 0
    assert result.stdout.splitlines() == [
        "1\t-> depends_on\tci\tTitle ci\t(via deploy)\tSUSPECT: dependency_suspect",
        "1\t-> owns\tdeploy/**\t(path)",
    ]
    ghost = line_of(graph, "deploy", "  - depends_on: ghost")
    assert (
        f"deploy depends_on ghost: no such record (.memzoi/records/deploy.md:{ghost}; broken_relation)" in result.stderr
    )
    for args, code in (
        (["related", "nothing"], "target_not_found"),
        (["related", "old"], "target_not_found"),  # superseded: not current
        (["related", "deploy", "--role", "Bad"], "invalid_relation"),
    ):
        result = run(graph, *args, "--json")
        assert result.exit_code == 2
        assert json.loads(result.stdout)["error"]["code"] == code
    for args in (["related", "deploy", "--depth", "3"], ["related", "nothing"], ["related", "ci", "--role", "X"]):
        proc = subprocess.run(
            [sys.executable, "-c", "from git_memzoi.cli.memzoi import main; main()", "-C", str(graph.root), *args],
            capture_output=True,
            text=True,
            env={**os.environ, **PINNED},
            check=False,
        )
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.startswith("git-memzoi: error: ") and proc.stderr.count("\n") == 1, proc.stderr


def test_a_changed_declaring_source_is_not_followed_until_indexed(graph: Repo) -> None:
    from git_memzoi.memzoi import index_db, related, workspace

    ws = workspace.open_workspace(graph.root, clock=FixedClock(repos.NOW.date(), repos.NOW))
    with index_db.read_session(ws.layout):  # refreshed once, then the file changes under it
        path = graph.root / ".memzoi/records/ci.md"
        path.write_text(path.read_text() + "\nmore\n")
        found = related.related(ws, "deploy", direction="incoming")
    assert found.reached == []
    assert found.excluded == [{"code": "stale_relation", "file": ".memzoi/records/ci.md", "record_id": "ci"}]
    assert ids(ok_json(graph, "related", "deploy", "--direction", "incoming")) == [(1, "incoming", "depends_on", "ci")]


# ------------------------------------------------------------------------------------------------ statements


def test_statements_are_indexed_with_exact_lines_and_stale_ones_are_hidden(repo: Repo) -> None:
    from git_memzoi.memzoi import index_db, record_show, workspace
    from git_memzoi.memzoi.recall.statements import statement_id

    assert run(repo, "init").exit_code == 0
    body = "- [fact] Deploys run at noon\n  on weekdays\n- [ ] not one\n```\n- [fact] code\n```\n- [decision] Use blue"
    record(repo, "deploy", body=body)
    text = (repo.root / ".memzoi/records/deploy.md").read_text().splitlines()
    first = text.index("- [fact] Deploys run at noon") + 1
    out = ok_json(repo, "show", "deploy")["statements"]
    assert out["state"] == "indexed"
    fact_id = statement_id("deploy", "fact", "Deploys run at noon\non weekdays", 1)
    assert out["statements"] == [
        {"id": fact_id, "category": "fact", "text": "Deploys run at noon\non weekdays", "lines": [first, first + 1]},
        {"id": statement_id("deploy", "decision", "Use blue", 1), "category": "decision", "text": "Use blue",
         "lines": [first + 6, first + 6]},
    ]  # fmt: skip
    assert run(repo, "show", "deploy").stdout.endswith(
        f"\n\n[fact] Deploys run at noon (lines {first}-{first + 1})\n[decision] Use blue (line {first + 6})\n"
    )
    ws = workspace.open_workspace(repo.root, clock=FixedClock(repos.NOW.date(), repos.NOW))
    with index_db.read_session(ws.layout):
        path = repo.root / ".memzoi/records/deploy.md"
        path.write_text(path.read_text().replace("Use blue", "Use green"))
        shown = record_show.show(ws, "deploy").to_json()["statements"]
    assert shown == {"state": "stale", "source_hash": out["source_hash"], "statements": []}
    again = ok_json(repo, "show", "deploy")["statements"]
    assert again["state"] == "indexed"
    assert again["statements"][1] == {
        "id": statement_id("deploy", "decision", "Use green", 1),
        "category": "decision",
        "text": "Use green",
        "lines": [first + 6, first + 6],
    }
    assert again["source_hash"] != out["source_hash"]
    assert ok_json(repo, "rebuild")["ok"] is True  # an identical snapshot keeps the statement ids
    assert ok_json(repo, "show", "deploy")["statements"] == again
    path.write_text(path.read_text().replace("\n- [fact] Deploys", "\nA new line of prose.\n\n- [fact] Deploys"))
    moved = ok_json(repo, "show", "deploy")["statements"]["statements"]
    assert [(m["id"], m["lines"]) for m in moved] == [
        (fact_id, [first + 2, first + 3]),  # moved down two lines, the same statement: the same id
        (statement_id("deploy", "decision", "Use green", 1), [first + 8, first + 8]),
    ]


def test_a_record_without_statements_is_indexed_with_none(repo: Repo) -> None:
    assert run(repo, "init").exit_code == 0
    record(repo, "plain", body="Just prose.")
    assert ok_json(repo, "show", "plain")["statements"]["statements"] == []
    assert ok_json(repo, "show", "plain")["statements"]["state"] == "indexed"


# ------------------------------------------------------------------------------------------------ staleness


def reasons(repo: Repo, record_id: str) -> list[str] | None:
    mark = ok_json(repo, "show", record_id)["suspect"]
    return None if mark is None else [r["reason"] for r in mark["reasons"]]


def test_dependency_suspect_appears_transitively_and_clears(repo: Repo) -> None:
    assert run(repo, "init").exit_code == 0
    anchor = repo.commit("code", **{SRC: "v1\n"})
    envelope = {"anchor": anchor, "scope": [SRC], "verified_at": "2026-07-01"}
    record(repo, "api", memkeep=envelope)
    record(repo, "client", ("depends_on", "api"))  # no envelope of its own
    record(repo, "app", ("depends_on", "client"))  # transitively
    record(repo, "unrelated", ("refines", "api"))  # another role: not followed by staleness
    repo.commit("records")
    assert [reasons(repo, r) for r in ("api", "client", "app", "unrelated")] == [None, None, None, None]

    repo.commit("change the api", **{SRC: "v2\n"})
    assert reasons(repo, "api") == ["scope_hit"]
    client = ok_json(repo, "show", "client")["suspect"]
    assert client == {
        "reasons": [
            {
                "reason": "dependency_suspect",
                "message": "depends on api (suspect)",
                "evidence": {"dependencies": ["api"], "role": "depends_on"},
            }
        ]
    }
    assert reasons(repo, "app") == ["dependency_suspect"]
    assert reasons(repo, "unrelated") is None
    found = ok_json(repo, "search", "Title")
    assert {r["record"]["id"]: r["suspect"] is not None for r in found["results"]} == {
        "api": True,
        "client": True,
        "app": True,
        "unrelated": False,
    }
    pack = ok_json(repo, "context", "--task", "about client")
    assert "client" in pack["prompt"] and "Suspect: dependency_suspect" in pack["prompt"]

    record(repo, "api", memkeep={**envelope, "anchor": repo.head()})  # re-anchored: the api claim holds again
    assert [reasons(repo, r) for r in ("api", "client", "app")] == [None, None, None]


def test_dependency_on_a_withdrawn_or_missing_record_and_on_a_cycle(repo: Repo) -> None:
    assert run(repo, "init").exit_code == 0
    record(repo, "gone", status="tombstoned")
    record(repo, "a", ("depends_on", "gone"))
    record(repo, "b", ("depends_on", "ghost"))
    record(repo, "c", ("depends_on", "d"))
    record(repo, "d", ("depends_on", "c"))  # a cycle with nothing suspect: terminates, nothing marked
    mark = ok_json(repo, "show", "a")["suspect"]["reasons"]
    assert mark == [
        {
            "reason": "dependency_suspect",
            "message": "depends on gone (tombstoned)",
            "evidence": {"dependencies": ["gone"], "role": "depends_on", "unresolved": {"gone": "tombstoned"}},
        }
    ]
    assert ok_json(repo, "show", "b")["suspect"]["reasons"][0]["evidence"]["unresolved"] == {"ghost": "missing"}
    assert reasons(repo, "c") is None and reasons(repo, "d") is None
    record(repo, "self", ("depends_on", "self"))  # a record depending on itself is not its own suspect
    assert reasons(repo, "self") is None
    assert ok_json(repo, "related", "self")["related"] == []
    record(repo, "d", ("depends_on", "c"), ("depends_on", "gone"))
    assert reasons(repo, "c") == ["dependency_suspect"] and reasons(repo, "d") == ["dependency_suspect"]
    warning = ok_json(repo, "precheck", "--action", "Title")
    assert warning["warnings"] == []  # facts are never precheck warnings; a risk below is


def test_precheck_marks_a_dependent_risk(repo: Repo) -> None:
    assert run(repo, "init").exit_code == 0
    record(repo, "gone", status="tombstoned")
    repos.write_record(
        repo,
        "release-risk",
        "Release risk",
        "The release script deletes dist.",
        memory_type="risk",
        applies_to=("scripts/release.sh",),
        relations=(Relation("depends_on", "gone"),),
    )
    out = ok_json(repo, "precheck", "--path", "scripts/release.sh")
    assert [w["record_id"] for w in out["warnings"]] == ["release-risk"]
    assert out["warnings"][0]["suspect"]["reasons"][0]["reason"] == "dependency_suspect"


# ------------------------------------------------------------------------------------------------ context --expand


def test_context_expand_packs_related_records_in_the_same_budget(graph: Repo) -> None:
    record(graph, "docs", ("refines", "ci"), body="How the documentation is published.")
    plain = ok_json(graph, "context", "--task", "documentation published")
    assert [i["record_id"] for i in plain["included"]] == ["docs"]
    out = ok_json(graph, "context", "--task", "documentation published", "--expand")
    assert [i["record_id"] for i in out["included"]] == ["docs", "ci"]
    assert out["included"][1]["relation"] == {
        "role": "refines",
        "direction": "outgoing",
        "from": "docs",
        "to": "ci",
        "hop": 1,
        "file": ".memzoi/records/docs.md",
        "line": line_of(graph, "docs", "  - refines: ci"),
    }
    assert "relation" not in out["included"][0]
    assert out["included"][1]["rationale"].endswith("; related: docs refines ci")
    assert "- [ci] (fact/provenance=git/destination=repo/scope=repo) Title ci: About ci.\n  Source: test://ci\n" in (
        out["prompt"] + "\n"
    ).replace("  Related: docs refines ci\n", "")
    assert "  Related: docs refines ci" in out["prompt"]
    assert out["budget"]["used"] <= 400
    small = ok_json(graph, "context", "--task", "documentation published", "--expand", "--token-budget", "20")
    assert [i["record_id"] for i in small["included"]] == ["docs"]  # the related record did not fit
    assert small["budget"]["used"] <= 20
    assert [o["record_id"] for o in small["omitted"]] == ["ci"]


# ------------------------------------------------------------------------------------------------ doctor, writes


def doctor_check(repo: Repo) -> dict[str, str]:
    result = run(repo, "doctor", "--json")
    return next(c for c in json.loads(result.stdout)["checks"] if c["name"] == "relations")


def test_doctor_reports_broken_and_invalid_relations(graph: Repo) -> None:
    check = doctor_check(graph)
    assert check["status"] == "warn"
    assert check["message"] == "1 relation(s) name no record (broken_relation): deploy depends_on ghost"
    path = graph.root / ".memzoi/records/ci.md"
    path.write_text(path.read_text().replace("  - depends_on: deploy", "  - Depends: deploy"))
    check = doctor_check(graph)
    assert check["status"] == "fail"
    assert "(invalid_relation): .memzoi/records/ci.md" in check["message"]
    rebuilt = ok_json(graph, "rebuild")
    assert [(u["path"], u["code"]) for u in rebuilt["unreadable"]] == [(".memzoi/records/ci.md", "invalid_relation")]
    assert ok_json(graph, "search", "Title ci")["results"][0]["record"]["id"] != "ci"  # left out of recall


def test_doctor_is_ok_without_broken_relations(repo: Repo) -> None:
    assert run(repo, "init").exit_code == 0
    record(repo, "a", ("depends_on", "b"), ("owns", "nowhere/**"))
    record(repo, "b")
    assert doctor_check(repo) == {
        "name": "relations",
        "status": "ok",
        "message": "2 relation(s) of active records, none broken",
        "next_step": "",
    }


def test_propose_and_supersede_write_relations(repo: Repo) -> None:
    assert run(repo, "init").exit_code == 0
    repos.spec_ids(repo.root)
    record(repo, "ci")
    repo.commit("ci")
    args = ["propose", "--title", "Release steps", "--body", "Tag, then push.", "--sensitivity", "repo-safe"]
    out = ok_json(repo, *args, "--relation", "depends_on=ci", "--relation", "owns=scripts/**", "--apply")
    new_id = out["applied"]["record_id"]
    text = (repo.root / f".memzoi/records/{new_id}.md").read_text()
    assert 'relations:\n  - depends_on: ci\n  - owns: "scripts/**"\n' in text
    assert ids(ok_json(repo, "related", "ci")) == [(1, "incoming", "depends_on", new_id)]

    kept = ok_json(repo, "supersede", new_id, "--title", "Release v2", "--body", "b", "--sensitivity", "repo-safe")
    kept_text = (repo.root / f".memzoi/records/{kept['record_id']}.md").read_text()
    assert 'relations:\n  - depends_on: ci\n  - owns: "scripts/**"\n' in kept_text
    own = ok_json(
        repo, "supersede", kept["record_id"], "--title", "Release v3", "--body", "c", "--sensitivity", "repo-safe",
        "--relation", "refines=ci",
    )  # fmt: skip
    assert "relations:\n  - refines: ci\n" in (repo.root / f".memzoi/records/{own['record_id']}.md").read_text()


@pytest.mark.parametrize(
    ("value", "phrase"),
    [("Bad=ci", "role 'Bad' must match"), ("depends_on", "write role=target"), ("owns=/etc/**", "inside the")],
)
def test_a_bad_relation_is_refused_before_anything_is_written(repo: Repo, value: str, phrase: str) -> None:
    assert run(repo, "init").exit_code == 0
    record(repo, "ci")
    repo.commit("ci")
    before = repos.tree(repo.root)
    args = ["--title", "T", "--body", "B", "--sensitivity", "repo-safe", "--relation", value]
    for command in (["propose", *args, "--apply"], ["supersede", "ci", *args]):
        result = run(repo, *command, "--json")
        assert result.exit_code == 2
        error = json.loads(result.stdout)["error"]
        assert error["code"] == "invalid_relation" and phrase in error["message"]
        assert repos.tree(repo.root) == before


def test_related_takes_a_unique_id_prefix_as_show_does(graph: Repo) -> None:
    assert ok_json(graph, "related", "depl")["record"]["record"]["id"] == "deploy"  # ids end in a content suffix
    assert ids(ok_json(graph, "related", "dep")) == ids(ok_json(graph, "related", "deploy"))
    record(graph, "docs-style", ("refines", "docs"))
    ambiguous = run(graph, "related", "doc", "--json")
    assert ambiguous.exit_code == 2
    assert json.loads(ambiguous.stdout)["error"]["code"] == "ambiguous_target"
    assert ok_json(graph, "related", "docs")["record"]["record"]["id"] == "docs"  # an exact id always wins


def test_propose_warns_of_a_relation_to_a_record_that_does_not_exist(graph: Repo) -> None:
    args = ("propose", "--title", "Rollback", "--body", "Roll back by tag.", "--sensitivity", "repo-safe")
    out = ok_json(graph, *args, "--relation", "depends_on=ghost-rule", "--relation", "depends_on=ci", "--apply")
    assert out["warnings"] == [
        "relation target 'ghost-rule' names no current repository record (broken_relation until it exists)"
    ]
    quiet = ok_json(graph, *args[:2], "Rollback two", *args[3:], "--relation", "depends_on=ci", "--apply")
    assert quiet["warnings"] == []
