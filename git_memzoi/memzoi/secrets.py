"""Prohibited-content detection (pure apart from the detect-secrets library): the one classifier shared by capture
and the pre-commit guard.

:func:`classify` returns one :class:`Finding` per line and rule, naming the rule and the 1-based line but never the
matched text. Rules: detect-secrets' token-shape plugins (its entropy and keyword plugins are left out: they flag
commit ids and prose, BR-26), a private-key-block rule, credential assignments whose value is not a placeholder
(``${DB_PASSWORD}`` is not a secret, BR-25), ``sk-`` style API keys, and the personal-data and transcript rules the
capture data classes need (e-mail, phone, raw chat transcripts, a prompt-injection phrase).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# detect-secrets plugins that match a token's own shape; the entropy and keyword plugins flag commit ids and
# prose in memory files, so they are left out
SECRET_PLUGINS = ("AWSKeyDetector", "ArtifactoryDetector", "AzureStorageKeyDetector", "BasicAuthDetector",
                  "CloudantDetector", "DiscordBotTokenDetector", "GitHubTokenDetector", "GitLabTokenDetector",
                  "IbmCloudIamDetector", "IbmCosHmacDetector", "JwtTokenDetector", "MailchimpDetector", "NpmDetector",
                  "OpenAIDetector", "PrivateKeyDetector", "PypiTokenDetector", "SendGridDetector", "SlackDetector",
                  "SoftlayerDetector", "SquareOAuthDetector", "StripeDetector", "TelegramBotTokenDetector",
                  "TwilioKeyDetector")  # fmt: skip
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
_EMAIL = re.compile(r"(?<![A-Za-z0-9._%+-])(?P<local>[A-Za-z0-9._%+-]+)@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}"
                    r"(?![A-Za-z0-9-])")  # fmt: skip
_PHONE = re.compile(
    r"(?<![\w+.-])(?:\+\d{1,3}[ .-]?)?(?:\(\d{2,4}\)[ .-]?|\d{3}[ .-])\d{3}[ .-]\d{4}(?![\w.-])"
    r"|(?<![\w+])\+\d{1,3}(?:[ .-]\d{2,5}){2,4}(?![\w.-])"
)
_SPEAKER = re.compile(r"^\s*(?:[-*>]\s*)?(?:\*\*)?(?P<who>user|human|assistant|ai|system)(?:\*\*)?\s*:\s*\S", re.IGNORECASE)
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
    from detect_secrets.core.scan import scan_line
    from detect_secrets.settings import transient_settings

    lines = text.splitlines()
    found: set[Finding] = set()
    speakers = {m.group("who").lower() for line in lines if (m := _SPEAKER.match(line))}
    transcript = bool(speakers & {"user", "human"}) and bool(speakers & {"assistant", "ai"})
    with transient_settings({"plugins_used": [{"name": name} for name in SECRET_PLUGINS]}):
        for number, line in enumerate(lines, start=1):
            rules = _line_rules(line)
            rules.update(s.type for s in scan_line(line))
            if "private_key_block" in rules:
                rules.discard("Private Key")
            if personal:
                rules.update(_personal_rules(line))
                if transcript and _SPEAKER.match(line):
                    rules.add("raw_transcript")
            found.update(Finding(rule, number) for rule in rules)
    return sorted(found, key=lambda f: (f.line, f.rule))


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


def require_clean(text: str, where: str) -> None:
    """Refuse ``text`` bound for a git-visible file (a record, a proposal packet) when it holds a credential.

    The same credential rules as the pre-commit guard (``personal=False``: the content class and sensitivity of
    a record decide about personal data). Raises :class:`~git_memzoi.errors.InputError` with code
    ``prohibited_content_detected`` naming ``where``, the rule and the line, never the value; the caller checks
    before it writes anything.
    """
    findings = classify(text, personal=False)
    if findings:
        from git_memzoi.errors import InputError

        first = findings[0]
        raise InputError(f"{where}: line {first.line} holds a credential ({first.rule}; not printed): remove it, "
                         "secrets never go to git-visible memory", "prohibited_content_detected")  # fmt: skip
