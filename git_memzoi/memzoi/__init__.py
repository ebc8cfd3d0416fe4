"""The Memzoi model's public face: the only names ``cli/``, ``mcp/`` and ``integrations/`` may import.

Each name is one concept module (or a type), loaded on first use (PEP 562), so importing this package costs
nothing and a git hook that needs the guard never loads search or capture. The concepts live in sub-packages:

- ``records/``    the OKF record model, its fast reader, vocabulary, policy, store, events, retention, secrets,
                  capture provenance
- ``proposals/``  packets, proposal files and their entries, the inbox, drafts, receipts, the lifecycle
- ``recall/``     the derived index, search, context packs, prechecks, suspect marks, budgets, path matching,
                  and the JSON shapes they print (``recall_schema``)
- ``capture/``    plans, review and apply, artifacts, sources, the deterministic profiles, and the shapes of a
                  plan (``capture_schema``)
- ``imports/``    import manifests: the manifest, plan and apply
- ``runtime/``    private memory: local records, session checkpoints, session-end promotion
- ``eval/``       the recall and capture trust evals and the value checks their corpora share

Modules inside the package import each other by their real paths, never through this face.
``tests/test_architecture.py`` enforces both rules and the absence of import cycles.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from git_memzoi.memzoi import doctor, export, layout, memory_files, workspace
    from git_memzoi.memzoi.capture import agent as capture_agent
    from git_memzoi.memzoi.capture import artifacts as capture_artifacts
    from git_memzoi.memzoi.capture import plan as capture_plan
    from git_memzoi.memzoi.capture import review as capture_review
    from git_memzoi.memzoi.capture import schema as capture_schema
    from git_memzoi.memzoi.capture import sources as capture_sources
    from git_memzoi.memzoi.capture.profiles import markdown as capture_markdown
    from git_memzoi.memzoi.eval import report as eval_report
    from git_memzoi.memzoi.eval.capture import report as eval_capture_report
    from git_memzoi.memzoi.eval.capture import run as eval_capture
    from git_memzoi.memzoi.eval.recall import run as eval_recall
    from git_memzoi.memzoi.imports import apply as import_apply
    from git_memzoi.memzoi.imports import plan as importer
    from git_memzoi.memzoi.layout import Layout, NotInitialized
    from git_memzoi.memzoi.proposals import bulk as proposal_bulk
    from git_memzoi.memzoi.proposals import files as proposal_files
    from git_memzoi.memzoi.proposals import inbox, lifecycle, packets, review
    from git_memzoi.memzoi.proposals import verify as record_verify
    from git_memzoi.memzoi.recall import handoff as handoff_pack
    from git_memzoi.memzoi.recall import modes as recall_modes
    from git_memzoi.memzoi.recall import pack as context_pack
    from git_memzoi.memzoi.recall import precheck, prompt_context, related, search, session_context
    from git_memzoi.memzoi.recall import schema as recall_schema
    from git_memzoi.memzoi.recall import show as record_show
    from git_memzoi.memzoi.recall import slices as recall_slices
    from git_memzoi.memzoi.recall import suspect as recall_suspect
    from git_memzoi.memzoi.recall.index import db as index_db
    from git_memzoi.memzoi.recall.index import watch as index_watch
    from git_memzoi.memzoi.records import conflicts, envelope, events, okf, secrets, validity
    from git_memzoi.memzoi.records import lock as record_lock
    from git_memzoi.memzoi.records import relations as record_relations
    from git_memzoi.memzoi.records import store as record_store
    from git_memzoi.memzoi.runtime import checkpoint as checkpoints
    from git_memzoi.memzoi.runtime import compact as compact_checkpoint
    from git_memzoi.memzoi.runtime import local as local_memory
    from git_memzoi.memzoi.runtime import session_config, session_end
    from git_memzoi.memzoi.workspace import Workspace

_PREFIX = "git_memzoi.memzoi."
# public name → "module" or "module:attribute", relative to this package
_FACE = {
    "workspace": "workspace",
    "Workspace": "workspace:Workspace",
    "layout": "layout",
    "Layout": "layout:Layout",
    "NotInitialized": "layout:NotInitialized",
    "doctor": "doctor",
    "export": "export",
    "memory_files": "memory_files",
    "okf": "records.okf",
    "conflicts": "records.conflicts",
    "envelope": "records.envelope",
    "secrets": "records.secrets",
    "events": "records.events",
    "record_store": "records.store",
    "validity": "records.validity",
    "record_lock": "records.lock",
    "record_relations": "records.relations",
    "packets": "proposals.packets",
    "proposal_files": "proposals.files",
    "proposal_bulk": "proposals.bulk",
    "inbox": "proposals.inbox",
    "review": "proposals.review",
    "lifecycle": "proposals.lifecycle",
    "record_verify": "proposals.verify",
    "index_db": "recall.index.db",
    "index_watch": "recall.index.watch",
    "search": "recall.search",
    "context_pack": "recall.pack",
    "handoff_pack": "recall.handoff",
    "precheck": "recall.precheck",
    "related": "recall.related",
    "session_context": "recall.session_context",
    "prompt_context": "recall.prompt_context",
    "recall_modes": "recall.modes",
    "recall_schema": "recall.schema",
    "recall_slices": "recall.slices",
    "record_show": "recall.show",
    "recall_suspect": "recall.suspect",
    "capture_plan": "capture.plan",
    "capture_agent": "capture.agent",
    "capture_review": "capture.review",
    "capture_schema": "capture.schema",
    "capture_artifacts": "capture.artifacts",
    "capture_sources": "capture.sources",
    "capture_markdown": "capture.profiles.markdown",
    "importer": "imports.plan",
    "import_apply": "imports.apply",
    "local_memory": "runtime.local",
    "checkpoints": "runtime.checkpoint",
    "compact_checkpoint": "runtime.compact",
    "session_config": "runtime.session_config",
    "session_end": "runtime.session_end",
    "eval_recall": "eval.recall.run",
    "eval_capture": "eval.capture.run",
    "eval_report": "eval.report",
    "eval_capture_report": "eval.capture.report",
}
__all__ = [
    "Layout",
    "NotInitialized",
    "Workspace",
    "capture_agent",
    "capture_artifacts",
    "capture_markdown",
    "capture_plan",
    "capture_review",
    "capture_schema",
    "capture_sources",
    "checkpoints",
    "compact_checkpoint",
    "conflicts",
    "context_pack",
    "doctor",
    "envelope",
    "eval_capture",
    "eval_capture_report",
    "eval_recall",
    "eval_report",
    "events",
    "export",
    "handoff_pack",
    "import_apply",
    "importer",
    "inbox",
    "index_db",
    "index_watch",
    "layout",
    "lifecycle",
    "local_memory",
    "memory_files",
    "okf",
    "packets",
    "precheck",
    "prompt_context",
    "proposal_bulk",
    "proposal_files",
    "recall_modes",
    "recall_schema",
    "recall_slices",
    "recall_suspect",
    "record_lock",
    "record_relations",
    "record_show",
    "record_store",
    "record_verify",
    "related",
    "review",
    "search",
    "secrets",
    "session_config",
    "session_context",
    "session_end",
    "validity",
    "workspace",
]


def __getattr__(name: str) -> object:
    """Load the public ``name`` on first use.

    Raises:
        AttributeError: ``name`` is not part of the face (a sub-package name included).
    """
    target = _FACE.get(name)
    if target is None:
        raise AttributeError(f"module {__name__!r} has no public name {name!r}")
    module_name, _, attribute = target.partition(":")
    value = import_module(_PREFIX + module_name)
    if attribute:
        value = getattr(value, attribute)
    globals()[name] = value
    return value
