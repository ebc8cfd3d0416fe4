"""Reading memory over MCP (issue 18): the read_memory tool, the record/entry resource templates and the fixed
resources, the prompts, tool annotations on every tool and schema errors as structured results. ``git memzoi
mcp serve`` as a subprocess, driven by the SDK's own stdio client; results compared with the CLI's ``--json``."""

from __future__ import annotations

import json
from typing import Any

import pytest
from click.testing import CliRunner
from mcp import ClientSession
from mcp.shared.exceptions import MCPError

from git_memzoi.cli.memkeep import cli as memkeep_cli
from git_memzoi.cli.memzoi import cli
from git_memzoi.mcp import TOOL_NAMES
from git_memzoi.mcp.hints import TOOL_HINTS
from tests.mcp.test_mcp_server import NOW, call, cli_json, drive, record
from tests.support.repos import Repo, entry_text

BODY = "Run migrations with the migrate script.\n\n## Why\n\nBy hand they drift.\n\n## How\n\nmake migrate\n"


@pytest.fixture
def served(repo: Repo) -> Repo:
    """Records m1 (with sections Why and How) and r1 (a risk on src/billing/**), the entry billing-rule."""
    assert CliRunner().invoke(cli, ["-C", str(repo.root), "init"]).exit_code == 0
    record(repo, "m1", "Database migrations", BODY)
    record(
        repo, "r1", "Settlement order", "Reordering settlement double-charged.", "risk", applies_to=("src/billing/**",)
    )
    repo.write("agent-memory/entries/billing-rule.md", entry_text("billing-rule", anchor=None, scope=["src/**"]))
    repo.commit("seed")
    return repo


def test_the_catalogue(served: Repo) -> None:
    async def body(session: ClientSession) -> dict[str, Any]:
        return {
            "tools": (await session.list_tools()).tools,
            "resources": (await session.list_resources()).resources,
            "templates": (await session.list_resource_templates()).resource_templates,
            "prompts": (await session.list_prompts()).prompts,
        }

    out = drive(served.root, body)
    assert [t.name for t in out["tools"]] == list(TOOL_NAMES)
    assert "read_memory" in TOOL_NAMES
    assert sorted((str(r.uri), r.mime_type) for r in out["resources"]) == [
        ("memzoi://review-inbox", "application/json"),
        ("memzoi://session-context", "application/json"),
        ("memzoi://status", "application/json"),
    ]
    assert sorted(t.uri_template for t in out["templates"]) == ["memzoi://entry/{id}", "memzoi://record/{+id}"]
    prompts = {p.name: p for p in out["prompts"]}
    assert sorted(prompts) == ["before_editing", "resume_work_here"]
    assert [(a.name, a.required) for a in prompts["before_editing"].arguments or []] == [("path", True)]
    described = {(p.name, a.name): a.description for p in prompts.values() for a in p.arguments or []}
    assert described == {
        ("before_editing", "path"): "The file or folder about to change, repository-relative.",
        ("resume_work_here", "task"): "The task to hand over (optional): adds its handoff pack.",
    }
    assert [(a.name, a.required) for a in prompts["resume_work_here"].arguments or []] == [("task", False)]
    assert (prompts["before_editing"].title, prompts["resume_work_here"].title) == (
        "Before editing PATH",
        "Resume work here",
    )


def test_every_tool_carries_all_four_annotations(served: Repo) -> None:
    """Loops over what the server lists: a tool added without annotations fails here."""

    async def body(session: ClientSession) -> list[Any]:
        return (await session.list_tools()).tools

    tools = drive(served.root, body)
    assert tools
    for tool in tools:
        hints = tool.annotations
        assert hints is not None, tool.name
        wire = hints.model_dump(by_alias=True, exclude_none=True)
        assert {"readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"} <= set(wire), tool.name
        assert wire["openWorldHint"] is False
        expected = TOOL_HINTS[tool.name]
        assert (wire["readOnlyHint"], wire["destructiveHint"], wire["idempotentHint"]) == (
            expected.read_only,
            expected.destructive,
            expected.idempotent,
        ), tool.name
    writers = sorted(t.name for t in tools if not t.annotations.read_only_hint)
    assert writers == ["propose_memory", "submit_capture_decisions_v1"]
    assert not any(t.annotations.destructive_hint for t in tools)  # nothing deletes or overwrites memory


def test_read_resources(served: Repo) -> None:
    async def body(session: ClientSession) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, uri in (
            ("record", "memzoi://record/m1"),
            ("prefix", "memzoi://record/r"),
            ("entry", "memzoi://entry/billing-rule"),
            ("status", "memzoi://status"),
            ("review", "memzoi://review-inbox"),
            ("session", "memzoi://session-context"),
        ):
            (content,) = (await session.read_resource(uri)).contents
            out[key] = (content.mime_type, json.loads(content.text))
        (content,) = (await session.read_resource("memzoi://record/team/nested")).contents
        out["nested"] = json.loads(content.text)
        for key, uri in (
            ("missing", "memzoi://record/nope"),
            ("wrong_store", "memzoi://entry/m1"),
            ("unknown", "memzoi://bogus"),
            ("traversal", "memzoi://record/team/../m1"),
        ):
            with pytest.raises(MCPError) as caught:
                await session.read_resource(uri)
            out[key] = (caught.value.code, caught.value.data)
        return out

    record(served, "team/nested", "A record in a subfolder", "Read by its whole id.")
    out = drive(served.root, body)
    assert out["record"] == ("application/json", cli_json(served, "show", "m1", "--store", "records"))
    assert out["nested"] == cli_json(served, "show", "team/nested", "--store", "records")
    assert out["prefix"][1]["id"] == "r1"
    assert out["entry"] == ("application/json", cli_json(served, "show", "billing-rule", "--store", "entries"))
    assert out["status"][1] == {**cli_json(served, "status", tool=memkeep_cli), "other_stores": []}
    assert out["review"][1] == cli_json(served, "review")  # without ok, as every MCP result
    assert out["session"][1]["text"].startswith("# Memzoi session context\nMemory: 3 record(s), 1 entry;")
    assert out["missing"] == (-32602, {"code": "target_not_found", "uri": "memzoi://record/nope"})
    assert out["wrong_store"] == (-32602, {"code": "target_not_found", "uri": "memzoi://entry/m1"})
    assert out["unknown"] == (-32602, {"code": "unknown_resource", "uri": "memzoi://bogus"})
    assert out["traversal"][0] == -32602  # the SDK's own check: `..` never reaches a file


def test_memory_status_carries_each_subfolder_stores_status(served: Repo) -> None:
    """A store in ``svc/`` (what ``git memkeep`` started there reads): its suspects reach the agent too; they
    were in no MCP answer (a fresh user's walk)."""
    base = served.git("rev-parse", "HEAD")
    served.commit("svc store", **{"svc/app.py": "x = 1\n"})
    served.commit(
        "svc entry", **{"svc/agent-memory/entries/svc-port.md": entry_text("svc-port", anchor=base, scope=["svc/**"])}
    )

    async def body(session: ClientSession) -> tuple[bool, dict[str, Any]]:
        return call(await session.call_tool("memory_status", {}))

    is_error, payload = drive(served.root, body)
    svc = CliRunner().invoke(memkeep_cli, ["-C", str(served.root / "svc"), "status", "--json"], env={"MEMZOI_NOW": NOW})
    nested = json.loads(svc.stdout)
    assert not is_error and nested["store"] == "svc/agent-memory"
    assert payload["other_stores"] == [nested]
    assert [(v["id"], v["reason"]) for v in nested["verdicts"]] == [("svc-port", "scope_hit")]
    assert {k: v for k, v in payload.items() if k != "other_stores"} == cli_json(served, "status", tool=memkeep_cli)


def test_status_without_a_memkeep_store_names_the_servers_setting_not_cli_flags(repo: Repo) -> None:
    """A fresh user's walk: the refusal told the agent to pass --store / --store-dir, flags an MCP client has not."""
    assert CliRunner().invoke(cli, ["-C", str(repo.root), "init"]).exit_code == 0
    record(repo, "m1", "Database migrations", BODY)

    async def body(session: ClientSession) -> tuple[Any, ...]:
        tool = call(await session.call_tool("memory_status", {}))
        with pytest.raises(MCPError) as caught:
            await session.read_resource("memzoi://status")
        return tool, caught.value.message, caught.value.data

    (is_error, payload), message, data = drive(repo.root, body)
    assert is_error and payload["error"]["code"] == "store_not_found"
    assert payload["error"]["message"] == message
    assert message.endswith(
        "(start one: mkdir -p agent-memory/entries, write a first entry there, git memkeep index; or start the"
        " server with MEMKEEP_STORE=<store folder>)"
    )
    assert "--store" not in message
    assert data == {"code": "store_not_found", "uri": "memzoi://status"}


def test_prompts(served: Repo) -> None:
    async def body(session: ClientSession) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, name, args in (
            ("resume", "resume_work_here", None),
            ("resume_task", "resume_work_here", {"task": "run migrations"}),
            ("edit", "before_editing", {"path": "src/billing/settle.py"}),
            ("quiet", "before_editing", {"path": "docs/readme.md"}),
        ):
            (message,) = (await session.get_prompt(name, args)).messages
            out[key] = (message.role, message.content.text)
        for key, name, args in (
            ("outside", "before_editing", {"path": "../outside"}),
            ("no_path", "before_editing", {}),
            ("extra", "before_editing", {"path": "a", "colour": "b"}),
            ("no_prompt", "nope", {}),
        ):
            with pytest.raises(MCPError) as caught:
                await session.get_prompt(name, args)
            out[key] = (caught.value.code, caught.value.data, caught.value.message)
        return out

    out = drive(served.root, body)
    role, resume = out["resume"]
    assert role == "user" and resume.startswith("Resume work in this repository.")
    assert "\n\n# Memzoi session context\nMemory: 2 record(s), 1 entry;" in resume
    assert "# Memzoi Handoff\nTask: run migrations" in out["resume_task"][1]
    assert "m1" in out["resume_task"][1]
    edit = out["edit"][1]
    assert edit.startswith("Before editing src/billing/settle.py: these project memories apply to it.")
    assert edit.endswith(
        "\n\n- [info] entry billing-rule (src/**): A claim that holds.\n"
        "  SUSPECT: anchor_unreachable: no anchor recorded: the claim was never tied to a commit\n"
        "  next: Read the cited memkeep entry before editing; it covers this path. This memory is suspect "
        "(anchor_unreachable): check whether it still holds before relying on it.\n"
        "- [high] record r1 (src/billing/**): Settlement order: Reordering settlement double-charged.\n"
        "  next: Review the cited risk before editing and consider a targeted test.\n"
    )
    assert out["quiet"] == (
        "user",
        "No risk, warning or failed attempt in the project memory applies to docs/readme.md.\n",
    )
    assert out["outside"][:2] == (-32602, {"code": "path_outside_repo", "prompt": "before_editing"})
    # the SDK alone answered these three with code 0, no data and a traceback in the server's log
    assert out["no_path"] == (
        -32602,
        {
            "code": "invalid_arguments",
            "prompt": "before_editing",
            "problems": [{"argument": "path", "problem": "missing"}],
        },
        "before_editing: arguments do not fit the prompt (path: missing)",
    )
    assert out["extra"][:2] == (
        -32602,
        {
            "code": "invalid_arguments",
            "prompt": "before_editing",
            "problems": [{"argument": "colour", "problem": "unknown"}],
        },
    )
    assert out["no_prompt"] == (-32602, {"code": "unknown_prompt", "prompt": "nope"}, "Unknown prompt: nope")


def test_read_memory_tool_matches_show(served: Repo) -> None:
    async def body(session: ClientSession) -> dict[str, Any]:
        calls = {
            "whole": {"memory_id": "m1"},
            "sections": {"memory_id": "m1", "heading_paths": [["Database migrations", "How"]], "max_chars": 8},
            "metadata": {"memory_id": "billing-rule", "projection": "metadata"},
            "not_found": {"memory_id": "nope"},
            "no_heading": {"memory_id": "m1", "heading_paths": [["Nope"]]},
            "bad_projection": {"memory_id": "m1", "projection": "outline"},
            "negative": {"memory_id": "m1", "max_chars": -1},
        }
        return {key: call(await session.call_tool("read_memory", args)) for key, args in calls.items()}

    out = drive(served.root, body)
    assert out["whole"] == (False, cli_json(served, "show", "m1"))
    sections = cli_json(served, "show", "m1", "--heading", "Database migrations/How", "--max-chars", "8")
    assert out["sections"] == (False, sections)
    assert sections["context"]["slices"][0]["text"] == "## How\n\n"
    assert out["metadata"] == (False, cli_json(served, "show", "billing-rule", "--projection", "metadata"))
    assert {key: out[key][1]["error"]["code"] for key in ("not_found", "no_heading", "bad_projection", "negative")} == {
        "not_found": "target_not_found",
        "no_heading": "target_not_found",
        "bad_projection": "invalid_projection",
        "negative": "bad_max_chars",
    }
    negative = CliRunner().invoke(cli, ["-C", str(served.root), "show", "m1", "--max-chars", "-1", "--json"])
    assert (negative.exit_code, json.loads(negative.stdout)["error"]) == (
        2,
        {**out["negative"][1]["error"], "exit_code": 2},
    )


def test_schema_errors_are_structured_with_a_stable_code(served: Repo) -> None:
    secret = "do-not-echo-this-value"

    async def body(session: ClientSession) -> dict[str, Any]:
        calls = {
            "wrong_type": ("read_memory", {"memory_id": 5}),
            "missing": ("read_memory", {}),
            "unknown": ("read_memory", {"memory_id": "m1", "colour": secret}),
            "nested": ("read_memory", {"memory_id": "m1", "heading_paths": [secret]}),
            "search": ("search_memory", {"query": ["x"], "limit": "ten"}),
            "bool_for_int": ("search_memory", {"query": "x", "limit": True}),
            "text_for_int": ("search_memory", {"query": "x", "limit": "1"}),
            "float_for_int": ("search_memory", {"query": "x", "limit": 1.0}),
            "text_for_bool": ("search_memory", {"query": "x", "include_superseded": "yes"}),
            "int_for_bool": ("search_memory", {"query": "x", "include_superseded": 1}),
            "text_for_budget": ("read_memory", {"memory_id": "m1", "max_chars": "5"}),
        }
        return {key: call(await session.call_tool(name, args)) for key, (name, args) in calls.items()}

    out = drive(served.root, body)
    for key, (failed, payload) in out.items():
        assert failed and payload["error"]["code"] == "invalid_arguments", key
        assert secret not in json.dumps(payload)
    problems = {key: [(p["argument"], p["problem"]) for p in out[key][1]["error"]["problems"]] for key in out}
    assert problems == {
        "wrong_type": [("memory_id", "wrong_type")],
        "missing": [("memory_id", "missing")],
        "unknown": [("colour", "unknown")],
        "nested": [("heading_paths.0", "wrong_type")],
        "search": [("query", "wrong_type"), ("limit", "wrong_type")],
        "bool_for_int": [("limit", "wrong_type")],  # converted to 1 before: a fresh user's walk found it
        "text_for_int": [("limit", "wrong_type")],
        "float_for_int": [("limit", "wrong_type")],
        "text_for_bool": [("include_superseded", "wrong_type")],
        "int_for_bool": [("include_superseded", "wrong_type")],
        "text_for_budget": [("max_chars", "wrong_type")],
    }
    assert out["missing"][1]["error"]["message"] == (
        "read_memory: arguments do not fit the tool's schema (memory_id: Field required)"
    )


def test_hints_name_exactly_the_registered_tools() -> None:
    """A tool added to TOOL_NAMES without a row in TOOL_HINTS cannot be served (build_server fails), and a row
    for a tool that is gone is caught here."""
    assert sorted(TOOL_HINTS) == sorted(TOOL_NAMES)


def test_tool_descriptions_carry_no_code_indentation(served: Repo) -> None:
    async def body(session: ClientSession) -> dict[str, str]:
        return {tool.name: tool.description or "" for tool in (await session.list_tools()).tools}

    descriptions = drive(served.root, body)
    assert all(descriptions.values())
    assert [name for name, text in descriptions.items() if "\n    " in text] == []
    assert descriptions["search_memory"].startswith("Search current repository records and memkeep entries")


def test_closed_value_sets_are_listed_in_the_schemas_and_refused_with_the_clis_codes(served: Repo) -> None:
    """A client sees the values of mode, store, projection and approval_mode (an ``enum`` in the argument's
    string branch); another value is still refused by the tool with the CLI's code, not as a schema error."""

    async def body(session: ClientSession) -> dict[str, Any]:
        tools = {tool.name: tool.input_schema["properties"] for tool in (await session.list_tools()).tools}
        refused = {
            "mode": call(await session.call_tool("search_memory", {"query": "x", "mode": "fuzzy"})),
            "store": call(await session.call_tool("search_memory", {"query": "x", "store": "both"})),
        }
        return {"tools": tools, "refused": refused}

    out = drive(served.root, body)
    tools = out["tools"]
    modes = ["lexical", "semantic", "hybrid"]
    assert tools["search_memory"]["mode"]["anyOf"] == [{"enum": modes, "type": "string"}, {"type": "null"}]
    assert tools["search_memory"]["store"] == {
        "default": "all",
        "enum": ["records", "entries", "all"],
        "title": "Store",
        "type": "string",
    }
    assert tools["read_memory"]["projection"]["anyOf"][0]["enum"] == ["metadata", "sections", "full"]
    assert tools["propose_memory"]["approval_mode"]["anyOf"][0]["enum"] == ["auto", "manual"]
    with_mode = sorted(name for name, props in tools.items() if "mode" in props)
    assert all(tools[name]["mode"]["anyOf"][0]["enum"] == modes for name in with_mode)
    assert with_mode == ["build_context_pack", "precheck_action", "precheck_command", "search_memory"]
    assert {key: payload["error"]["code"] for key, (failed, payload) in out["refused"].items() if failed} == {
        "mode": "invalid_mode",
        "store": "invalid_store",
    }


def test_precheck_says_a_record_file_it_cannot_read_is_left_out(served: Repo) -> None:
    """A risk whose file is broken may be the one that applies: precheck (CLI and the before_editing prompt)
    says a record file is left out, as search does, instead of an unqualified "nothing applies"."""
    broken = served.root / ".memzoi" / "records" / "r1.md"
    broken.write_text("---\ntitle: [unclosed\n---\nbody\n", encoding="utf-8")
    note = {
        "code": "unreadable_records",
        "path": ".memzoi/records/r1.md",
        "message": "1 record file(s) cannot be read and are left out: .memzoi/records/r1.md (`git memzoi doctor` says why)",
    }
    assert cli_json(served, "precheck", "--path", "docs/guide.md", "--store", "records")["notes"][-1] == note

    async def body(session: ClientSession) -> str:
        (message,) = (await session.get_prompt("before_editing", {"path": "docs/guide.md"})).messages
        return message.content.text

    assert drive(served.root, body).endswith(f"\nNote: {note['message']}\n")
