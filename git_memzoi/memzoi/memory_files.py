"""Which files are memory files (pure): the one list the pre-commit guard and ``git memzoi doctor`` share.

A repository path is one of: a private file under ``.memzoi/local/`` (an older version's private folder, never
committed; private memory now lives in the git directory, which git never lists); a memzoi memory file
(anything else under ``.memzoi/``: records, proposal packets, exports); a memkeep entry (under the store's
``entries/``) or the store's generated ``INDEX.md``; or another Markdown file, whose memzoi-managed blocks (an
``export <fmt> --file`` projection, an ``integrate`` instructions block) are memory and the rest is not.
:func:`managed_text` keeps only those blocks, line numbers unchanged, for the credential scanner.
"""

from __future__ import annotations

MEMZOI = ".memzoi/"
LOCAL = ".memzoi/local/"
RECORDS = ".memzoi/records/"
PROPOSALS = ".memzoi/proposals/"
# Bytes that open a memzoi-managed block (export.begin_marker, export.INTEGRATE_START): a cheap test first.
BLOCK_HINTS = (b"<!-- BEGIN memzoi ", b"<!-- memzoi:start -->")

PRIVATE = "private"
MEMZOI_FILE = "memzoi"
ENTRY = "entry"
INDEX = "index"
MARKDOWN = "markdown"


def max_bytes(kind_of_file: str) -> int | None:
    """The largest file of a :func:`kind` that is read (a larger one is refused unread, never scanned): INDEX.md
    is generated from the entries, any other memory file is at most 256 KiB; another Markdown file is not memory
    (only its managed blocks are) and has no cap."""
    from git_memzoi.core import safe_read

    if kind_of_file == MARKDOWN:
        return None
    return safe_read.MAX_INDEX_BYTES if kind_of_file == INDEX else safe_read.MAX_FILE_BYTES


def store_prefixes(store_rel: str | None) -> tuple[str, str]:
    """``(entries prefix, INDEX.md path)`` of a memkeep store at ``store_rel`` (``"."`` for the root), or
    ``("", "")`` when there is no store."""
    if store_rel is None:
        return "", ""
    if store_rel == ".":
        return "entries/", "INDEX.md"
    return f"{store_rel}/entries/", f"{store_rel}/INDEX.md"


def kind(path: str, store_rel: str | None) -> str | None:
    """What ``path`` (repository-relative POSIX) is: :data:`PRIVATE`, :data:`MEMZOI_FILE`, :data:`ENTRY`,
    :data:`INDEX`, :data:`MARKDOWN` (scan its managed blocks only) or ``None`` (not memory)."""
    entries, index = store_prefixes(store_rel)
    if path.startswith(LOCAL):
        return PRIVATE
    if path.startswith(MEMZOI):
        return MEMZOI_FILE
    if entries and path.startswith(entries):
        return ENTRY
    if index and path == index:
        return INDEX
    if path.lower().endswith(".md"):
        return MARKDOWN
    return None


def _closers() -> dict[str, str]:
    from git_memzoi.memzoi import export

    closers = {export.begin_marker(fmt): export.end_marker(fmt) for fmt in export.FORMATS if fmt != "okf"}
    closers[export.INTEGRATE_START] = export.INTEGRATE_END
    return closers


def managed_text(data: bytes) -> str | None:
    """The memzoi-managed blocks of a Markdown file as text, every other line blanked so line numbers stay the
    file's; ``None`` when the file has no block. A block without its end line runs to the end of the file. A
    file without a marker costs one substring search."""
    if not any(hint in data for hint in BLOCK_HINTS):
        return None
    closers = _closers()
    kept: list[str] = []
    closing: str | None = None
    for line in data.decode("utf-8", errors="replace").split("\n"):
        marker = line.strip()
        if closing is None:
            closing = closers.get(marker)
            kept.append("")
        elif marker == closing:
            closing = None
            kept.append("")
        else:
            kept.append(line)
    return "\n".join(kept) if any(kept) else None
