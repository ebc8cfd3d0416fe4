"""The house rules of the credential classifier (:mod:`git_memzoi.core.secret_scan`): shapes memory text holds and
code scanners rarely look for, and the personal-data and transcript rules capture's data classes need (pure).

Credential rules, each answering character spans (never the text):

- ``private_key_block``: a PEM ``BEGIN … PRIVATE KEY`` line;
- ``api_key``: an ``sk-`` style key (OpenAI's older and project keys without the ``T3BlbkFJ`` marker);
- ``credential_assignment``: ``password = …``, ``SECRET_KEY=…``, ``api_token: …`` whose value is neither a
  placeholder (``${DB_PASSWORD}``, ``<token>``, ``********``; BR-25) nor a reference (``os.environ['API_KEY']``,
  ``settings.SECRET_KEY``, ``getenv(…)``);
- ``url_password``: the password of a URL's user info (``redis://:pw@host``, ``https://u:pw@host``);
- ``password_in_prose``: "the admin password is Tr0ub4dor&3";
- ``high_entropy_string``: a bare base64 or base64url string of 32+ characters that looks random: upper and lower
  case and a digit, Shannon entropy ≥ 4.0 bits per character, and less than 65 % of it in word-like runs
  (``[A-Z]?[a-z]{3,}``), which CamelCase identifiers and paths have and random strings almost never (measured in
  ``tests/core/test_secret_labelled_set.py``); hash digests (``sha512-…``), SSH public keys and data URIs are
  not secrets.

A hit whose secret is a placeholder (``AKIAIOSFODNN7EXAMPLE``, ``<token>``) is dropped, whichever rule found it
(:mod:`~git_memzoi.core.secret_scan` applies :func:`is_placeholder` to every credential span).

Every regex here has bounded repeats before any backtracking point, so a hostile line costs linear time.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from git_memzoi.core.patterns import lazy

PERSONAL = frozenset({"email_address", "phone_number"})
TRANSCRIPT = frozenset({"raw_transcript", "prompt_injection"})

_PRIVATE_KEY = lazy(r"-----BEGIN (?:[A-Z0-9]+ ){0,4}PRIVATE KEY(?: BLOCK)?-----")
_API_KEY = lazy(r"(?<![A-Za-z0-9_-])sk-(?:proj-|live-|test-)?[A-Za-z0-9]{32,512}(?![A-Za-z0-9])")
# the name starts where an identifier starts, so a long identifier is tried once, not at each of its characters
_ASSIGNMENT = lazy(
    r"(?i)(?<![A-Za-z0-9_.-])[A-Za-z0-9_.-]{0,50}?(?:password|passwd|pwd|secret|token|api[_-]?key|access[_-]?key|"
    r"private[_-]?key|credential)s?(?:[_.-]?(?:key|token|value|b64|base64))?[\"']?[ \t]{0,8}(?::|=|:=|=>)[ \t]{0,8}"
    r"[\"']?(?P<value>[^\s\"',;]{1,512})"
)
_PLACEHOLDER = lazy(
    r"(?i)^(?:\$\{[^}]*\}|\$[A-Z_][A-Z0-9_]*|<[^>]*>|\{\{[^}]*\}\}|%\([^)]*\)s|\*+|•+|x{4,}|\.{3,}|…)$"
    r"|example|placeholder|changeme|redacted|your[_-]|dummy|<|\$\{"
)
# a value that names where the secret is, in code: a call or subscript (os.environ[…], getenv(…)), a dotted path
# (settings.SECRET_KEY), or an interpolation ({token}, f-strings and format strings)
_REFERENCE = lazy(
    r"^[A-Za-z_][\w.]{0,100}[\[(]|^[A-Za-z_]{1,40}(?:\.[A-Za-z_][A-Za-z0-9_]{0,60}){1,8}$|^\{[^{}\s]{1,100}\}"
)
_URL_PASSWORD = lazy(
    r"(?i)\b[a-z][a-z0-9+.-]{0,30}://[^\s:/@\"'<>]{0,256}:(?P<value>[^\s/@\"'<>]{1,256})@[A-Za-z0-9\[]"
)
_DOC_WORDS = frozenset({"password", "passwd", "pass", "pwd", "pw", "secret", "token", "user", "username"})
_PROSE = lazy(
    r"(?i)\b(?:password|passphrase|passwd|passcode)s?\b(?:[ \t]{1,4}(?:for|of|to)[ \t]{1,4}[\w.@-]{1,64})?"
    r"[ \t]{1,4}(?:is|was|reads|becomes|(?:set|changed) to|is now)[ \t]{0,4}:?[ \t]{1,4}[\"'`“]?"
    r"(?P<value>[^\s\"'`”]{6,128})"
)
# possessive: a run of token characters is taken whole or not at all (linear on a hostile line); a sentence's
# closing full stop may follow it, a file name's extension may not
_TOKEN = lazy(r"(?<![A-Za-z0-9+/_.~%@\\-])(?P<value>[A-Za-z0-9+/_-]{32,}+={0,2}+)(?![A-Za-z0-9+/=_-])(?!\.[A-Za-z0-9])")
_WORDLIKE = lazy(r"[A-Z]?[a-z]{3,}")
_DIGEST = lazy(r"(?i)^(?:sha(?:1|224|256|384|512)|md5|blake2[bs]?)[-_]")
# what precedes an encoded blob that is public: an SSH public key's type, a data URI
_PUBLIC_BLOB = lazy(
    r"(?:(?:ssh-(?:rsa|dss|ed25519)|ecdsa-sha2-nistp\d{3}|sk-ssh-ed25519@openssh\.com)[ \t]+|;base64,)$"
)
_IN_URL = lazy(r"://[^\s/@]{0,256}$")

_EMAIL = lazy(
    r"(?<![A-Za-z0-9._%+-])(?P<local>[A-Za-z0-9._%+-]{1,64})@(?P<domain>[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63})"
    r"{0,8}\.[A-Za-z]{2,24})(?![A-Za-z0-9-])"
)
# the documentation domains of RFC 2606 (example.com/.net/.org and their subdomains) and hosts that only relay (no
# person behind them); the reserved TLDs (.invalid, .test, …) stay personal data: the capture conformance corpus
# uses person@example.invalid as a synthetic person
_RESERVED_DOMAIN = lazy(
    r"(?i)(?:^|\.)(?:example\.(?:com|net|org)|users\.noreply\.github\.com|noreply\.github\.com|noreply\.gitlab\.com)$"
)
_NOT_PEOPLE = ("git", "noreply", "no-reply", "donotreply", "do-not-reply")
_PHONE = lazy(
    r"(?<![\w+.-])(?:\+\d{1,3}[ .-]?)?(?:\(\d{2,4}\)[ .-]?|\d{3}[ .-])\d{3}[ .-]\d{4}(?![\w.-])"
    r"|(?<![\w+])\+\d{1,3}(?:[ .-]\d{2,5}){2,4}(?![\w.-])"
)
_SPEAKER = lazy(r"^\s*(?:[-*>]\s*)?(?:\*\*)?(?P<who>user|human|assistant|ai|system)(?:\*\*)?\s*:\s*\S", re.IGNORECASE)
_INJECTION = lazy(r"(?i)\bignore (?:all )?(?:the )?previous instructions\b")


def is_placeholder(value: str) -> bool:
    """True when an assigned value is a stand-in (``${X}``, ``$X``, ``<x>``, ``****``, ``changeme``, …)."""
    return bool(_PLACEHOLDER.search(value))


def is_reference(value: str) -> bool:
    """True when an assigned value names where a secret lives in code (``os.environ[…``, ``getenv(…``,
    ``settings.SECRET_KEY``) instead of holding one."""
    return bool(_REFERENCE.search(value))


def hits(text: str) -> list[tuple[str, int, int]]:
    """The credential house rules' hits in ``text``: ``(rule, start, end)`` spans of the secret. Each rule is run
    over the whole text once (none crosses a line break: they match spaces and tabs, never ``\\s``)."""
    found = [("private_key_block", m.start(), m.end()) for m in _PRIVATE_KEY.finditer(text)]
    found += [("api_key", m.start(), m.end()) for m in _API_KEY.finditer(text)]
    for match in _ASSIGNMENT.finditer(text):
        value = match.group("value")
        if len(value) >= 8 and _shaped(value) and not is_placeholder(value) and not is_reference(value):
            found.append(("credential_assignment", *match.span("value")))
    for match in _URL_PASSWORD.finditer(text):
        value = match.group("value")
        if len(value) >= 2 and value.lower() not in _DOC_WORDS and not is_placeholder(value):
            found.append(("url_password", *match.span("value")))
    for match in _PROSE.finditer(text):
        value = match.group("value").rstrip(".,;:!?)")
        if len(value) >= 6 and _password_like(value):
            found.append(("password_in_prose", match.start("value"), match.start("value") + len(value)))
    for match in _TOKEN.finditer(text):
        start, value = match.start(), match.group("value")
        line_start = max(text.rfind("\n", 0, start), text.rfind("\r", 0, start)) + 1
        if len(value) <= 512 and _random_looking(value) and not _PUBLIC_BLOB.search(text, line_start, start):
            found.append(("high_entropy_string", *match.span("value")))
    return found


def personal_hits(text: str, lines: Sequence[str], starts: Sequence[int]) -> list[tuple[str, int, int]]:
    """The personal-data and transcript rules' hits in ``text`` (``lines``, ``starts``: its lines and their
    offsets): an e-mail address of a person (not a reserved or no-reply one), a phone number, the
    prompt-injection phrase, and every speaker line of a raw transcript (one with both a user and an assistant)."""
    found = [("email_address", m.start(), m.end()) for m in _EMAIL.finditer(text) if _person(text, m)]
    found += [("phone_number", m.start(), m.end()) for m in _PHONE.finditer(text)]
    found += [("prompt_injection", m.start(), m.end()) for m in _INJECTION.finditer(text)]
    speakers = {m.group("who").lower() for line in lines if (m := _SPEAKER.match(line))}
    if bool(speakers & {"user", "human"}) and bool(speakers & {"assistant", "ai"}):
        found += [
            ("raw_transcript", base, base + len(line))
            for line, base in zip(lines, starts, strict=False)
            if _SPEAKER.match(line)
        ]
    return found


def _person(text: str, match: re.Match[str]) -> bool:
    """An address of a person: not a reserved or relay one, and not a URL's user info (``scheme://user@host``)."""
    if match.group("local").lower() in _NOT_PEOPLE or _RESERVED_DOMAIN.search(match.group("domain")):
        return False
    line_start = text.rfind("\n", 0, match.start()) + 1
    return not _IN_URL.search(text, line_start, match.start())


def _shaped(value: str) -> bool:
    """Not a prose word ("required", "Optional"): a value has a digit, a symbol or inner capitals."""
    return not value.isalpha() or value[1:] != value[1:].lower()


def _password_like(value: str) -> bool:
    if is_placeholder(value) or is_reference(value) or "/" in value or value.startswith("$"):
        return False
    return not re.fullmatch(r"[A-Za-z]?[a-z]+(?:-[a-z]+)*", value)  # "stored", "re-generated", "Required"


def _random_looking(value: str) -> bool:
    from git_memzoi.core.secret_rules import entropy

    body = value.rstrip("=")
    if not (any(c.isupper() for c in body) and any(c.islower() for c in body) and any(c.isdigit() for c in body)):
        return False
    if _DIGEST.match(body):
        return False
    wordlike = sum(len(m.group()) for m in _WORDLIKE.finditer(body))
    return wordlike < 0.65 * len(body) and entropy(body) >= 4.0
