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
