"""Prohibited-content detection: the one classifier every write and read path of both models uses (store,
propose, capture, import, export, recall, doctor, the pre-commit guard, memkeep verify's output).

Three sources, one answer per line and rule, naming the rule and the 1-based line but never the matched text:

1. gitleaks' maintained rule pack and a few provider rules it lacks, both data under
   ``git_memzoi/resources/secrets/`` and run by :mod:`git_memzoi.core.secret_rules` (RE2, keyword-filtered);
2. detect-secrets' token-shape plugins (:data:`SECRET_PLUGINS`; its entropy and keyword plugins flag commit ids
   and prose, BR-26), entered only for a line that has one of their shapes (its import costs ~150 ms);
3. house rules for what memory text holds and code rarely does (:mod:`git_memzoi.core.secret_house`).

A pack hit on a span another source already reported is not repeated. :func:`redact` masks every credential
span (for text that must be shown, such as a memkeep check command). The shapes of (2) and the pack's data of
(1) are kept in one derived file (:func:`remember_shapes_in`), so that a process whose texts have no token shape
never imports detect-secrets and never parses the TOML pack.
"""

from __future__ import annotations

import bisect
import contextlib
import functools
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from git_memzoi.core import secret_house as house

if TYPE_CHECKING:
    from detect_secrets.plugins.base import RegexBasedDetector

    from git_memzoi.core.secret_rules import Pack

# detect-secrets plugins that match a token's own shape
SECRET_PLUGINS = (
    "AWSKeyDetector",
    "ArtifactoryDetector",
    "AzureStorageKeyDetector",
    "BasicAuthDetector",
    "CloudantDetector",
    "DiscordBotTokenDetector",
    "GitHubTokenDetector",
    "GitLabTokenDetector",
    "IbmCloudIamDetector",
    "IbmCosHmacDetector",
    "JwtTokenDetector",
    "MailchimpDetector",
    "NpmDetector",
    "OpenAIDetector",
    "PrivateKeyDetector",
    "PypiTokenDetector",
    "SendGridDetector",
    "SlackDetector",
    "SoftlayerDetector",
    "SquareOAuthDetector",
    "StripeDetector",
    "TelegramBotTokenDetector",
    "TwilioKeyDetector",
)
PERSONAL = house.PERSONAL
TRANSCRIPT = house.TRANSCRIPT
is_placeholder = house.is_placeholder
MASK = "[redacted]"
# rules that name no provider: a secret they share with another rule is named by the other
GENERIC = frozenset({"high_entropy_string", "generic-api-key"})
# house rules that know a secret by its context (a key word, a URL), reported beside a provider's name
CONTEXTUAL = frozenset({"credential_assignment", "url_password", "password_in_prose"})


@dataclass(frozen=True)
class Finding:
    """One hit: ``rule`` is a stable code (a detect-secrets type such as ``GitHub Token``, a gitleaks rule id such
    as ``gcp-api-key``, or a house rule name), ``line`` 1-based."""

    rule: str
    line: int

    @property
    def kind(self) -> str:
        """``credential``, ``personal_data`` or ``transcript``: the class of prohibited content."""
        if self.rule in PERSONAL:
            return "personal_data"
        return "transcript" if self.rule in TRANSCRIPT else "credential"


def classify(text: str, *, personal: bool = True) -> list[Finding]:
    """The prohibited content in ``text``: findings sorted by line then rule, one per line and rule.

    With ``personal`` false only credential rules run (the pre-commit guard's secret gate).
    """
    return classify_all([text], personal=personal)[0]


def classify_all(texts: Sequence[str], *, personal: bool = True) -> list[list[Finding]]:
    """:func:`classify` of each of ``texts``, in order. Texts classified before in this process are answered from
    :data:`_classify_cached`; the others get one detect-secrets set-up for all of them, made only when a line of
    one of them has a plugin's token shape."""
    found = [_classify_cached.get((text, personal)) for text in texts]
    missing = [n for n, findings in enumerate(found) if findings is None]
    if missing:
        with contextlib.ExitStack() as stack:
            scanner = _LazyScanner(stack)
            for n in missing:
                spans = _spans(texts[n], personal, scanner)
                found[n] = _classify_cached.put((texts[n], personal), _findings(texts[n], spans))
    return [list(findings or ()) for findings in found]


def redact(text: str) -> str:
    """``text`` with every credential span replaced by :data:`MASK` (a line whose secret cannot be located is
    masked whole). Text without a credential comes back unchanged."""
    with contextlib.ExitStack() as stack:
        spans = sorted((start, end) for _, start, end, _ in _spans(text, False, _LazyScanner(stack)))
    merged: list[list[int]] = []
    for start, end in spans:
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    out, at = [], 0
    for start, end in merged:
        out += [text[at:start], MASK]
        at = end
    return "".join([*out, text[at:]])


# ------------------------------------------------------------------------------------------------ scanning


def _spans(
    text: str, personal: bool, scan_line: Callable[[str], list[tuple[str, str]]]
) -> list[tuple[str, int, int, bool]]:
    """Every hit as ``(rule, start, end, from_pack)``, character offsets in ``text``."""
    starts = _line_starts(text)
    lines = text.splitlines()
    out: list[tuple[str, int, int, bool]] = []
    shapes = _token_shapes()
    own = house.hits(text)
    blocks = {bisect.bisect_right(starts, s) for rule, s, _ in own if rule == "private_key_block"}
    for number, line in enumerate(lines, start=1):
        if any(shape.search(line) for shape in shapes):
            base = starts[number - 1]
            for rule, value in scan_line(line):
                if rule == "Private Key" and number in blocks:
                    continue  # the house rule names it
                start, end = _token_around(line, value)
                own.append((rule, base + start, base + end))
    out += [(rule, s, e, False) for rule, s, e in own]
    if personal:
        out += [(rule, s, e, False) for rule, s, e in house.personal_hits(text, lines, starts)]
    out += [(h.rule, h.start, h.end, True) for h in _pack().hits(text)]
    # a documented stand-in is no secret, whichever rule matched it (AKIAIOSFODNN7EXAMPLE, <token>)
    return [h for h in out if h[0] in PERSONAL | TRANSCRIPT or not is_placeholder(text[h[1] : h[2]])]


_TOKEN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-+/=")


def _token_around(line: str, value: str) -> tuple[int, int]:
    """The span of the whole token holding a detect-secrets ``value`` in ``line`` (a plugin may report only a
    group of its match, ``ghp`` of a GitHub token); the whole line when the value is not found."""
    at = line.find(value) if value else -1
    if at < 0:
        return 0, len(line)
    start, end = at, at + len(value)
    while start > 0 and line[start - 1] in _TOKEN_CHARS:
        start -= 1
    while end < len(line) and line[end] in _TOKEN_CHARS:
        end += 1
    return start, end


def _findings(text: str, spans: Sequence[tuple[str, int, int, bool]]) -> tuple[Finding, ...]:
    """One finding per line and rule. A secret found by several rules is named by the most specific: a generic
    hit (:data:`GENERIC`) overlapping another is left out, and so is a pack hit overlapping a detect-secrets or
    house token hit (the names earlier messages used); :data:`CONTEXTUAL` hits stay beside the provider's."""

    def overlaps(start: int, end: int, others: list[tuple[int, int]]) -> bool:
        return any(s < end and start < e for s, e in others)

    specific = [(s, e) for rule, s, e, _ in spans if rule not in GENERIC]
    own = [(s, e) for rule, s, e, pack in spans if not pack and rule not in GENERIC | CONTEXTUAL]
    kept = [
        (rule, start)
        for rule, start, end, pack in spans
        if not (rule in GENERIC and overlaps(start, end, specific)) and not (pack and overlaps(start, end, own))
    ]
    starts = _line_starts(text)
    found = {Finding(rule, bisect.bisect_right(starts, start)) for rule, start in kept}
    return tuple(sorted(found, key=lambda f: (f.line, f.rule)))


def _line_starts(text: str) -> list[int]:
    """The offset of each line of ``text.splitlines()`` (the same line breaks, ``\\r`` and ``\\u2028`` included)."""
    starts, at = [], 0
    for line in text.splitlines(keepends=True):
        starts.append(at)
        at += len(line)
    return starts or [0]


class _LazyScanner:
    """detect-secrets' ``scan_line`` under the settings of :data:`SECRET_PLUGINS`, imported and entered (on
    ``stack``) at the first line that needs it; answers ``(type, secret value)`` pairs."""

    def __init__(self, stack: contextlib.ExitStack) -> None:
        self._stack = stack
        self._scan_line: Any = None

    def __call__(self, line: str) -> list[tuple[str, str]]:
        if self._scan_line is None:
            from detect_secrets.core.scan import scan_line
            from detect_secrets.settings import transient_settings

            self._stack.enter_context(transient_settings({"plugins_used": [{"name": n} for n in SECRET_PLUGINS]}))
            self._scan_line = scan_line
        return sorted({(s.type, s.secret_value or "") for s in self._scan_line(line)})


class _Findings:
    """A bounded map ``(text, personal)`` → findings, least recently used out first (thread-safe)."""

    def __init__(self, maxsize: int) -> None:
        self._items: dict[tuple[str, bool], tuple[Finding, ...]] = {}
        self._maxsize = maxsize
        self._lock = threading.Lock()

    def get(self, key: tuple[str, bool]) -> tuple[Finding, ...] | None:
        with self._lock:
            value = self._items.pop(key, None)
            if value is not None:
                self._items[key] = value
            return value

    def put(self, key: tuple[str, bool], value: tuple[Finding, ...]) -> tuple[Finding, ...]:
        with self._lock:
            self._items[key] = value
            while len(self._items) > self._maxsize:
                del self._items[next(iter(self._items))]
        return value

    def cache_clear(self) -> None:
        with self._lock:
            self._items.clear()


# pure for the fixed rule set; a long-running server re-reads the same records
_classify_cached = _Findings(maxsize=2048)


# ------------------------------------------------------------------------------------------------ the derived file


@functools.lru_cache(maxsize=1)
def _token_shapes() -> tuple[re.Pattern[str], ...]:
    """The token regexes of :data:`SECRET_PLUGINS`. Each plugin reports only matches of its own regexes (its
    filters and checks only remove some), so a line none of them matches needs no ``scan_line``: the same
    findings, several times faster on prose (doctor scans every memory file, context every candidate)."""
    return tuple(re.compile(pattern, flags) for pattern, flags in _derived()["shapes"])


@functools.lru_cache(maxsize=1)
def _pack() -> Pack:
    """The compiled rule pack (its data from the derived file when it is current)."""
    from git_memzoi.core.secret_rules import Pack

    return Pack(_derived()["pack"])


@functools.lru_cache(maxsize=1)
def _derived() -> dict[str, Any]:
    """``{"shapes": [[pattern, flags]], "pack": <secret_rules.pack_data()>}``, read from the file of
    :func:`remember_shapes_in` when it was written for this classifier (:func:`identity`), so that a later process
    never imports detect-secrets for a text without a token shape nor parses the TOML pack; else computed and
    written there (best effort)."""
    import json

    from git_memzoi.core import safe_read

    folder, ident = _SHAPES["folder"], identity()
    path = folder / "secret-shapes.json" if folder is not None and ident is not None else None
    if path is not None:
        try:  # a FIFO there is never opened (it blocked every write and recall), nor a file over the cap read
            data = safe_read.load_json(safe_read.read_bytes(path, MAX_SHAPES_BYTES))
            if data["identity"] == ident:
                [re.compile(pattern, flags) for pattern, flags in data["shapes"]]
                if isinstance(data["pack"]["rules"], list) and isinstance(data["pack"]["allow"], list):
                    return {"shapes": data["shapes"], "pack": data["pack"]}
        except (OSError, ValueError, LookupError, TypeError, re.error, safe_read.FileRefused):
            pass  # missing, foreign, damaged or no regular file: computed again
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class

    from git_memzoi.core.secret_rules import pack_data

    plugins: Mapping[str, type[RegexBasedDetector]] = get_mapping_from_secret_type_to_class()
    classes = {cls.__name__: cls for cls in plugins.values()}
    shapes = [[regex.pattern, regex.flags] for name in SECRET_PLUGINS for regex in classes[name]().denylist]
    derived = {"shapes": shapes, "pack": pack_data()}
    if path is not None:
        from git_memzoi.core.atomic import write_cache

        write_cache(path, json.dumps({"identity": ident, **derived}, ensure_ascii=False).encode("utf-8"))
    return derived


_SHAPES: dict[str, Path | None] = {"folder": None}
MAX_SHAPES_BYTES = 4 * 1024 * 1024  # the derived file: the token shapes and the rule pack's data, about 70 KB


def remember_shapes_in(folder: Path | None) -> None:
    """Keep the plugins' token shapes and the rule pack's data in ``folder`` (a derived cache: the git dir's
    ``memzoi/cache``, never a git-visible place) for the processes after this one; ``None`` stops it."""
    if _SHAPES["folder"] != folder:
        _SHAPES["folder"] = folder
        _derived.cache_clear()
        _token_shapes.cache_clear()
        _pack.cache_clear()


@functools.lru_cache(maxsize=1)
def identity() -> str | None:
    """What findings depend on besides the text: detect-secrets' version file, the rule packs and the sources of
    the classifier's modules. Read, never imported: skipping that import (~150 ms) is the derived file's point.
    ``None`` when one cannot be read (nothing derived may then be kept)."""
    from importlib.util import find_spec

    from git_memzoi.core import secret_rules
    from git_memzoi.core.hashing import content_hash

    try:
        spec = find_spec("detect_secrets")
        if spec is None or spec.origin is None:
            return None
        parts = [Path(spec.origin).with_name("__version__.py").read_bytes(), *secret_rules.pack_files()]
        parts += [Path(m.__file__).read_bytes() for m in (house, secret_rules) if m.__file__]
        parts.append(Path(__file__).read_bytes())
    except (ImportError, OSError, ValueError):
        return None
    return content_hash(b"\0".join(parts))
