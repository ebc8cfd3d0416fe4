"""Classified import end to end against real repositories (seed "Classified import"): the strict manifest, the
type/lane inference table, normalization, duplicates, blocked candidates (secrets built at test time, never
echoed), stale plan ids (zero writes), and apply routing (pending packets; private runtime records)."""

from __future__ import annotations

import json
import random
import string
from typing import Any

import pytest

from git_memzoi.memzoi.imports import apply as importer_apply
from git_memzoi.memzoi.imports import plan as importer
from git_memzoi.memzoi.imports.plan import ImportManifestError
from git_memzoi.memzoi.proposals import files as proposal_files
from git_memzoi.memzoi.workspace import Workspace
from tests.support.repos import Repo, tree


def cand(
    destination: str = "repo", title: str = "Verify release archives", body: str = "Check the SHA-256.", **extra: Any
) -> dict[str, Any]:
    out = {"destination": destination, "reason": "durable project convention", "title": title, "body": body}
    if destination == "repo":
        out |= {"type": "decision", "sensitivity": "repo-safe"}
    return out | extra


def manifest(*candidates: dict[str, Any], sources: list[dict[str, str]] | None = None) -> dict[str, Any]:
    return {
        "version": "memzoi/import-v1",
        "sources": sources or [{"path": "imports/source.yml"}],
        "candidates": list(candidates),
    }


def secret() -> str:
    rng = random.Random(41)
    return "ghp_" + "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(36))


@pytest.mark.parametrize(
    ("destination", "given_type", "lane", "expected"),
    [
        ("repo", None, "episodic", ("episode", "episodic")),
        ("repo", None, "session", ("episode", "session")),
        ("local", None, "procedural", ("procedure", "procedural")),
        ("repo", "procedure", None, ("procedure", "procedural")),
        ("repo", "episode", None, ("episode", "episodic")),
        ("repo", "warning", None, ("warning", "semantic")),
        ("local", "fact", "episodic", ("fact", "episodic")),
        ("session", "decision", "semantic", ("episode", "session")),
        ("session", None, None, ("episode", "session")),
    ],
)
def test_inference_table(
    ctx: Workspace, destination: str, given_type: str | None, lane: str | None, expected: tuple[str, str]
) -> None:
    c = cand(destination)
    c.pop("type", None)
    c |= {k: v for k, v in (("type", given_type), ("lane", lane)) if v is not None}
    (out,) = importer.plan(ctx, manifest(c), actor="cli")["candidates"]
    assert (out["type"], out["lane"]) == expected


@pytest.mark.parametrize("lane", [None, "semantic"])
def test_type_that_cannot_be_inferred_is_rejected(ctx: Workspace, lane: str | None) -> None:
    c = cand("local", **({"lane": lane} if lane else {}))
    with pytest.raises(ImportManifestError) as err:
        importer.plan(ctx, manifest(c), actor="cli")
    assert err.value.code == "invalid_import_manifest" and "candidates[0].type" in err.value.message


def test_normalization_and_plan_shape(repo: Repo, ctx: Workspace) -> None:
    c = cand(
        title="  Verify release archives ",
        body="\n Check the SHA-256.\n",
        reason=" durable ",
        tags=[" workflow", "auth", "workflow "],
        scope={"paths": ["src/**", " lib/** ", "src/**"]},
    )
    raw = manifest(
        c,
        cand("discard", title="Old", body="Stale note.", type="fact"),
        sources=[{"url": " https://example.org/a "}, {"path": "imports/source.yml"}, {"ref": "issue://1"}],
    )
    before = tree(repo.root)
    plan = importer.plan(ctx, raw, actor=" cli ")
    assert tree(repo.root) == before  # planning writes nothing
    assert plan == importer.plan(ctx, raw, actor="cli")  # deterministic; the actor is trimmed
    assert plan["plan_id"].startswith("import_") and len(plan["plan_id"]) == len("import_") + 32
    assert plan["plan_id"] != importer.plan(ctx, raw, actor="zoki")["plan_id"]  # the actor is fingerprinted
    # sorted by (path, url, ref), an absent locator sorting as ""
    assert plan["sources"] == [{"ref": "issue://1"}, {"url": "https://example.org/a"}, {"path": "imports/source.yml"}]
    first, second = plan["candidates"]
    assert first == {
        "index": 0,
        "classification": {"destination": "repo", "reason": "durable"},
        "policy": {
            "destination": "repo",
            "plane": "git",
            "write_route": "file_backed_proposal",
            "review": "proposal_review",
        },
        "type": "decision",
        "lane": "semantic",
        "title": "Verify release archives",
        "body": "Check the SHA-256.",
        "sensitivity": "repo-safe",
        "scope": {"kind": "repo", "id": None, "paths": ["lib/**", "src/**"]},
        "tags": ["auth", "workflow"],
        "content_hash": importer.body_hash("Check the SHA-256."),
        "duplicates": [],
        "action": {
            "kind": "create_proposal",
            "proposal_id": "mem_import_verify-release-archives",
            "path": ".memzoi/proposals/pending/mem_import_verify-release-archives.md",
        },
    }
    assert len(first["content_hash"]) == 64 and not first["content_hash"].startswith("blake3")
    assert second["action"] == {"kind": "no_write", "reason": "durable project convention"}
    assert second["policy"] == {
        "destination": "discard",
        "plane": None,
        "write_route": "no_write",
        "review": "no_review",
    }
    assert plan["summary"] == {
        "total": 2,
        "create_proposals": 1,
        "local_writes": 0,
        "session_writes": 0,
        "duplicates": 0,
        "discarded": 1,
        "needs_review": 0,
    }
    assert (plan["status"], plan["data_class"]) == ("ready", "private")
    assert importer.plan(ctx, manifest(c), actor="cli")["data_class"] == "repo_safe"


@pytest.mark.parametrize(
    ("raw", "where"),
    [
        ({"version": "memzoi/import-v1", "sources": [{"path": "a"}], "candidates": [{}], "extra": 1}, "manifest"),
        (manifest(cand(), sources=[{"path": "a", "sha": "x"}]), "sources[0]"),
        (manifest(cand(color="red")), "candidates[0]"),
        (manifest(cand(scope={"kind": "repo", "glob": "x"})), "candidates[0].scope"),
        ({"version": "memzoi/import-v2", "sources": [{"path": "a"}], "candidates": [cand()]}, "version"),
        (manifest(cand(), sources=[{"path": " "}]), "sources[0].path"),
        (manifest(cand(), sources=[{"path": "../up"}]), "sources[0].path"),
        (manifest(cand(), sources=[{"path": "/abs"}]), "sources[0].path"),
        (manifest(cand(), sources=[{"path": "C:/x"}]), "sources[0].path"),
        (manifest(cand(), sources=[{"path": "a\\b"}]), "sources[0].path"),
        (manifest(cand(), sources=[{"path": "a/./b"}]), "sources[0].path"),
        (manifest(cand(), sources=[{}]), "sources[0]"),
        (manifest(cand(), sources=[{"url": ""}]), "sources[0].url"),
        ({"version": "memzoi/import-v1", "sources": [], "candidates": [cand()]}, "sources"),
        ({"version": "memzoi/import-v1", "sources": [{"path": "a"}], "candidates": []}, "candidates"),
        ({"version": "memzoi/import-v1", "candidates": [cand()]}, "sources"),
        (manifest({"destination": "repo", "title": "t", "body": "b"}), "reason"),
        (manifest(cand(title="  ")), "title"),
        (manifest(cand(destination="team")), "destination"),
        (manifest(cand(sensitivity="public")), "sensitivity"),
        (manifest(cand(tags=["ok", " "])), "tags[1]"),
        (manifest(cand(scope={"paths": ["../x"]})), "scope.paths[0]"),
        (manifest(cand(scope={"id": " "})), "scope.id"),
    ],
)
def test_strict_manifest_rejections(repo: Repo, ctx: Workspace, raw: dict[str, Any], where: str) -> None:
    before = tree(repo.root)
    with pytest.raises(ImportManifestError) as err:
        importer.plan(ctx, raw, actor="cli")
    assert err.value.code == "invalid_import_manifest" and where in err.value.message
    assert tree(repo.root) == before


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("empty.yml", "  \n"),
        ("list.yml", "- a\n"),
        ("bad.yml", "a: [\n"),
        ("dup.json", '{"version": 1, "version": 2}'),
        ("bad.json", "{"),
    ],
)
def test_unreadable_manifest_files(repo: Repo, ctx: Workspace, name: str, text: str) -> None:
    with pytest.raises(ImportManifestError) as err:
        importer.read_manifest(repo.write(name, text))
    assert err.value.code == "invalid_import_manifest"


def test_duplicates_against_inventory_and_earlier_candidates(repo: Repo, ctx: Workspace) -> None:
    raw = manifest(
        cand(),
        cand("local", title="Local note", body="Use make -j8.", type="procedure"),
        cand("session", title="Today", body="Chasing a flaky test."),
    )
    plan = importer.plan(ctx, raw, actor="zoki")
    result = importer_apply.apply(ctx, raw, plan_id=plan["plan_id"], actor="zoki")
    ids = [w.get("proposal_id") or w.get("record_id") for w in result["writes"]]
    assert ids == ["mem_import_verify-release-archives", "local-local-note", "session-today"]
    again = importer.plan(ctx, raw, actor="zoki")
    assert [c["action"]["kind"] for c in again["candidates"]] == ["duplicate"] * 3
    assert again["summary"]["duplicates"] == 3 and again["summary"]["create_proposals"] == 0
    assert [c["duplicates"] for c in again["candidates"]] == [
        [
            {
                "kind": "pending_proposal",
                "id": "mem_import_verify-release-archives",
                "destination": "repo",
                "candidate_index": None,
            }
        ],
        [{"kind": "runtime_record", "id": "local-local-note", "destination": "local", "candidate_index": None}],
        [{"kind": "runtime_record", "id": "session-today", "destination": "session", "candidate_index": None}],
    ]
    proposal_files.apply_packet(ctx, "mem_import_verify-release-archives", actor="zoki")
    twice = manifest(
        cand(body="  Check the SHA-256.  "), cand("discard", title="X", body="Check the SHA-256.", type="fact")
    )
    first, second = importer.plan(ctx, twice, actor="zoki")["candidates"]
    assert first["action"] == {
        "kind": "duplicate",
        "matches": [
            {
                "kind": "canonical_record",
                "id": "verify-release-archives-041d83",
                "destination": "repo",
                "candidate_index": None,
            }
        ],
    }
    assert second["duplicates"] == [
        {
            "kind": "canonical_record",
            "id": "verify-release-archives-041d83",
            "destination": "repo",
            "candidate_index": None,
        },
        {"kind": "earlier_candidate", "id": "candidate-0", "destination": None, "candidate_index": 0},
    ]


def test_same_title_reserves_the_next_proposal_id(ctx: Workspace) -> None:
    raw = manifest(cand(body="One."), cand(body="Two."))
    plan = importer.plan(ctx, raw, actor="cli")
    assert [c["action"]["proposal_id"] for c in plan["candidates"]] == [
        "mem_import_verify-release-archives",
        "mem_import_verify-release-archives-2",
    ]
    result = importer_apply.apply(ctx, raw, plan_id=plan["plan_id"], actor="cli")
    assert [w["proposal_id"] for w in result["writes"]] == [c["action"]["proposal_id"] for c in plan["candidates"]]


def test_non_repo_safe_repo_candidate_blocks_repo_writes_only(repo: Repo, ctx: Workspace) -> None:
    raw = manifest(
        cand(
            title="Private thing",
            body="Internal hostname layout.",
            sensitivity="sensitive",
            tags=["infra"],
            scope={"paths": ["ops/**"]},
        ),
        cand(title="Safe thing", body="Safe body."),
        cand("local", title="Mine", body="Local body.", type="fact"),
    )
    plan = importer.plan(ctx, raw, actor="cli")
    unsafe, safe, _local = plan["candidates"]
    assert plan["sources"] == [] and plan["summary"]["needs_review"] == 2 and plan["summary"]["local_writes"] == 1
    assert (unsafe["title"], unsafe["body"], unsafe["tags"], unsafe["scope"]) == (
        importer.UNSAFE_TITLE,
        importer.UNSAFE_BODY,
        [],
        {"kind": "repo", "id": None, "paths": []},
    )
    assert unsafe["classification"]["reason"] == importer.UNSAFE_REASON
    assert unsafe["action"]["kind"] == "blocked" and "sensitive" in unsafe["action"]["reason"]
    assert unsafe["content_hash"] == importer.body_hash("Internal hostname layout.")
    assert "Internal hostname" not in json.dumps(plan) and "Private thing" not in json.dumps(plan)
    assert safe["action"] == {"kind": "blocked", "reason": importer.SPLIT_REASON} and safe["title"] == "Safe thing"
    result = importer_apply.apply(ctx, raw, plan_id=plan["plan_id"], actor="cli")
    assert [w["kind"] for w in result["writes"]] == ["runtime_record"]
    assert not any(repo.root.glob(".memzoi/proposals/pending/*.md"))


def test_omitted_sensitivity_is_unknown_and_blocks(ctx: Workspace) -> None:
    c = cand()
    del c["sensitivity"]
    (out,) = importer.plan(ctx, manifest(c), actor="cli")["candidates"]
    assert out["sensitivity"] == "unknown" and out["action"]["kind"] == "blocked"


def test_prohibited_content_blocks_the_plan_and_is_never_echoed(repo: Repo, ctx: Workspace) -> None:
    token = secret()
    raw = manifest(
        cand("local", title="Deploy", body=f"Set DEPLOY_TOKEN={token} first.", type="procedure"),
        cand(title="Clean one", body="Nothing to see."),
    )
    before = tree(repo.root)
    plan = importer.plan(ctx, raw, actor="cli")
    out = json.dumps(plan)
    assert not any(token[i : i + 8] in out for i in range(len(token) - 7))
    assert (plan["status"], plan["data_class"], plan["sources"]) == ("blocked", "blocked", [])
    assert [c["title"] for c in plan["candidates"]] == [importer.BLOCKED_TITLE] * 2
    assert "Clean one" not in out and plan["summary"]["needs_review"] == 2
    assert {(d["index"], d["field"], d["code"]) for d in plan["diagnostics"]} == {
        (0, "body", "prohibited_content_detected")
    }
    with pytest.raises(ImportManifestError) as err:
        importer_apply.apply(ctx, raw, plan_id=plan["plan_id"], actor="cli")
    assert err.value.code == "blocked_import_plan" and token not in err.value.message
    assert tree(repo.root) == before
    in_source = manifest(cand(), sources=[{"url": f"https://example.org/?token={token}"}])
    assert importer.plan(ctx, in_source, actor="cli")["diagnostics"][0]["field"] == "sources[0].url"


def test_stale_plan_id_is_refused_with_zero_writes(repo: Repo, ctx: Workspace) -> None:
    raw = manifest(cand(), cand("local", title="Mine", body="Local body.", type="fact"))
    plan = importer.plan(ctx, raw, actor="cli")
    before = tree(repo.root)
    for wrong, actor in ((plan["plan_id"][:-1] + "0", "cli"), (plan["plan_id"], "zoki")):
        with pytest.raises(ImportManifestError) as err:
            importer_apply.apply(ctx, raw, plan_id=wrong, actor=actor)
        assert err.value.code == "stale_import_plan"
    repo.write(".memzoi/proposals/pending/mem_import_verify-release-archives.md", "placeholder\n")
    with pytest.raises(ImportManifestError) as err:  # the reserved id is taken since planning
        importer_apply.apply(ctx, raw, plan_id=plan["plan_id"], actor="cli")
    assert err.value.code == "stale_import_plan"
    (repo.root / ".memzoi/proposals/pending/mem_import_verify-release-archives.md").unlink()
    assert tree(repo.root) == before


def test_apply_routes_and_keeps_private_items_out_of_the_repo(repo: Repo, ctx: Workspace) -> None:
    raw = manifest(
        cand(scope={"paths": ["src/**"]}, tags=["release"]),
        cand("local", title="Local secretless note", body="Private local body.", type="fact"),
        cand("session", title="Today", body="Private session body."),
        cand("discard", title="Gone", body="Discarded body.", type="fact"),
        cand("needs_review", title="Unsure", body="Review body.", type="fact"),
    )
    plan = importer.plan(ctx, raw, actor="zoki")
    result = importer_apply.apply(ctx, raw, plan_id=plan["plan_id"], actor="zoki")
    assert (result["mode"], result["actor"], result["expected_plan_id"]) == ("apply", "zoki", plan["plan_id"])
    assert result["writes"] == [
        {
            "kind": "proposal_file",
            "index": 0,
            "proposal_id": "mem_import_verify-release-archives",
            "path": ".memzoi/proposals/pending/mem_import_verify-release-archives.md",
        },
        {"kind": "runtime_record", "index": 1, "record_id": "local-local-secretless-note", "destination": "local"},
        {"kind": "runtime_record", "index": 2, "record_id": "session-today", "destination": "session"},
    ]
    packet = proposal_files.show_packet(ctx.layout, "mem_import_verify-release-archives").packet
    assert packet is not None and (packet.status, packet.sensitivity, packet.proposed_by) == (
        "proposed",
        "repo-safe",
        "zoki",
    )
    assert (packet.paths, packet.tags, packet.origin["route"]) == (("src/**",), ("release",), "import")
    assert [s.path for s in packet.sources] == ["imports/source.yml"]
    assert not any(repo.root.glob(".memzoi/records/*.md"))  # never a canonical record directly
    repo.git("add", "-A")
    staged = repo.git("diff", "--cached", "--name-only").splitlines()
    assert ".memzoi/proposals/pending/mem_import_verify-release-archives.md" in staged
    for path in staged:
        text = (repo.root / path).read_text("utf-8")
        assert not any(b in text for b in ("Private local body", "Private session body", "Discarded", "Review body"))
    local = repo.root / ".git/memzoi/local/runtime/local/local-local-secretless-note.md"
    assert "Private local body." in local.read_text("utf-8")
