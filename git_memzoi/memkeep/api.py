"""memkeep's public face: the only names ``cli/``, ``mcp/`` and ``integrations/`` may import from the memkeep model.

Each name loads on first use (PEP 562), so the pre-commit guard, which needs only the store, never pays for the
commands' result types, lint or the staleness core. The commands themselves live in
:mod:`git_memzoi.memkeep.commands`; ``tests/test_architecture.py`` enforces that the edges come in through here.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from git_memzoi.memkeep import schema
    from git_memzoi.memkeep.commands import (
        IndexResult,
        LintResult,
        Options,
        Session,
        StatusResult,
        index,
        lint,
        no_cyclic_gc,
        open_session,
        report,
        status,
        verify,
    )
    from git_memzoi.memkeep.entries import Entry, parse_check
    from git_memzoi.memkeep.index import HEADER as INDEX_HEADER
    from git_memzoi.memkeep.index import drift as index_drift
    from git_memzoi.memkeep.index import render as render_index
    from git_memzoi.memkeep.lint import Violation
    from git_memzoi.memkeep.lint import lint as lint_entries
    from git_memzoi.memkeep.location import CLI_HINT as STORE_CLI_HINT
    from git_memzoi.memkeep.location import CONFIG_NAME as STORE_CONFIG_NAME
    from git_memzoi.memkeep.report import STALE_NOTE, StalenessReport, Unchecked, Verdict
    from git_memzoi.memkeep.store import LoadedStore, Store, StoreNotFound, Unreadable, entry_signatures
    from git_memzoi.memkeep.store import cache_for as store_cache
    from git_memzoi.memkeep.store import load as load_store
    from git_memzoi.memkeep.store import locate as locate_store
    from git_memzoi.memkeep.store import read_config as read_store_config
    from git_memzoi.memkeep.verify import VerifyItem, VerifyResult

__all__ = [
    "INDEX_HEADER",
    "STALE_NOTE",
    "STORE_CLI_HINT",
    "STORE_CONFIG_NAME",
    "Entry",
    "IndexResult",
    "LintResult",
    "LoadedStore",
    "Options",
    "Session",
    "StalenessReport",
    "StatusResult",
    "Store",
    "StoreNotFound",
    "Unchecked",
    "Unreadable",
    "Verdict",
    "VerifyItem",
    "VerifyResult",
    "Violation",
    "entry_signatures",
    "index",
    "index_drift",
    "lint",
    "lint_entries",
    "load_store",
    "locate_store",
    "no_cyclic_gc",
    "open_session",
    "parse_check",
    "read_store_config",
    "render_index",
    "report",
    "schema",
    "status",
    "store_cache",
    "verify",
]

_COMMANDS = (
    "IndexResult",
    "LintResult",
    "Options",
    "Session",
    "StatusResult",
    "index",
    "lint",
    "no_cyclic_gc",
    "open_session",
    "report",
    "status",
    "verify",
)
# public name → "module" or "module:attribute" inside memkeep
_FACE = {
    **{name: f"commands:{name}" for name in _COMMANDS},
    "Entry": "entries:Entry",
    "LoadedStore": "store:LoadedStore",
    "Store": "store:Store",
    "StoreNotFound": "store:StoreNotFound",
    "STORE_CLI_HINT": "location:CLI_HINT",
    "STORE_CONFIG_NAME": "location:CONFIG_NAME",
    "read_store_config": "store:read_config",
    "INDEX_HEADER": "index:HEADER",
    "render_index": "index:render",
    "index_drift": "index:drift",
    "Unreadable": "store:Unreadable",
    "Unchecked": "report:Unchecked",
    "Verdict": "report:Verdict",
    "StalenessReport": "report:StalenessReport",
    "STALE_NOTE": "report:STALE_NOTE",
    "Violation": "lint:Violation",
    "VerifyItem": "verify:VerifyItem",
    "VerifyResult": "verify:VerifyResult",
    "lint_entries": "lint:lint",
    "locate_store": "store:locate",
    "parse_check": "entries:parse_check",
    "load_store": "store:load",
    "store_cache": "store:cache_for",
    "entry_signatures": "store:entry_signatures",
    "schema": "schema",
}


def __getattr__(name: str) -> object:
    """Load the public ``name`` on first use.

    Raises:
        AttributeError: ``name`` is not part of the face.
    """
    target = _FACE.get(name)
    if target is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, _, attribute = target.partition(":")
    value: object = import_module(f"git_memzoi.memkeep.{module}")
    if attribute:
        value = getattr(value, attribute)
    globals()[name] = value
    return value
