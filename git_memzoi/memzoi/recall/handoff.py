"""Agent handoffs (memzoi-spec.md §5 "Handoff"): the context pack of a task or path plus the open review inbox
counts, for switching agents (io; split from :mod:`~git_memzoi.memzoi.recall.pack`, which builds the pack).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from git_memzoi.errors import InputError
from git_memzoi.memzoi.recall import pack as pack_module
from git_memzoi.memzoi.recall.pack import pack_id
from git_memzoi.memzoi.recall.search import fresh_index

if TYPE_CHECKING:
    from git_memzoi.memzoi.recall.schema import HandoffJson
    from git_memzoi.memzoi.workspace import Workspace


@dataclass(frozen=True)
class Handoff:
    """``git memzoi handoff``: the context pack for switching agents and the open review inbox counts."""

    payload: HandoffJson

    def to_json(self) -> HandoffJson:
        """The ``handoff --json`` object (memzoi-spec.md §5 "Handoff")."""
        return self.payload.copy()

    def text(self) -> str:
        """``# Memzoi Handoff``, the task, the path if any, the inbox counts, then the context prompt."""
        p = self.payload
        inbox = p["proposal_inbox"]
        lines = ["# Memzoi Handoff", f"Task: {p['task']}"]
        if p["path_prefix"]:
            lines.append(f"Path: {p['path_prefix']}")
        lines.append(
            f"Review inbox: {inbox['open_total']} open ({inbox['pending']} pending, "
            f"{inbox['validated']} validated, {inbox['approved']} approved; `git memzoi review` lists them)"
        )
        return "\n".join(lines) + "\n\n" + p["context"]["prompt"]


@fresh_index
def handoff(
    ws: Workspace,
    *,
    task: str | None = None,
    path: str | None = None,
    token_budget: int | None = None,
    include_local: bool = False,
    include_session: bool = False,
    store: str = "all",
    mode: str | None = None,
) -> Handoff:
    """The compact pack for handing work to another agent: the context pack of ``task`` (or ``Handoff for path
    <path>``) and the open review counts of :func:`git_memzoi.memzoi.proposals.review.counts` (inbox
    proposals and file packets alike: the count ``doctor``, MCP and the session context report).

    Raises:
        InputError: neither a task nor a path (``bad_usage``), a negative budget, or a path outside the
            repository (``path_outside_repo``).
    """
    from git_memzoi.core.paths import request_path
    from git_memzoi.memzoi.proposals import review
    from git_memzoi.memzoi.records import okf

    task = task.strip() if task else ""
    path = request_path(path, ws.layout.root)
    if not task and not path:
        raise InputError("handoff needs --task or --path", "bad_usage")
    task = task or f"Handoff for path {path}"
    pack = pack_module.build(
        ws,
        task,
        path=path,
        token_budget=token_budget,
        include_local=include_local,
        include_session=include_session,
        store=store,
        mode=mode,
    )
    counts = review.counts(ws.layout)
    now = ws.clock.now()
    payload: HandoffJson = {
        "id": pack_id(now, "handoff_", [pack.payload["id"], counts.as_json()]),
        "task": task,
        "path_prefix": path,
        "token_budget": token_budget,
        "include_local": include_local,
        "include_session": include_session,
        "proposal_inbox": {
            "source": "review",
            "open_total": counts.open,
            "pending": counts.pending,
            "validated": counts.validated,
            "approved": counts.approved,
            "by_source": dict(counts.by_source),
        },
        "context": pack.to_json(),
        "created_at": okf.format_timestamp(now),
    }
    return Handoff(payload)
