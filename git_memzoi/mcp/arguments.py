"""Tool arguments over MCP: strict schemas and their errors as structured tool results (issue 18).

A call whose arguments do not fit the tool's schema (a wrong type, a missing required argument, an unknown one)
comes back as a tool error shaped as core errors are (``{"error": {code, message, problems}}``, ``isError``),
code ``invalid_arguments``; each problem names the argument and what is wrong with it, never the value given
(the caller's data is not echoed). An argument that would make a call write canonical memory or choose an
output path (memzoi-spec §8 tool rules, :data:`MUTATING_ARGUMENTS`) is ``mutation_refused``. A call to a tool
the server does not have is ``unknown_tool``.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.tools import Tool
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import ConfigDict, ValidationError, model_validator

from git_memzoi.core import jsonout
from git_memzoi.core.patterns import lazy
from git_memzoi.mcp.hints import TOOL_HINTS

if TYPE_CHECKING:
    from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase

MUTATING_ARGUMENTS = frozenset({"apply", "auto_apply", "approve", "review", "output", "output_path", "out"})
SCHEMA_ERROR = "invalid_arguments"
MUTATION_ERROR = "mutation_refused"
PROBLEMS = {"missing": "missing", "extra_forbidden": "unknown"}  # pydantic error type → problem; else wrong_type


def plain(payload: Mapping[str, Any]) -> dict[str, Any]:
    """``payload`` without a top-level ``ok``: some core objects carry one for their command's ``--json``, but
    over MCP the result's ``isError`` says it (docs/memzoi.md "JSON output"), for every tool and resource alike."""
    return {k: v for k, v in payload.items() if k != "ok"}


def ok(payload: Mapping[str, Any]) -> CallToolResult:
    """A tool result carrying ``payload`` (:func:`plain`) as structured content and as its JSON text."""
    payload = plain(payload)
    text = jsonout.dumps(payload)
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=payload)


def error(code: str, message: str, **extra: Any) -> CallToolResult:
    """A tool error ``{"error": {code, message, **extra}}`` (``isError``), as structured content and text."""
    payload = {"error": {"code": code, "message": message, **extra}}
    text = jsonout.dumps(payload)
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=payload, is_error=True)


@functools.cache
def tool_arguments(impl: type) -> frozenset[str]:
    """Every argument name of the tools of ``impl`` (the server's tool class; :data:`~git_memzoi.mcp.TOOL_NAMES`),
    for :func:`in_tool_terms`."""
    from git_memzoi.mcp import TOOL_NAMES

    return frozenset(
        name for tool in TOOL_NAMES for name in inspect.signature(getattr(impl, tool)).parameters if name != "self"
    )


def in_tool_terms(message: str, arguments: frozenset[str]) -> str:
    """``message`` (a core error's, worded for the command line) with each ``--option`` that names a tool
    argument spelled as that argument: ``--as-of`` → ``as_of``, ``--relation`` → ``relations`` (the plural
    list argument); an option no tool takes, and any inside a quoted command (`` `git memzoi show --json` ``), is
    left as written. An agent calling a tool has no flags to look up."""
    parts = message.split("`")
    for n in range(0, len(parts), 2):  # the even parts lie outside backquotes
        parts[n] = _OPTION.sub(lambda m: _argument(m.group(1), arguments) or m.group(0), parts[n])
    return "`".join(parts)


def _argument(option: str, arguments: frozenset[str]) -> str | None:
    name = option.replace("-", "_")
    return next((n for n in (name, f"{name}s") if n in arguments), None)


_OPTION = lazy(r"(?<![\w-])--([a-z][a-z0-9]*(?:-[a-z0-9]+)*)")


class MutationRefused(ValueError):
    """A mutating argument (:data:`MUTATING_ARGUMENTS`) in a call."""


def _refuse_mutation(data: Any) -> Any:
    if isinstance(data, dict):
        bad = sorted(MUTATING_ARGUMENTS & set(data))
        if bad:
            raise MutationRefused(
                f"MCP never applies, approves or writes outputs: argument(s) {', '.join(bad)} refused"
            )
    return data


def schema_error(tool: str, exc: ValidationError) -> CallToolResult:
    """The structured tool error for arguments that failed ``tool``'s schema (module docstring)."""
    refused = [e["ctx"]["error"] for e in exc.errors() if isinstance(e.get("ctx", {}).get("error"), MutationRefused)]
    if refused:
        return error(MUTATION_ERROR, str(refused[0]))
    problems = [
        {
            "argument": ".".join(str(part) for part in e["loc"]) or None,
            "problem": PROBLEMS.get(e["type"], "wrong_type"),
            "message": e["msg"],
        }
        for e in exc.errors(include_input=False, include_url=False)
    ]
    named = "; ".join(f"{p['argument']}: {p['message']}" for p in problems)
    return error(SCHEMA_ERROR, f"{tool}: arguments do not fit the tool's schema ({named})", problems=problems)


class CheckedTool(Tool):
    """A tool whose arguments are checked first: a schema error is a structured result (:func:`schema_error`),
    never the SDK's plain-text one; everything else runs as the SDK runs it."""

    async def run(self, arguments: dict[str, Any], context: Any, convert_result: bool = False) -> Any:
        """Validate ``arguments`` (a failure becomes :func:`schema_error`), then run the tool."""
        try:
            self.fn_metadata.validate_arguments(arguments)
        except ValidationError as exc:
            return schema_error(self.name, exc)
        return await super().run(arguments, context, convert_result=convert_result)


def checked(
    fn: Callable[..., Any], name: str, annotations: Any, choices: Mapping[str, Sequence[str]] | None = None
) -> CheckedTool:
    """The tool ``name`` over ``fn`` with ``annotations``, rejecting unknown arguments (and naming mutating ones)
    instead of silently ignoring them, and values of another JSON type instead of converting them (pydantic's
    strict mode: an integer argument takes only a JSON integer, a boolean only ``true``/``false``; a number
    argument also takes an integer). ``choices``: argument name → its closed set of values, listed in the
    schema (:func:`with_choices`).

    The SDK reads ``fn_metadata.arg_model`` on each call, so a stricter subclass takes effect as a field swap.
    """
    description = inspect.cleandoc(fn.__doc__ or "")  # the docstring without its code indentation
    tool = CheckedTool.from_function(
        fn, name=name, description=description, structured_output=False, annotations=annotations
    )
    assert isinstance(tool, CheckedTool)
    base = tool.fn_metadata.arg_model
    refuse = classmethod(lambda cls, data: _refuse_mutation(data))
    namespace = {  # strict: `true`, `"1"` or `1.0` for an integer, `"yes"` or `1` for a boolean, are wrong types
        "model_config": ConfigDict(extra="forbid", strict=True),
        "_refuse": model_validator(mode="before")(refuse),  # type: ignore[arg-type]  # pydantic's stubs take a def, not a classmethod object
    }
    strict: type[ArgModelBase] = type(base.__name__, (base,), namespace)
    tool.fn_metadata.arg_model = strict
    tool.parameters = with_choices(strict.model_json_schema(by_alias=True), choices or {})
    return tool


def with_choices(schema: dict[str, Any], choices: Mapping[str, Sequence[str]]) -> dict[str, Any]:
    """``schema`` (a tool's input JSON schema, changed in place and returned) with each string property named in
    ``choices`` listing its values as an ``enum`` (in an optional one's string branch), so a client can offer
    them. The schema only describes: the tool itself still refuses another value with its own code
    (``invalid_mode``, ``invalid_store`` ...), as the CLI does, rather than as a schema error."""
    for argument, values in choices.items():
        prop = schema.get("properties", {}).get(argument)
        if prop is None:
            continue
        for branch in prop.get("anyOf", [prop]):
            if branch.get("type") == "string":
                branch["enum"] = list(values)
    return schema


class MemzoiServer(MCPServer[Any]):
    """The SDK's server, but every refusal carries a stable code: a call to a tool it does not have is a
    structured ``unknown_tool`` error; a prompt it does not have, or arguments a prompt does not take, a JSON-RPC
    error ``-32602`` with ``data: {"code", "prompt"}`` (``unknown_prompt``, ``invalid_arguments`` with its
    ``problems``); a URI no resource matches, ``-32602`` with ``data: {"code": "unknown_resource", "uri"}``."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        """Call the tool ``name``; an unknown name is ``{"error": {"code": "unknown_tool", ...}}``."""
        if self._tool_manager.get_tool(name) is None:
            return error("unknown_tool", f"Unknown tool: {name}")
        return await super().call_tool(name, arguments, context)

    async def get_prompt(self, name: str, arguments: dict[str, Any] | None = None, context: Any = None) -> Any:
        """Render the prompt ``name`` once its name and arguments are checked (class docstring); the SDK alone
        answers these with error code 0 and logs a traceback."""
        prompt = self._prompt_manager.get_prompt(name)
        if prompt is None:
            raise _refused(f"Unknown prompt: {name}", {"code": "unknown_prompt", "prompt": name})
        taken = {argument.name: argument.required for argument in prompt.arguments or ()}
        given = set(arguments or {})
        problems = [
            {"argument": a, "problem": "missing"} for a in sorted(a for a, r in taken.items() if r) if a not in given
        ]
        problems += [{"argument": a, "problem": "unknown"} for a in sorted(given - set(taken))]
        if problems:
            named = "; ".join(f"{p['argument']}: {p['problem']}" for p in problems)
            data = {"code": SCHEMA_ERROR, "prompt": name, "problems": problems}
            raise _refused(f"{name}: arguments do not fit the prompt ({named})", data)
        return await super().get_prompt(name, arguments, context)

    async def read_resource(self, uri: Any, context: Any = None) -> Any:
        """Read the resource at ``uri``; one that no resource or template matches is ``unknown_resource``."""
        from mcp.server.mcpserver.exceptions import ResourceNotFoundError

        try:
            return await super().read_resource(uri, context)
        except ResourceNotFoundError:
            raise _refused(f"Unknown resource: {uri}", {"code": "unknown_resource", "uri": str(uri)}) from None


def _refused(message: str, data: dict[str, Any]) -> Exception:
    """A JSON-RPC ``-32602`` (invalid params) error carrying ``data``."""
    from mcp.shared.exceptions import MCPError
    from mcp.types import INVALID_PARAMS

    return MCPError(code=INVALID_PARAMS, message=message, data=data)


def annotations_of(name: str) -> ToolAnnotations:
    """The MCP annotations of the tool ``name`` from :data:`~git_memzoi.mcp.hints.TOOL_HINTS`.

    Raises:
        KeyError: a tool without hints (no tool is served unannotated).
    """
    hints = TOOL_HINTS[name]
    return ToolAnnotations(
        title=hints.title,
        read_only_hint=hints.read_only,
        destructive_hint=hints.destructive,
        idempotent_hint=hints.idempotent,
        open_world_hint=False,
    )
