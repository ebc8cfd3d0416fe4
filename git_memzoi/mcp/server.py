"""``git memzoi mcp serve``: the stdio MCP server (memzoi-spec §8, seed "MCP tools"); the only ``mcp`` importer.

stdout is the wire (field report BR-03, aesthetics habit 23): nothing here prints, the SDK logs to stderr, and
Python warnings are routed to stderr too. Every tool opens the repository fresh, calls the same core function
as the CLI and returns the CLI's ``--json`` object as structured content (and as text). A
:class:`~git_memzoi.errors.MemzoiError` becomes a tool error ``{"error": {code, message}}``; anything else
becomes the SDK's generic tool error: the server never crashes on a call. MCP never applies, approves,
rejects or exports canonical memory: there are no tools for that, and ``propose_memory`` refuses ``apply``-like
arguments. ``submit_capture_decisions_v1`` writes what ``capture apply`` writes (pending proposal packets for a
maintainer, private runtime records), never a canonical record. The caller is an agent: its proposals wait for
review unless a human opted agents in (records/policy.py), and ``review_inbox`` lists what waits, counted as
handoff and doctor count it.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.tools import Tool
from mcp.types import CallToolResult

from git_memzoi import __version__
from git_memzoi.errors import MemzoiError
from git_memzoi.mcp import TOOL_NAMES
from git_memzoi.mcp.arguments import MemzoiServer, annotations_of, checked, in_tool_terms, tool_arguments
from git_memzoi.mcp.arguments import error as _error
from git_memzoi.mcp.arguments import ok as _ok
from git_memzoi.mcp.refusals import ToolFailure, capture_source

if TYPE_CHECKING:
    from git_memzoi.memzoi import recall_schema

__all__ = ["TOOL_NAMES", "build_server", "serve"]

APPROVAL_MODES = ("auto", "manual")  # propose_memory's approval_mode (auto is refused: agent_self_approval)

INSTRUCTIONS = (
    "Governed project memory kept in this git repository. Search and precheck before editing; build "
    "a context pack for a task; propose_memory records a proposal for human review (pending) and never "
    "applies it; review_inbox lists what waits for review; read_memory (or the memzoi://record/{+id} and "
    "memzoi://entry/{id} resources) reads one memory by id, whole or by heading within a budget. To capture a "
    "Markdown file: plan_capture_v1, ask your user to accept, edit, reject or defer each candidate, then "
    "submit_capture_decisions_v1 with the plan_id. Records marked suspect may be stale: verify before relying on "
    "them."
)

logger = logging.getLogger("git_memzoi.mcp")


def _pick(name: str, first: str | None, second: str | None, second_name: str) -> str | None:
    """One value from two alias arguments (``scope_kind`` | ``scope``); both given and different is an error."""
    if first is not None and second is not None and first != second:
        raise ToolFailure(f"{name} and {second_name} are aliases; give one", "conflicting_arguments")
    return first if first is not None else second


class _Server:
    """The tool bodies, bound to one project root; each call opens a fresh :class:`Context` over the layout the
    first call found (the repository is looked up once; the per-call checks, such as healing an interrupted
    operation, still run).

    With ``watch`` (the served process), the first call starts a file-system watcher on the repository's record
    folders, so later calls skip the index's freshness walk while nothing changed (memzoi/recall/index/watch.py).
    """

    def __init__(self, root: Path, watch: bool = False) -> None:
        self.root = root
        self.watch = watch
        self._layout: Any = None  # the repository found by the first call, reused by the next (issue 17)

    def _clock(self) -> Any:
        from git_memzoi.core import clock as clocks

        return clocks.from_environment(os.environ)

    def _context(self, actor: str | None = None) -> Any:
        from git_memzoi.memzoi import workspace

        ctx = workspace.open_workspace(self.root, clock=self._clock(), actor=actor, layout=self._layout)
        self._layout = ctx.layout
        if self.watch:
            from git_memzoi.memzoi import index_watch

            index_watch.watch(ctx.layout)  # idempotent; False (walk on every call) when it cannot start
        return ctx

    def workspace(self) -> Any:
        """A fresh :class:`~git_memzoi.memzoi.workspace.Workspace` of the repository (resources and prompts)."""
        return self._context()

    def _view(self, as_of: str | None, include_superseded: bool) -> Any:
        """The workspace recalling as of ``as_of`` (``invalid_as_of`` when it is no instant or date)."""
        from git_memzoi.memzoi import validity

        return self._context().viewing(validity.parse_as_of(as_of), include_superseded)

    def run(self, body: Callable[[], Mapping[str, Any]]) -> CallToolResult:
        """Call ``body``; its expected failures become structured tool errors, never a crash."""
        try:
            return _ok(body())
        except MemzoiError as exc:
            return _error(exc.code, in_tool_terms(exc.message, tool_arguments(_Server)))

    def search_memory(
        self,
        query: str,
        scope_kind: str | None = None,
        scope: str | None = None,
        type: str | None = None,
        memory_type: str | None = None,
        path: str | None = None,
        path_prefix: str | None = None,
        limit: int = 10,
        store: str = "all",
        as_of: str | None = None,
        include_superseded: bool = False,
        mode: str | None = None,
    ) -> CallToolResult:
        """Search current repository records and memkeep entries by their words (lexical: BM25), their meaning
        (semantic) or both (hybrid: Reciprocal Rank Fusion), best first; suspect ones are marked (and follow
        trusted ones of equal rank); each result names its store (record or entry) and its scores.

        Args: query (any text); scope_kind|scope; type|memory_type; path|path_prefix (an ancestor,
        descendant or /** glob, repository-relative); limit (0 means 10, at most 100); store (records,
        entries or all); as_of (ISO 8601 instant with a zone, or a date; default now); include_superseded;
        mode (lexical, semantic or hybrid; default: the repository's [recall] mode).
        """
        from git_memzoi.memzoi import search

        def body() -> recall_schema.SearchJson:
            kind = _pick("scope_kind", scope_kind, scope, "scope")
            mtype = _pick("type", type, memory_type, "memory_type")
            where = _pick("path", path, path_prefix, "path_prefix")
            if limit < 0:
                raise ToolFailure("limit must be 0 or more", "bad_limit")
            return search.search(
                self._view(as_of, include_superseded),
                query,
                scope_kind=kind,
                memory_type=mtype,
                path=where,
                limit=limit,
                store=store,
                mode=mode,
            ).to_json()

        return self.run(body)

    def inspect_memory_expiry(self, record_id: str) -> CallToolResult:
        """Explain whether a record is a current assertion now, and why (never changes anything)."""
        from git_memzoi.memzoi import workspace

        return self.run(lambda: workspace.expiry(self._context(), record_id))

    def build_context_pack(
        self,
        task: str,
        path: str | None = None,
        path_prefix: str | None = None,
        token_budget: int | None = None,
        include_local: bool = False,
        include_session: bool = False,
        store: str = "all",
        as_of: str | None = None,
        include_superseded: bool = False,
        expand: bool = False,
        mode: str | None = None,
    ) -> CallToolResult:
        """A prompt-ready context pack for a task within token_budget (counted in approximate words, default 400); the task
        matched in mode (lexical, semantic or hybrid; default: the repository's [recall] mode).

        Repository records and memkeep entries (store: records, entries or all) unless include_local /
        include_session add runtime memory; a suspect memory is packed after trusted ones of the same relevance.
        as_of (ISO 8601 instant with a zone, or a date; default now) and include_superseded look at the past.
        expand: also pack the records the candidates' relations reach, in the same budget, each cited with its
        relation (included[].relation), as context --expand.
        """
        from git_memzoi.memzoi import context_pack

        def body() -> recall_schema.ContextPackJson:
            where = _pick("path", path, path_prefix, "path_prefix")
            return context_pack.build(
                self._view(as_of, include_superseded),
                task,
                path=where,
                token_budget=token_budget,
                include_local=include_local,
                include_session=include_session,
                store=store,
                expand=expand,
                mode=mode,
            ).to_json()

        return self.run(body)

    def related_memory(
        self, record_id: str, role: list[str] | None = None, direction: str = "both", depth: int = 1
    ) -> CallToolResult:
        """The current records a record's relations reach (and those naming it), each with the relation that
        brought it (via): the same object as `git memzoi related --json`. Read-only; broken relations are listed
        under broken, never invented. role: only these roles (every hop); direction: outgoing, incoming or both;
        depth: 1 or 2."""
        from git_memzoi.memzoi import related

        return self.run(
            lambda: related.related(
                self._context(), record_id, roles=role or (), direction=direction, depth=depth
            ).to_json()
        )

    def propose_memory(
        self,
        title: str,
        body: str,
        type: str | None = None,
        memory_type: str | None = None,
        scope_kind: str | None = None,
        scope: str | None = None,
        scope_id: str | None = None,
        visibility: str | None = None,
        sensitivity: str | None = None,
        tags: list[str] | None = None,
        source_kind: str | None = None,
        source_ref: str | None = None,
        confidence: float | None = None,
        actor: str | None = None,
        approval_mode: str | None = None,
        applies_to: list[str] | None = None,
        scope_globs: list[str] | None = None,
        anchor: str | None = None,
        ttl_days: int | None = None,
        check: str | None = None,
        check_safe: bool = False,
        valid_from: str | None = None,
        valid_to: str | None = None,
        relations: list[str] | None = None,
    ) -> CallToolResult:
        """Record a memory proposal for human review: the result's status is pending. Never applies or approves.

        Approval policy for agent proposals (docs/memzoi.md "Approval policy"): default pending; approved only
        when a human set [workflow] agent_proposal_approval = "auto" in .memzoi/config.toml or the user config
        (and the proposal is repo-safe); approval_mode manual keeps it pending whatever the config says;
        approval_mode auto is refused (agent_self_approval). Omitted sensitivity is 'unknown': the proposal stays
        pending with a validation issue. A reviewer approves and applies it (git memzoi review, approve, apply).
        applies_to: repo-relative paths (or folder/**) the memory is about, which precheck_path matches.
        scope_globs, anchor, ttl_days, check, check_safe: the earned envelope (propose --scope, --anchor ...):
        the record turns suspect when a file in scope_globs (default: applies_to) changes after anchor (HEAD).
        valid_from, valid_to: its business validity [from, to), ISO 8601 with a zone or a date (00:00Z).
        relations: "role=target" items (propose --relation), e.g. "depends_on=<record-id>", "owns=src/auth/**".
        tags: words search matches (propose --tag), e.g. "billing"; scope_id: which one of scope_kind
        (propose --scope-id); confidence is not recorded (a record's is 1.0 once a human applies it).
        """
        from git_memzoi.memzoi import envelope, inbox, record_relations

        def run() -> dict[str, Any]:
            if approval_mode is not None and approval_mode not in APPROVAL_MODES:
                raise ToolFailure("approval_mode must be auto or manual", "invalid_approval_mode")
            draft = inbox.make_draft(
                title=title,
                body=body,
                type=_pick("type", type, memory_type, "memory_type"),
                scope_kind=_pick("scope_kind", scope_kind, scope, "scope"),
                visibility=visibility,
                sensitivity=sensitivity,
                source_kind=source_kind,
                source_ref=source_ref,
                actor=actor or "mcp",
                applies_to=applies_to or (),
                valid_from=valid_from,
                valid_to=valid_to,
                relations=record_relations.from_options(relations or ()) or (),
                tags=tags or (),
                scope_id=scope_id,
            )
            watch = envelope.make_request(
                scope=scope_globs, anchor=anchor, ttl_days=ttl_days, check=check, check_safe=check_safe
            )
            ctx = self._context(draft.actor)
            result = inbox.propose(
                ctx,
                draft,
                memzoi_home=_memzoi_home(),
                override=approval_mode,
                apply=False,
                watch=watch,
                actor_kind="agent",
            )
            issues = (
                []
                if draft.sensitivity != "unknown"
                else [
                    {
                        "code": "sensitivity_unknown",
                        "message": (
                            "sensitivity was not given (unknown), so this proposal can never be applied to the "
                            "repository; if it is repo-safe, propose it again with sensitivity repo-safe"
                        ),
                    }
                ]
            )
            ignored = ["confidence"] if confidence is not None else []  # a record's is 1.0 once a human applies it
            warnings = [*result.warnings, *(f"{name} is accepted but not recorded by this version" for name in ignored)]
            payload = {
                "type": draft.type,
                "lane": draft.lane,
                "title": draft.title,
                "body": draft.body,
                "scope_kind": draft.scope_kind,
                "visibility": draft.visibility,
                "sensitivity": draft.sensitivity,
                "source_kind": draft.source_kind,
                "source_ref": draft.source_ref,
                "applies_to": list(draft.applies_to),
                "actor": draft.actor,
                **dict(draft.validity),
            }
            proposal = result.proposal
            return {
                "ok": True,
                "proposal_id": proposal.id,
                "status": proposal.status,
                "proposal": proposal.as_json(),
                "created": result.created,
                "payload": payload,
                "validation": {"valid": not issues, "issues": issues},
                "policy": result.policy.to_json(),
                "auto_approved": result.auto_approved,
                "applied": False,
                "warnings": warnings,
                "watch": result.watch.as_json() if result.watch is not None else None,
            }

        return self.run(run)

    def _precheck(
        self,
        *,
        path: str | None = None,
        action: str | None = None,
        command: str | None = None,
        scope_kind: str | None = None,
        scope: str | None = None,
        store: str = "all",
        as_of: str | None = None,
        include_superseded: bool = False,
        mode: str | None = None,
    ) -> CallToolResult:
        from git_memzoi.memzoi import precheck

        def body() -> recall_schema.PrecheckJson:
            kind = _pick("scope_kind", scope_kind, scope, "scope")
            return precheck.precheck(
                self._view(as_of, include_superseded),
                path=path,
                action=action,
                command=command,
                scope_kind=kind,
                store=store,
                mode=mode,
            ).to_json()

        return self.run(body)

    def precheck_path(
        self,
        path: str,
        scope_kind: str | None = None,
        scope: str | None = None,
        store: str = "all",
        as_of: str | None = None,
        include_superseded: bool = False,
    ) -> CallToolResult:
        """The risks, warnings and failed attempts that apply to changing a path, and the memkeep entries whose
        scope covers it (store: records, entries or all), each with its citation; suspect ones first. as_of
        (an instant with a zone, or a date; default now) and include_superseded look at the past."""
        return self._precheck(
            path=path,
            scope_kind=scope_kind,
            scope=scope,
            store=store,
            as_of=as_of,
            include_superseded=include_superseded,
        )

    def precheck_action(
        self,
        action: str,
        path: str | None = None,
        scope_kind: str | None = None,
        scope: str | None = None,
        store: str = "all",
        as_of: str | None = None,
        include_superseded: bool = False,
        mode: str | None = None,
    ) -> CallToolResult:
        """The memory warnings that apply to a planned action (in words), optionally at a path (as_of,
        include_superseded: as precheck_path; mode: lexical, semantic or hybrid)."""
        return self._precheck(
            path=path,
            action=action,
            scope_kind=scope_kind,
            scope=scope,
            store=store,
            as_of=as_of,
            include_superseded=include_superseded,
            mode=mode,
        )

    def precheck_command(
        self,
        command: str,
        path: str | None = None,
        scope_kind: str | None = None,
        scope: str | None = None,
        store: str = "all",
        as_of: str | None = None,
        include_superseded: bool = False,
        mode: str | None = None,
    ) -> CallToolResult:
        """The memory warnings that apply to a command about to run, optionally at a path (as_of,
        include_superseded: as precheck_path; mode: lexical, semantic or hybrid)."""
        return self._precheck(
            path=path,
            command=command,
            scope_kind=scope_kind,
            scope=scope,
            store=store,
            as_of=as_of,
            include_superseded=include_superseded,
            mode=mode,
        )

    def plan_capture_v1(
        self, sources: list[dict[str, Any]], extractor: dict[str, Any], schema: str = "memzoi/capture-request-v1"
    ) -> CallToolResult:
        """Plan a capture of one markdown file (profile markdown-deterministic, one project_path source).

        sources: [{"locator": {"kind": "project_path", "path": "docs/notes.md"}, "source_id": "source-1"}]
        (source_id optional); extractor: {"profile": "markdown-deterministic"}.
        Read-only: never writes. Each candidate needs a decision from your user (accept, edit, reject or defer);
        send them with submit_capture_decisions_v1 and this plan_id. A candidate that is not repo-safe (local,
        session, unresolved, blocked) is shown without its text (listed in redacted_candidates): its type,
        destination, action and evidence line span are there; read the source lines to ask your user. A blocked
        plan is already redacted and is returned as it is.
        """
        from git_memzoi.memzoi import capture_agent

        def body() -> dict[str, Any]:
            path, source_id = capture_source(schema, sources, extractor)
            return capture_agent.plan(self._context(), path, source_id)

        return self.run(body)

    def submit_capture_decisions_v1(
        self,
        sources: list[dict[str, Any]],
        extractor: dict[str, Any],
        plan_id: str,
        decisions: list[dict[str, Any]],
        reviewed_by: str | None = None,
        schema: str = "memzoi/capture-request-v1",
    ) -> CallToolResult:
        """Review and apply a capture plan with your user's decisions, one per candidate of the plan.

        sources/extractor/schema: the request given to plan_capture_v1; plan_id: the plan it returned (a changed
        source or memory gives stale_capture_plan and writes nothing). decisions: [{candidate_id, outcome:
        accept|reject|edit|defer, reason_code?}]; an edit adds memory {type, lane, title, body, scope {kind, id,
        paths}, tags} and requested_destination repo|local|session. Accept works on create_proposal and
        create_runtime candidates; a needs_review one must be edited. Repo candidates become pending proposals
        (a maintainer applies them with git memzoi proposal-files apply), local/session ones private runtime
        records; rejected content is remembered and not offered again. reviewed_by defaults to mcp.
        """
        from git_memzoi.memzoi import capture_agent

        def body() -> dict[str, Any]:
            path, source_id = capture_source(schema, sources, extractor)
            reviewer = reviewed_by or "mcp"
            return capture_agent.submit(self._context(reviewer), path, source_id, plan_id, decisions, reviewer)

        return self.run(body)

    def memory_status(self) -> CallToolResult:
        """The memkeep suspect set: entries whose scope changed, expired, or depend on suspect entries."""
        return self.run(self.status_json)

    def status_json(self) -> Mapping[str, Any]:
        """The ``memory_status`` tool's and the ``memzoi://status`` resource's object
        (:func:`git_memzoi.mcp.status.status_json`)."""
        from git_memzoi.mcp.status import status_json

        return status_json(self.root)

    def review_inbox(self, status: str = "open") -> CallToolResult:
        """What waits for review: inbox proposals and the packets of session end, capture and import, oldest first,
        with one id each (prop_... or the packet id), source, type, created time and the title when repo-safe.

        Read-only: the same object as `git memzoi review --json`; its count is the one handoff and doctor report.
        status: open (the default: pending, validated, approved), pending, validated, approved, rejected,
        applied or all.
        """
        from git_memzoi.memzoi import review

        return self.run(lambda: review.list_items(self._context().layout, status).as_json())

    def read_memory(
        self,
        memory_id: str,
        projection: str | None = None,
        heading_paths: list[list[str]] | None = None,
        max_chars: int | None = None,
        store: str = "all",
        as_of: str | None = None,
    ) -> CallToolResult:
        """One repository record or memkeep entry by id (or a prefix naming one), as `git memzoi show --json`:
        its fields, lineage (supersedes chain), envelope and suspect reasons, and its body.

        projection: metadata (no body), sections (the heading_paths sections) or full (the body as one slice);
        omitted, the body comes whole as `body`. heading_paths: [["Title", "Subsection"], ...], titles from the
        outermost heading down (imply sections). max_chars: one budget in UTF-16 code units for all text (sections
        default to 6000). Each slice carries start_byte/end_byte and start_line/end_line of the whole file,
        original_chars and truncated; excluded lists what the budget left out. store: records, entries or all.
        as_of: the instant valid_at is judged at (ISO 8601 with a zone, or a date; default now).
        Errors: target_not_found, ambiguous_target (an id or heading path naming none or several),
        invalid_projection, bad_max_chars (a negative max_chars), invalid_store, invalid_as_of, content_withheld.
        """
        from git_memzoi.memzoi import record_show

        return self.run(
            lambda: record_show.show(
                self._view(as_of, False),
                memory_id,
                max_chars=max_chars,
                store=store,
                projection=projection,
                heading_paths=heading_paths or (),
            ).to_json()
        )


def _memzoi_home() -> Path:
    """``$MEMZOI_HOME``, else ``~/.memzoi`` (as the CLI's ``propose``): where the user policy file lives."""
    value = os.environ.get("MEMZOI_HOME")
    return Path(value) if value else Path.home() / ".memzoi"


def argument_choices() -> dict[str, tuple[str, ...]]:
    """Each tool argument with a closed set of values → the values, from the modules that check them: ``mode``,
    ``store``, ``projection`` and ``approval_mode`` (listed in the schemas: :func:`~git_memzoi.mcp.arguments.with_choices`)."""
    from git_memzoi.memzoi import recall_modes, recall_slices, search

    return {
        "mode": tuple(recall_modes.MODES),
        "store": tuple(search.STORE_CHOICES),
        "projection": tuple(recall_slices.PROJECTIONS),
        "approval_mode": APPROVAL_MODES,
    }


def build_server(project_root: Path, *, watch: bool = False) -> MCPServer:
    """The MCP server for the repository at ``project_root`` (``mcp serve`` refuses a missing folder or a
    non-repository before calling :func:`serve`; each call opens it again); ``watch``: keep a
    file-system watcher so recall skips the freshness walk while nothing changed (:func:`serve` sets it).

    Tools (:data:`TOOL_NAMES`, each annotated from :data:`~git_memzoi.mcp.hints.TOOL_HINTS`), resources
    (:mod:`git_memzoi.mcp.resources`) and prompts (:mod:`git_memzoi.mcp.prompts`).
    """
    from git_memzoi.mcp import prompts, resources

    impl = _Server(project_root, watch)
    choices = argument_choices()
    tools: list[Tool] = [checked(getattr(impl, name), name, annotations_of(name), choices) for name in TOOL_NAMES]
    server = MemzoiServer("memzoi", version=__version__, instructions=INSTRUCTIONS, tools=tools, log_level="WARNING")
    resources.register(server, impl)
    prompts.register(server, impl)
    return server


def serve(project_root: Path) -> None:
    """Serve over stdio until stdin closes. stdout carries only protocol frames (BR-03).

    The SDK's ``stdio_server`` points fd 1 at stderr and fd 0 at the null device while it serves, so even a
    child process (git) or a stray ``print`` cannot reach the wire; Python warnings go to the log (stderr).
    """
    logging.captureWarnings(True)
    build_server(project_root, watch=True).run("stdio")
