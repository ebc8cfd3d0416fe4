"""Prohibited-content detection: the one classifier shared by capture, the write gates, recall and the pre-commit
guard. Pure apart from the detect-secrets library and one derived file, the plugins' token shapes
(:func:`remember_shapes_in`), which lets a process whose texts have no token shape skip detect-secrets entirely.

:func:`classify` returns one :class:`Finding` per line and rule, naming the rule and the 1-based line but never the
matched text. Rules: detect-secrets' token-shape plugins (its entropy and keyword plugins are left out: they flag
commit ids and prose, BR-26), a private-key-block rule, credential assignments whose value is not a placeholder
(``${DB_PASSWORD}`` is not a secret, BR-25), ``sk-`` style API keys, and the personal-data and transcript rules the
capture data classes need (e-mail, phone, raw chat transcripts, a prompt-injection phrase).

The gates built on it: :func:`require_clean_fields` and :func:`require_clean` refuse a write
(``prohibited_content_detected``) naming the field and line of the text the user gave, never a file that does not
exist yet; :func:`first_credentials` and :func:`first_in_files` let export, context and doctor find records that
hold a credential anyway (hand-edited, or committed with ``--no-verify``).
"""

from __future__ import annotations

import contextlib
import functools
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from detect_secrets.plugins.base import RegexBasedDetector

    from git_memzoi.errors import InputError

# detect-secrets plugins that match a token's own shape; the entropy and keyword plugins flag commit ids and
# prose in memory files, so they are left out
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
# rule names of the personal-data and transcript kinds (the rest are credentials)
PERSONAL = frozenset({"email_address", "phone_number"})
TRANSCRIPT = frozenset({"raw_transcript", "prompt_injection"})

_PRIVATE_KEY = re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")
_API_KEY = re.compile(r"(?<![A-Za-z0-9_-])sk-(?:proj-|live-|test-)?[A-Za-z0-9]{32,}(?![A-Za-z0-9])")
_ASSIGNMENT = re.compile(
    r"(?i)(?<![A-Za-z0-9])[A-Za-z0-9_.-]*(?:password|passwd|pwd|secret|token|api[_-]?key|access[_-]?key|"
    r"private[_-]?key|credential)s?[\"']?\s*(?::|=|:=)\s*[\"']?(?P<value>[^\s\"',;]+)"
)
_PLACEHOLDER = re.compile(
    r"(?i)^(?:\$\{[^}]*\}|\$[A-Z_][A-Z0-9_]*|<[^>]*>|\{\{[^}]*\}\}|%\([^)]*\)s|\*+|x{4,}|\.{3,}|…)$"
    r"|example|placeholder|changeme|redacted|your[_-]|dummy|<|\$\{"
)
_EMAIL = re.compile(
    r"(?<![A-Za-z0-9._%+-])(?P<local>[A-Za-z0-9._%+-]+)@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}"
    r"(?![A-Za-z0-9-])"
)
_PHONE = re.compile(
    r"(?<![\w+.-])(?:\+\d{1,3}[ .-]?)?(?:\(\d{2,4}\)[ .-]?|\d{3}[ .-])\d{3}[ .-]\d{4}(?![\w.-])"
    r"|(?<![\w+])\+\d{1,3}(?:[ .-]\d{2,5}){2,4}(?![\w.-])"
)
_SPEAKER = re.compile(
    r"^\s*(?:[-*>]\s*)?(?:\*\*)?(?P<who>user|human|assistant|ai|system)(?:\*\*)?\s*:\s*\S", re.IGNORECASE
)
_INJECTION = re.compile(r"(?i)\bignore (?:all )?(?:the )?previous instructions\b")
_NOT_PEOPLE = ("git", "noreply", "no-reply")


@dataclass(frozen=True)
class Finding:
    """One hit: ``rule`` is a stable code (a detect-secrets type such as ``GitHub Token``, or a rule name), ``line`` 1-based."""

    rule: str
    line: int

    @property
    def kind(self) -> str:
        """``credential``, ``personal_data`` or ``transcript``: the class of prohibited content."""
        if self.rule in PERSONAL:
            return "personal_data"
        return "transcript" if self.rule in TRANSCRIPT else "credential"


def is_placeholder(value: str) -> bool:
    """True when an assigned value is a reference or a stand-in (``${X}``, ``$X``, ``<x>``, ``****``, …)."""
    return bool(_PLACEHOLDER.search(value))


def classify(text: str, *, personal: bool = True) -> list[Finding]:
    """The prohibited content in ``text``: findings sorted by line then rule, one per line and rule.

    With ``personal`` false only credential rules run (the pre-commit guard's secret gate).
    """
    return classify_all([text], personal=personal)[0]


def classify_all(texts: Sequence[str], *, personal: bool = True) -> list[list[Finding]]:
    """:func:`classify` of each of ``texts``, in order. Texts classified before in this process are answered from
    :data:`_classify_cached`; the others are matched against the plugins' token shapes first, and detect-secrets
    itself (its import and settings cost ~150 ms, which every write and hook would pay) is entered only when a
    line of one of them has that shape, once for all of them."""
    found = [_classify_cached.get((text, personal)) for text in texts]
    missing = [n for n, findings in enumerate(found) if findings is None]
    if missing:
        with contextlib.ExitStack() as stack:
            scanner = _LazyScanner(stack)
            for n in missing:
                found[n] = _classify_cached.put((texts[n], personal), _scan(texts[n], personal, scanner))
    return [list(findings or ()) for findings in found]


class _LazyScanner:
    """detect-secrets' ``scan_line`` under the settings of :data:`SECRET_PLUGINS`, imported and entered (on
    ``stack``) at the first line that needs it."""

    def __init__(self, stack: contextlib.ExitStack) -> None:
        self._stack = stack
        self._scan_line: Any = None

    def __call__(self, line: str) -> set[str]:
        if self._scan_line is None:
            from detect_secrets.core.scan import scan_line
            from detect_secrets.settings import transient_settings

            self._stack.enter_context(transient_settings({"plugins_used": [{"name": n} for n in SECRET_PLUGINS]}))
            self._scan_line = scan_line
        return {s.type for s in self._scan_line(line)}


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


# pure for the fixed plugin set; a long-running server re-reads the same records
_classify_cached = _Findings(maxsize=2048)


def _scan(text: str, personal: bool, scan_line: Callable[[str], set[str]]) -> tuple[Finding, ...]:
    """The findings of ``text``; ``scan_line`` (detect-secrets, see classify_all) runs only on lines that have one
    of the plugins' token shapes."""
    shapes = _token_shapes()
    lines = text.splitlines()
    found: set[Finding] = set()
    speakers = {m.group("who").lower() for line in lines if (m := _SPEAKER.match(line))}
    transcript = bool(speakers & {"user", "human"}) and bool(speakers & {"assistant", "ai"})
    for number, line in enumerate(lines, start=1):
        rules = _line_rules(line)
        if any(shape.search(line) for shape in shapes):
            rules.update(scan_line(line))
        if "private_key_block" in rules:
            rules.discard("Private Key")
        if personal:
            rules.update(_personal_rules(line))
            if transcript and _SPEAKER.match(line):
                rules.add("raw_transcript")
        found.update(Finding(rule, number) for rule in rules)
    return tuple(sorted(found, key=lambda f: (f.line, f.rule)))


@functools.lru_cache(maxsize=1)
def _token_shapes() -> tuple[re.Pattern[str], ...]:
    """The token regexes of :data:`SECRET_PLUGINS`. Each plugin reports only matches of its own regexes (its
    filters and checks only remove some), so a line none of them matches needs no ``scan_line``: the same
    findings, several times faster on prose (doctor scans every memory file, context every candidate).

    Read from the shapes file of :func:`remember_shapes_in` when it was written for this classifier
    (:func:`_identity`), so that a process whose texts have no such shape never imports detect-secrets; else
    taken from the plugins and written there (best effort)."""
    import json

    folder, identity = _SHAPES["folder"], _identity()
    path = folder / "secret-shapes.json" if folder is not None and identity is not None else None
    if path is not None:
        try:
            data = json.loads(path.read_bytes())
            if data["identity"] == identity:
                return tuple(re.compile(pattern, flags) for pattern, flags in data["shapes"])
        except (OSError, ValueError, LookupError, TypeError, re.error):
            pass  # missing, foreign or damaged: taken from the plugins again
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class

    plugins: Mapping[str, type[RegexBasedDetector]] = get_mapping_from_secret_type_to_class()
    classes = {cls.__name__: cls for cls in plugins.values()}
    shapes = tuple(regex for name in SECRET_PLUGINS for regex in classes[name]().denylist)
    if path is not None:
        from git_memzoi.core.atomic import write_cache

        data = {"identity": identity, "shapes": [[shape.pattern, shape.flags] for shape in shapes]}
        write_cache(path, json.dumps(data, ensure_ascii=False).encode("utf-8"))  # best effort: only costs time
    return shapes


_SHAPES: dict[str, Path | None] = {"folder": None}


def remember_shapes_in(folder: Path | None) -> None:
    """Keep the plugins' token shapes in ``folder`` (a derived cache: the git dir's ``memzoi/cache``, never a
    git-visible place) for the processes after this one; ``None`` stops it."""
    if _SHAPES["folder"] != folder:
        _SHAPES["folder"] = folder
        _token_shapes.cache_clear()


def _line_rules(line: str) -> set[str]:
    rules = set()
    if _PRIVATE_KEY.search(line):
        rules.add("private_key_block")
    if _API_KEY.search(line):
        rules.add("api_key")
    for match in _ASSIGNMENT.finditer(line):
        value = match.group("value")
        shaped = not value.isalpha() or value != value.lower()  # prose words ("required") are not values
        if len(value) >= 8 and shaped and not is_placeholder(value):
            rules.add("credential_assignment")
    return rules


def _personal_rules(line: str) -> set[str]:
    rules = set()
    if any(m.group("local").lower() not in _NOT_PEOPLE for m in _EMAIL.finditer(line)):
        rules.add("email_address")
    if _PHONE.search(line):
        rules.add("phone_number")
    if _INJECTION.search(line):
        rules.add("prompt_injection")
    return rules


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


@functools.lru_cache(maxsize=1)
def _identity() -> str | None:
    """What findings depend on besides the text: detect-secrets' version file and this module's source (the
    plugin list and the rules). Read, never imported: skipping that import (~150 ms) is the cache's point."""
    from importlib.util import find_spec

    from git_memzoi.core.hashing import content_hash

    try:
        spec = find_spec("detect_secrets")
        if spec is None or spec.origin is None:
            return None
        version = Path(spec.origin).with_name("__version__.py").read_bytes()
        rules = Path(__file__).read_bytes()
    except (ImportError, OSError, ValueError):
        return None
    return content_hash(version + b"\0" + rules)


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
