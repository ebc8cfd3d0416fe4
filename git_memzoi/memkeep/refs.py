"""Path references in an entry body's code spans, for the opt-in ``ref_missing`` signal (pure).

memkeep README "How staleness works": a file path in a code-marked span (inline backticks or a fenced block)
that no longer exists at HEAD flags the entry suspect. The extraction is a heuristic and errs towards
silence: a token counts only when it looks like a repository path (it contains ``/`` or ends in a common file
extension), is relative, and has no glob, URL, variable or option syntax. A ``:line`` or ``:line:col`` suffix
(``src/app.py:42``) is dropped. An inline span with spaces is one path only when a directory part comes before
its first space (``notes/my file.md``); otherwise it is read as a command line (``pytest tests/unit``) and each
word is considered on its own, as in a fenced block.
"""

from __future__ import annotations

import re

from git_memzoi.core.patterns import lazy

_FENCE = lazy(r"^(```|~~~)[^\n]*\n(.*?)^\1[ \t]*$", re.M | re.S)
_INLINE = lazy(r"(?<!`)`([^`\n]+)`(?!`)")
_EXTENSIONS = frozenset(
    [
        "md",
        "py",
        "pyi",
        "ts",
        "tsx",
        "js",
        "jsx",
        "mjs",
        "cjs",
        "json",
        "yml",
        "yaml",
        "toml",
        "txt",
        "cfg",
        "ini",
        "sh",
        "bash",
        "rs",
        "go",
        "c",
        "h",
        "cc",
        "cpp",
        "hpp",
        "java",
        "kt",
        "rb",
        "php",
        "cs",
        "swift",
        "lock",
        "html",
        "css",
        "scss",
        "sql",
        "proto",
        "xml",
        "gradle",
        "mk",
    ]
)
_FORBIDDEN = lazy(r"[*?\[\]{}<>|$`\"'=;&()!#@,\\]|://|^[-~]|^[A-Za-z]:/|^\.\.?/?$")
_LINE_SUFFIX = lazy(r"(?<=[^:\s]):\d+(?:[-:]\d+)*$")


def path_refs(body: str) -> tuple[str, ...]:
    """Return the sorted unique repository-relative paths referenced in ``body``'s code spans."""
    found: set[str] = set()
    without_fences = _FENCE.sub("", body)
    for match in _FENCE.finditer(body):
        for token in match.group(2).split():
            _add(found, token, allow_spaces=False)
    for match in _INLINE.finditer(without_fences):
        span = match.group(1).strip()
        if " " in span and "/" not in span.split(" ", 1)[0]:
            for token in span.split():  # a command line, not a path with spaces
                _add(found, token, allow_spaces=False)
        else:
            _add(found, span, allow_spaces=True)
    return tuple(sorted(found))


def _add(found: set[str], token: str, *, allow_spaces: bool) -> None:
    token = _LINE_SUFFIX.sub("", token.strip().removeprefix("./").rstrip(".:,;"))
    if not token or (" " in token and not (allow_spaces and "/" in token)):
        return
    if token.startswith("/") or _FORBIDDEN.search(token) or ".." in token.split("/"):
        return
    last = token.rstrip("/").rsplit("/", 1)[-1]
    ext = last.rsplit(".", 1)[-1].lower() if "." in last else ""
    if "/" in token.rstrip("/") or ext in _EXTENSIONS:
        found.add(token)
