"""Repository-relative POSIX paths: normalisation (Unicode NFC) and containment checks."""

from __future__ import annotations

import os
from pathlib import Path

from git_memzoi.errors import InputError


def nfc(path: str) -> str:
    """Return ``path`` in Unicode NFC, the one spelling used for comparisons (field report BR-23)."""
    if path.isascii():  # already NFC; and unicodedata costs 2 ms to import on every command
        return path
    import unicodedata

    return unicodedata.normalize("NFC", path)


def repo_relative(path: Path, root: Path) -> str:
    """Return ``path`` relative to ``root`` as a POSIX string, after resolving symlinks.

    Raises :class:`InputError` (``path_outside_repo``) when ``path`` resolves outside ``root``.
    """
    resolved = path.resolve()
    try:
        rel = resolved.relative_to(root.resolve())
    except ValueError:
        raise InputError(f"{path} is outside the repository {root}", "path_outside_repo") from None
    return rel.as_posix() if rel.parts else "."


def request_path(path: str | None, root: Path, cwd: Path | None = None) -> str | None:
    """A path named by a caller (``--path`` of search, precheck, context, handoff) as the repository-relative
    POSIX string that records' ``applies_to`` paths are compared with; ``None`` for nothing or blanks.

    A relative path is relative to ``cwd`` when given (the command line's current directory: a git pathspec's
    rule, so ``cd src && ... --path signer.py`` names ``src/signer.py``), else to the repository root, as
    ``applies_to`` paths are (MCP tools); an absolute one must lie below ``root`` (compared as written, or with
    ``root``'s symlinks resolved). Either way the path is normalised as written, never through the file system:
    ``.`` and empty segments dropped, ``..`` climbing back up (to the root at most), a trailing ``/`` or ``/**``
    kept, so ``./src/signer.py``, ``src//signer.py`` and ``src/../src/signer.py`` all name ``src/signer.py``
    (an agent's ``./src/signer.py`` was told no risk applied). Nothing is read from the file system but ``root``
    and ``cwd``.

    Raises:
        InputError: a ``..`` climbing above the root, a drive letter, or an absolute path outside ``root``
            (``path_outside_repo``); a NUL character (``invalid_argument``).
    """
    text = path.strip() if path else ""
    if not text:
        return None
    if "\0" in text:
        raise InputError("path holds a NUL character", "invalid_argument")
    refused = InputError(f"path {text!r} is outside the repository {root}", "path_outside_repo")
    if len(text) > 1 and text[1] == ":" and text[0].isalpha():
        raise refused
    if not text.startswith("/"):
        return _normalised(text, root, cwd or root, refused)
    for base in (root, root.resolve()):
        prefix = base.as_posix().rstrip("/") + "/"
        if text == prefix[:-1] or text == prefix:
            return "."
        if text.startswith(prefix):
            return _normalised(text[len(prefix) :], root, root, refused)
    raise refused


def _normalised(text: str, root: Path, cwd: Path, refused: InputError) -> str:
    """``text`` (relative to ``cwd``) made relative to ``root`` and normalised (:func:`request_path`), its trailing
    ``/`` kept; ``cwd`` outside the repository counts as the root."""
    try:
        prefix = cwd.resolve().relative_to(root.resolve()).parts if cwd != root else ()
    except ValueError:
        prefix = ()
    parts = list(prefix)
    for part in text.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if not parts:
                raise refused
            parts.pop()
        else:
            parts.append(part)
    joined = "/".join(parts) or "."
    return f"{joined}/" if text.endswith("/") and joined != "." else joined


def is_within(path: Path, root: Path) -> bool:
    """True when ``path`` (symlinks resolved) is ``root`` or below it."""
    try:
        path.resolve().relative_to(root.resolve())
    except ValueError:
        return False
    return True


def display(path: Path, base: Path | None = None) -> str:
    """Return ``path`` relative to ``base`` (default: the working directory) when below it, else absolute."""
    base = base or Path(os.getcwd())
    try:
        return path.resolve().relative_to(base.resolve()).as_posix()
    except ValueError:
        return str(path)
