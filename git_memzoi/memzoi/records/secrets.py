"""The secret gates of governed memory, built on the one classifier of both models
(:mod:`git_memzoi.core.secret_scan`, whose names are re-exported here for memzoi's modules and face).

:func:`require_clean_fields` and :func:`require_clean` refuse a write (``prohibited_content_detected``) naming the
field and line of the text the user gave, never a file that does not exist yet; :func:`first_credentials` and
:func:`first_in_files` let export, context, doctor and the proposal-file reads find records and packets that
hold a credential anyway (hand-edited, or committed with ``--no-verify``). No message ever holds the secret.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from git_memzoi.core.secret_scan import (
    MASK,
    PERSONAL,
    SECRET_PLUGINS,
    TRANSCRIPT,
    Finding,
    classify,
    classify_all,
    is_placeholder,
    redact,
    remember_shapes_in,
)
from git_memzoi.core.secret_scan import identity as _identity

if TYPE_CHECKING:
    from git_memzoi.errors import InputError

__all__ = [
    "MASK",
    "PERSONAL",
    "PRIVATE_REFUSAL",
    "REFUSAL",
    "SECRET_PLUGINS",
    "TRANSCRIPT",
    "Finding",
    "classify",
    "classify_all",
    "first_credential",
    "first_credentials",
    "first_in_files",
    "is_placeholder",
    "locate",
    "redact",
    "refusal",
    "remember_shapes_in",
    "require_clean",
    "require_clean_fields",
    "screening_key",
]

REFUSAL = "secrets never go to git-visible memory"
PRIVATE_REFUSAL = "memory never stores credentials, private memory included"


def first_credential(fields: Mapping[str, object]) -> tuple[str, Finding] | None:
    """The first credential in ``fields`` (in their order) and where it is, in the user's terms.

    Args:
        fields: field name (an option such as ``--body``, or a record key such as ``body``) to value. A string is
            scanned line by line, a list of strings item by item; any other value (a mapping) is scanned as its
            JSON text; ``None`` is skipped.

    Returns:
        ``(place, finding)``: ``place`` is ``<name> line N`` for text, ``<name> item N`` for a list, ``<name>``
        otherwise; ``None`` when no credential rule matched. The matched text is never part of it.
    """
    return first_credentials([fields])[0]


def first_credentials(items: Sequence[Mapping[str, object]]) -> list[tuple[str, Finding] | None]:
    """:func:`first_credential` of each of ``items``, in order, with one detect-secrets setup for all."""
    import json

    places: list[tuple[int, str, str]] = []
    texts: list[str] = []
    for n, fields in enumerate(items):
        for name, value in fields.items():
            if value is None:
                continue
            if isinstance(value, str):
                places.append((n, name, "line"))
                texts.append(value)
            elif isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
                places.append((n, name, "item"))
                texts.append("\n".join(v.replace("\n", " ").replace("\r", " ") for v in value))
            else:
                places.append((n, name, ""))
                texts.append(json.dumps(value, ensure_ascii=False, sort_keys=True, default=str))
    out: list[tuple[str, Finding] | None] = [None] * len(items)
    for (n, name, unit), findings in zip(places, classify_all(texts, personal=False), strict=True):
        if findings and out[n] is None:
            out[n] = (f"{name} {unit} {findings[0].line}" if unit else name), findings[0]
    return out


def screening_key(fields: Mapping[str, object]) -> str | None:
    """The key under which :func:`first_credential` of ``fields`` may be remembered beyond this process (recall's
    screening cache, :func:`git_memzoi.memzoi.recall.index.db.screened`): the BLAKE3 hash of the fields' names and
    values, in order, and of the classifier's identity, so any edit gives a new key (a remembered finding is
    never stale) and a detect-secrets upgrade or a change of these rules rescreens. ``None`` when the identity
    cannot be read: nothing may be remembered."""
    import json

    from git_memzoi.core.hashing import content_hash

    identity = _identity()
    if identity is None:
        return None
    data = json.dumps([identity, list(fields.items())], ensure_ascii=False, sort_keys=True, default=str)
    return content_hash(data.encode("utf-8", "surrogatepass")).removeprefix("blake3:")


def locate(document: str, line: int) -> str:
    """Where 1-based ``line`` of a rendered Markdown file with YAML frontmatter (a record, a packet) is, named by
    its field, since the rendered file may not exist (yet): the top-level frontmatter key it belongs to
    (``title``, ``origin``), ``title`` for the ``# <title>`` heading, else ``body line N`` counted from the
    body's first line. Text without frontmatter gives ``line N``.
    """
    lines = document.splitlines()
    close = next((n for n in range(1, len(lines)) if lines[n].strip() == "---"), None)
    if not lines or lines[0].strip() != "---" or close is None:
        return f"line {line}"
    index = line - 1
    if index <= close:
        keys = [n for n in range(1, index + 1) if re.match(r"[A-Za-z_][\w-]*\s*:", lines[n])]
        return lines[keys[-1]].split(":", 1)[0].strip() if keys else "frontmatter"
    first = close + 1
    while first < len(lines) and not lines[first].strip():
        first += 1
    if first < len(lines) and lines[first].startswith("# "):
        if index == first:
            return "title"
        first += 1
        while first < len(lines) and not lines[first].strip():
            first += 1
    return f"body line {index - first + 1}"


def refusal(where: str, place: str, rule: str, *, private: bool = False) -> InputError:
    """The ``prohibited_content_detected`` error (exit 2) naming ``where``, the ``place`` and the ``rule``, never
    the value. ``private``: the target is private memory (credentials are refused there too)."""
    from git_memzoi.errors import InputError

    why = PRIVATE_REFUSAL if private else REFUSAL
    return InputError(
        f"{where}: {place} holds a credential ({rule}; not printed): remove it, {why}", "prohibited_content_detected"
    )


def first_in_files(files: Sequence[tuple[str, str]]) -> list[tuple[str, Finding]]:
    """The first credential of each file that holds one, in the given order.

    Args:
        files: ``(repository-relative path, text)`` pairs (the caller reads them; this module does no IO).

    Returns:
        ``(path, finding)`` per file with a credential rule match; the finding's line is the file's own line.
    """
    texts = [text for _, text in files]
    return [
        (path, found[0]) for (path, _), found in zip(files, classify_all(texts, personal=False), strict=True) if found
    ]


def require_clean_fields(fields: Mapping[str, object], where: str, *, private: bool = False) -> None:
    """Refuse user-given fields holding a credential, naming the field and the line (or item) within it, as the
    user gave it: ``the proposal: body line 1 holds a credential (AWS Access Key; not printed)``.

    Args:
        fields: as for :func:`first_credential` (name them as the user knows them: ``--body``, ``body``).
        where: what is being refused (``the proposal``, ``the local record``).
        private: the target is private memory (changes only the wording).

    Raises:
        InputError: ``prohibited_content_detected``; the caller checks before it writes anything.
    """
    hit = first_credential(fields)
    if hit is not None:
        raise refusal(where, hit[0], hit[1].rule, private=private)


def require_clean(text: str, where: str, *, document: bool = False, private: bool = False) -> None:
    """Refuse ``text`` bound for a git-visible file (a record, a proposal packet) when it holds a credential.

    The same credential rules as the pre-commit guard (``personal=False``: the content class and sensitivity of
    a record decide about personal data).

    Args:
        text: the full text about to be written.
        where: what is refused, named so the user can find it: an existing file's path, or ``new record <id>``.
        document: ``text`` is a rendered record or packet that the user never saw: the message names the field
            (:func:`locate`) instead of the line of the rendered text.
        private: the target is private memory (changes only the wording).

    Raises:
        InputError: ``prohibited_content_detected`` naming ``where``, the rule and the line or field, never the
            value; the caller checks before it writes anything.
    """
    findings = classify(text, personal=False)
    if findings:
        first = findings[0]
        place = locate(text, first.line) if document else f"line {first.line}"
        raise refusal(where, place, first.rule, private=private)
