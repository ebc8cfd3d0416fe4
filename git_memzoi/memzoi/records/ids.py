"""Record ids: how a new record is named so that branches merge (io: it looks at the records on disk; issue 16).

A record's id is its path below ``.memzoi/records/`` without ``.md`` (memzoi-spec.md §1), so two branches that
each create ``use-postgres.md`` with different content meet in an add/add conflict. New ids therefore carry a
short content-derived suffix (:func:`new_record_id`); ids made before that rule keep resolving unchanged.

``.memzoi/config.toml`` may choose the memzoi-spec v0 ids instead, ``[records] ids = "slug"`` (the bare concept
slug, ``-2``… on collision): the conformance corpora name their expected records that way, so the eval sandboxes
use it (:func:`use_spec_ids`); a repository where only one writer ever creates records may too.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Collection, Sequence

from git_memzoi.core.hashing import short_hash
from git_memzoi.core.patterns import lazy
from git_memzoi.memzoi.layout import Layout
from git_memzoi.memzoi.records import okf
from git_memzoi.memzoi.records import store as record_store

ID_SUFFIX_CHARS = 6
STYLES = ("merge-safe", "slug")
SPEC_CONFIG = '[records]\nids = "slug"\n'
_SUFFIX = lazy(rf"-[0-9a-f]{{{ID_SUFFIX_CHARS}}}(?:-[0-9]+)?$")


def new_record_id(
    layout: Layout, slug: str, identity: Sequence[object], *, reserved: Collection[str] = (), style: str | None = None
) -> str:
    """The id of a record created now: ``<slug>-<6 hex>``, the hex the leading digits of BLAKE3 over
    ``identity`` (the facts that make the record: its proposal, title, body, instant), then ``-2``… if that
    file exists here already (issue 16, docs/records.md "Record ids"); under ``[records] ids = "slug"`` the
    bare ``slug`` (then ``-2``…).

    The suffix is the merge-safety rule, and it works offline: two branches give one id to two records only
    when the title slugs are equal and 24 bits of content hash collide (1 in 16.7 million per pair of
    same-titled records); the same proposal applied on two branches gets the same id, so the two files merge
    as one. Ids made before the rule (a bare slug, ``-2``) stay valid: nothing reads meaning from the suffix.
    A bulk apply passes the ids its batch ``reserved`` already (taken as if their files existed) and the
    :func:`id_style` it read once.
    """
    if (style or id_style(layout)) == "slug":
        return free_record_id(layout, slug, reserved)
    data = json.dumps([str(part) for part in identity], separators=(",", ":"), ensure_ascii=False)
    suffix = short_hash(b"memzoi/record-id\0" + data.encode("utf-8"), ID_SUFFIX_CHARS)
    return free_record_id(layout, f"{slug[: okf.MAX_SLUG_CHARS].rstrip('-')}-{suffix}", reserved)


def without_id_suffix(record_id: str) -> str:
    """``record_id`` without the ``-<6 hex>`` content suffix :func:`new_record_id` gave it (and a ``-N`` after
    it): the base a replacement whose title has no slug (a title without Latin letters or digits) is named from,
    so its id does not grow by a suffix at every supersede (a fresh user's walk)."""
    match = _SUFFIX.search(record_id)
    return record_id[: match.start()] if match and match.start() > 0 else record_id


def free_record_id(layout: Layout, base: str, reserved: Collection[str] = ()) -> str:
    """``base``, else ``base-2``, ``base-3``, … : the first id with no record file, not in ``reserved``."""
    for candidate in itertools.chain((base,), (f"{base}-{n}" for n in itertools.count(2))):
        if candidate in reserved:
            continue
        path = record_store.record_path(layout, candidate)
        if not path.exists() and not path.is_symlink():
            return candidate
    raise AssertionError("unreachable: the candidates are unbounded")


def id_style(layout: Layout) -> str:
    """``[records] ids`` of ``.memzoi/config.toml``: ``merge-safe`` (the default) or ``slug``.

    Raises:
        PolicyError: the file is not UTF-8 TOML, ``[records]`` is not a table, or ``ids`` is another value.
    """
    import tomllib

    from git_memzoi.core import safe_read
    from git_memzoi.memzoi.records.policy import PolicyError

    path = layout.config
    try:
        data = tomllib.loads(safe_read.read_text(path, follow_symlinks=True))
    except FileNotFoundError:
        return STYLES[0]
    except safe_read.FileRefused as exc:
        raise PolicyError(f"{path}: {exc.reason}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise PolicyError(f"{path}: not valid TOML ({reason})") from None
    table = data.get("records", {})
    if not isinstance(table, dict):
        raise PolicyError(f"{path}: [records] must be a table")
    style = table.get("ids", STYLES[0])
    if style not in STYLES:
        raise PolicyError(f'{path}: [records] ids must be "merge-safe" or "slug", not {style!r}')
    return str(style)


def use_spec_ids(layout: Layout) -> None:
    """Write ``.memzoi/config.toml`` choosing the memzoi-spec v0 ids (a fresh eval sandbox: the conformance
    corpora expect them)."""
    from git_memzoi.core.atomic import write_bytes_atomic

    write_bytes_atomic(layout.config, SPEC_CONFIG.encode("utf-8"), root=layout.root)
