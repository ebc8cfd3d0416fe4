"""After a merge or branch checkout: plan a capture of the typed guidance that arrived (never writes memory).

The range is pinned to the two commit ids the hook compared (issue 6: never ambient HEAD). When typed guidance
was added in that range (not only removed), the plan is saved privately in :attr:`Layout.capture_plans`
(``.git/memzoi/local/capture/``) and one line tells the user how to review it; a blocked plan is never saved, only announced. Writes nothing else and raises nothing to the hook.
"""

from __future__ import annotations

import json
from pathlib import Path


def plan_arrived(start: Path, old: str, new: str) -> str | None:
    """Plan ``git_range`` old..new (pinned full ids) for the repository around ``start``; the line to print.

    Returns ``None`` when the repository has no ``.memzoi/``, the two trees are identical or nothing typed arrived.
    """
    from git_memzoi.core.atomic import write_bytes_atomic
    from git_memzoi.memzoi import capture_plan, workspace

    ctx = workspace.open_workspace(start, initialized=False, actor="git-hook")
    if not ctx.layout.initialized:
        return None
    from git_memzoi.core.gitview_pygit2 import Pygit2RepoView

    if not Pygit2RepoView(ctx.layout.root).changed_files(old, new):
        return None  # identical trees (a checkout or merge that changed no file): nothing arrived (issue 12)
    locator = {
        "kind": "git_range",
        "repository": ".",
        "base": f"sha1:{old}",
        "head": f"sha1:{new}",
        "merge_parent": "base_to_head",
        "rename_detection": True,
        "diff_format": "git-unified-v1",
    }
    request = {
        "schema": "memzoi/capture-request-v1",
        "extractor": {"profile": "git-change-deterministic"},
        "sources": [{"source_id": "arrived", "locator": locator, "media_type": "text/x-diff"}],
    }
    plan = capture_plan.plan_request(ctx, request)
    span = f"{old[:12]}..{new[:12]}"
    if plan.get("data_class") == "blocked":
        return (
            f"memzoi: changes in {span} hold content that capture refuses (a secret or private data); "
            "nothing was planned or saved"
        )
    candidates = plan.get("candidates") or []
    arrived = [c for c in candidates if "git-deletion" not in c.get("memory", {}).get("tags", ())]
    if not arrived:  # guidance that only left (e.g. switching to an older branch) is not news to plan for
        return None
    target = ctx.layout.capture_plans / f"{plan['plan_id']}.json"
    if not target.exists():
        data = (json.dumps(plan, ensure_ascii=False, indent=2) + "\n").encode("utf-8")
        write_bytes_atomic(target, data, root=ctx.layout.root_for(target), parents=True)
    rel = ctx.layout.label(target)
    return (
        f"memzoi: {len(arrived)} typed memory candidate(s) arrived in {span}; review them with "
        f"`git memzoi capture review --plan-file {rel} --decisions-file <decisions.json> "
        "--output ../memzoi-review.json` (one decision per candidate in <decisions.json>, its shape: "
        "`git memzoi help capture review`; the review is saved outside .memzoi/)"
    )
