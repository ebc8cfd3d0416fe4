"""gitleaks' default rule pack run on text as gitleaks runs it: the maintained half of the credential classifier
(:mod:`git_memzoi.core.secret_scan` adds detect-secrets' plugins and the house rules).

The pack is package data: ``git_memzoi/resources/secrets/gitleaks.toml`` (MIT; its source, commit and licence sit
beside it) and ``extra.toml``, the same format for the few providers it lacks. :func:`pack_data` reads both :func:`pack_data` into plain JSON-able data once per classifier identity (the caller keeps
that data in a derived cache, so a later process reads 1 ms of JSON instead of 20 ms of TOML). :class:`Pack`
matches it with Google's RE2, the engine and syntax the pack is written for (linear time, so no rule can hang a
hook on a hostile file), following gitleaks' ``detect/detect.go`` (v8.28):

- a rule runs only when one of its keywords occurs in the lower-cased text (found in one pass by an RE2 set);
- a match's secret is the rule's ``secretGroup``, else its first non-empty group, else the whole match;
- a secret whose Shannon entropy is at most the rule's ``entropy`` is dropped;
- then the global allowlist and the rule's allowlists (``regexes`` on the secret, the match or the line per
  ``regexTarget``; ``stopwords`` contained in the lower-cased secret) drop it.

Memory text has no file path, so rules restricted to a path (``pkcs12-file``, ``kubernetes-secret-yaml``, …)
and the path or commit parts of allowlists are left out; an ``AND`` allowlist that needs a path never applies.
"""

from __future__ import annotations

import bisect
import functools
import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PACKS = ("gitleaks.toml", "extra.toml")  # under git_memzoi/resources/secrets/


def entropy(text: str) -> float:
    """Shannon entropy of ``text`` in bits per character (gitleaks' ``shannonEntropy``); 0 for ``""``."""
    if not text:
        return 0.0
    n = len(text)
    return -sum(c / n * math.log2(c / n) for c in Counter(text).values())


def pack_files() -> list[bytes]:
    """The packaged rule files' bytes, in :data:`PACKS` order (part of the classifier's identity).

    Raises:
        OSError: the package data is missing (a broken install).
    """
    # a plain path beside this module: importlib.resources costs ~5 ms to import on every recall call, and the
    # package is installed as files (setuptools package-data), never zipped
    folder = Path(__file__).resolve().parent.parent / "resources" / "secrets"
    return [(folder / name).read_bytes() for name in PACKS]


def pack_data(files: Sequence[bytes] | None = None) -> dict[str, Any]:
    """The packs (TOML ``files``, default :func:`pack_files`) as the JSON-able data :class:`Pack` takes:
    ``{"rules": [{"id", "regex", "keywords", "entropy", "group", "allow"}], "allow": [...]}``, where each allowlist
    is ``{"target": "secret"|"match"|"line", "regexes": [...], "stopwords": [...]}`` and keywords are lower-cased.
    The global allowlist of each file applies to every rule (gitleaks' is the only one).

    Raises:
        OSError, tomllib.TOMLDecodeError: a pack cannot be read.
    """
    import tomllib

    configs = [tomllib.loads(raw.decode("utf-8")) for raw in (pack_files() if files is None else files)]
    rules = [
        {
            "id": rule["id"],
            "regex": rule["regex"],
            "keywords": sorted({k.lower() for k in rule.get("keywords", [])}),
            "entropy": float(rule.get("entropy", 0.0)),
            "group": int(rule.get("secretGroup", 0)),
            "allow": _allowlists(rule.get("allowlists", [])),
        }
        for config in configs
        for rule in config.get("rules", [])
        if "regex" in rule and "path" not in rule  # no path to test in memory text
    ]
    allow = [a for c in configs for a in (c.get("allowlist", {}), *c.get("allowlists", []))]
    return {"rules": rules, "allow": _allowlists(allow)}


def _allowlists(items: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for a in items:
        if str(a.get("condition", "OR")).upper() == "AND" and (a.get("paths") or a.get("commits")):
            continue  # needs a path or a commit to hold, which memory text never has
        regexes, stopwords = list(a.get("regexes", [])), [w.lower() for w in a.get("stopwords", [])]
        if regexes or stopwords:
            out.append({"target": a.get("regexTarget") or "secret", "regexes": regexes, "stopwords": stopwords})
    return out


@dataclass(frozen=True)
class Hit:
    """One secret found by a rule: the rule id and the secret's character span in the text (never the text)."""

    rule: str
    start: int
    end: int


class Pack:
    """The compiled pack: rules compiled on first use, the keyword set once (RE2 is imported only then)."""

    def __init__(self, data: Mapping[str, Any]) -> None:
        self._rules: list[dict[str, Any]] = list(data["rules"])
        self._allow: list[dict[str, Any]] = list(data["allow"])
        self._keywords = sorted({k for rule in self._rules for k in rule["keywords"]})
        self._by_keyword: dict[str, list[int]] = {}
        for n, rule in enumerate(self._rules):
            for k in rule["keywords"]:
                self._by_keyword.setdefault(k, []).append(n)
        self._always = [n for n, rule in enumerate(self._rules) if not rule["keywords"]]
        self._compiled: dict[int, Any] = {}

    @functools.cached_property
    def _keyword_set(self) -> Any:
        import re2

        found = re2.Set.SearchSet()
        for k in self._keywords:
            found.Add(re2.escape(k))
        found.Compile()
        return found

    def _regex(self, n: int) -> Any:
        if n not in self._compiled:
            import re2

            self._compiled[n] = re2.compile(self._rules[n]["regex"])
        return self._compiled[n]

    @functools.cached_property
    def _allow_regexes(self) -> dict[str, Any]:
        import re2

        lists = [*self._allow, *(a for rule in self._rules for a in rule["allow"])]
        return {r: re2.compile(r) for a in lists for r in a["regexes"]}

    def candidates(self, text: str) -> list[int]:
        """The rules whose keywords occur in ``text`` (lower-cased), in pack order."""
        present = self._keyword_set.Match(text.lower()) or [] if self._keywords else []
        chosen = {n for i in present for n in self._by_keyword[self._keywords[i]]}
        return sorted(chosen.union(self._always))

    def hits(self, text: str) -> list[Hit]:
        """Every secret the pack finds in ``text``, in pack order then position."""
        out: list[Hit] = []
        lines: list[int] | None = None
        for n in self.candidates(text):
            rule, regex = self._rules[n], self._regex(n)
            for match in regex.finditer(text):
                start, end = match.span()
                while end > start and text[end - 1] == "\n":  # gitleaks trims newlines off a match
                    end -= 1
                group = self._secret_group(match, rule["group"])
                s_start, s_end = match.span(group) if group else (start, end)
                secret = text[s_start:s_end]
                if rule["entropy"] and entropy(secret) <= rule["entropy"]:
                    continue
                if lines is None:
                    lines = [m.start() for m in re.finditer("\n", text)]
                line = _line_of(text, lines, start, end)
                if self._allowed(self._allow, secret, text[start:end], line) or self._allowed(
                    rule["allow"], secret, text[start:end], line
                ):
                    continue
                out.append(Hit(rule["id"], s_start, s_end))
        return out

    @staticmethod
    def _secret_group(match: Any, group: int) -> int:
        groups = match.groups()
        if group:
            return group if group <= len(groups) else 0
        return next((i for i, g in enumerate(groups, start=1) if g), 0)

    def _allowed(self, allowlists: Sequence[Mapping[str, Any]], secret: str, match: str, line: str) -> bool:
        lowered = secret.lower()
        for a in allowlists:
            target = {"match": match, "line": line}.get(a["target"], secret)
            if target and any(self._allow_regexes[r].search(target) for r in a["regexes"]):
                return True
            if lowered and any(w in lowered for w in a["stopwords"]):
                return True
        return False


def _line_of(text: str, newlines: list[int], start: int, end: int) -> str:
    """The whole line(s) holding ``text[start:end]`` (gitleaks' ``Line``)."""
    first = bisect.bisect_left(newlines, start)
    begin = newlines[first - 1] + 1 if first else 0
    last = bisect.bisect_left(newlines, end)
    stop = newlines[last] if last < len(newlines) else len(text)
    return text[begin:stop]
