"""Repository-relative POSIX paths: normalisation (Unicode NFC) and containment checks."""

from __future__ import annotations

import os
import unicodedata
from pathlib import Path

from git_memzoi.errors import InputError


def nfc(path: str) -> str:
    """Return ``path`` in Unicode NFC, the one spelling used for comparisons (field report BR-23)."""
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


def request_path(path: str | None, root: Path) -> str | None:
    """A path named by a caller (``--path`` of search, precheck, context, handoff) as the repository-relative
    POSIX string that records' ``applies_to`` paths are compared with; ``None`` for nothing or blanks.

    A relative path is relative to the repository root, as ``applies_to`` paths are; an absolute one must lie
    below ``root`` (compared as written, or with ``root``'s symlinks resolved) and is made relative, keeping a
    trailing ``/`` or ``/**``. Nothing is read from the file system but ``root``.

    Raises:
        InputError: a ``..`` segment, a drive letter, or an absolute path outside ``root`` (``path_outside_repo``).
    """
    text = path.strip() if path else ""
    if not text:
        return None
    refused = InputError(f"path {text!r} is outside the repository {root}", "path_outside_repo")
    if ".." in text.split("/") or (len(text) > 1 and text[1] == ":" and text[0].isalpha()):
        raise refused
    if not text.startswith("/"):
        return text
    for base in (root, root.resolve()):
        prefix = base.as_posix().rstrip("/") + "/"
        if text == prefix[:-1] or text == prefix:
            return "."
        if text.startswith(prefix):
            return text[len(prefix) :].lstrip("/") or "."
    raise refused


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
