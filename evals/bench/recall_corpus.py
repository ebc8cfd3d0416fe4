"""Generated engineering notes and the queries written for them (the corpora of ``recall_quality.py``).

A corpus is a deterministic stream of records that read like a team's notes: a title by memory type ("Signer
salt defaults to per-repository in auth"), two to five body sentences that mention other components, files and
tools (so distractors share the target's words), tags and an ``applies_to`` path. Each record's text is drawn
from one *half* of every vocabulary pool (components, nouns, tools, files): the benchmark corpus uses half
``A`` with seed 17, the tuning corpus (the one the BM25 weights were chosen on) half ``B`` with seed 91, so
no weight was fitted to the benchmark's words or queries. Templates and the glue words are shared.

Queries: 100 per corpus, each written for one target among the first 1,000 records (so every size holds every
target): 80 lexical ones, in six kinds a user types (the exact title, a few title words, title words plus a
body word, a question with stop words, a file name plus a tag, a body fragment), and 20 paraphrases whose
content words are replaced by synonyms (a lexical index is expected to miss many; reported apart).
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from dataclasses import dataclass

COMPONENTS = (
    "auth", "billing", "scheduler", "search", "ingest", "storage", "cache", "gateway", "notifications", "payments",
    "reporting", "deploy", "metrics", "logging", "config", "signer", "uploader", "webhooks", "queue", "export",
    "sync", "migrations", "sessions", "admin", "ledger", "invoices", "mailer", "importer", "indexer", "frontend",
)  # fmt: skip
NOUNS = (
    "salt", "token", "retry budget", "timeout", "lockfile", "schema", "shard", "worker", "cron job", "rate limit",
    "certificate", "key rotation", "connection pool", "batch size", "cursor", "checksum", "manifest", "secret",
    "feature flag", "replica", "snapshot", "backoff", "queue depth", "heartbeat", "lease", "partition", "tenant id",
    "cookie", "refresh token", "csrf header", "content type", "upload chunk", "bucket policy", "cache key", "ttl",
    "eviction policy", "circuit breaker", "health check", "readiness probe", "build cache", "base image",
    "lint rule", "fixture", "flaky test", "trace id", "log level", "error budget", "alert threshold", "dashboard",
    "env variable", "signing key", "default", "config loader", "parser", "date format", "timezone", "locale",
    "rounding", "invoice number", "ledger entry", "idempotency key", "dead letter queue", "consumer group",
    "offset", "vacuum", "index bloat", "query plan", "transaction", "deadlock", "advisory lock", "file handle",
    "memory leak", "thread pool", "event loop", "websocket", "stream", "encoder", "compression level", "etag",
    "purge", "dns record", "handshake", "load balancer", "canary", "rollback", "release tag", "changelog",
    "version pin", "wheel", "jitter", "watermark", "quota", "allowlist", "denylist", "webhook signature",
    "nonce", "clock skew", "migration lock", "seed data", "pagination", "sort order", "unicode name", "hash",
)  # fmt: skip
TOOLS = (
    "postgres", "redis", "sqlite", "kafka", "s3", "nginx", "celery", "pydantic", "alembic", "terraform", "helm",
    "grafana", "prometheus", "sentry", "jwt", "oauth", "argon2", "bcrypt", "blake3", "zstd", "protobuf", "grpc",
    "docker", "kubernetes", "pytest", "mypy", "ruff", "pnpm", "cargo", "rabbitmq", "elasticsearch", "clickhouse",
)  # fmt: skip
FILES = (
    "settings", "client", "worker", "models", "views", "handlers", "middleware", "tasks", "routes", "schema",
    "serializers", "signals", "retry", "limits", "keys", "crypto", "loader", "backend", "cli", "jobs", "hooks",
    "store", "queue", "consumer", "producer", "api", "util", "errors", "pool", "state",
)  # fmt: skip
IDENT_HEADS = (
    "signer", "retry", "session", "upload", "invoice", "ledger", "webhook", "batch", "cursor", "lease", "quota",
    "shard", "tenant", "audit", "export", "render", "schema", "backup", "replica", "stream", "payment", "refund",
    "coupon", "search", "thumbnail", "email", "sms", "cron", "worker", "flag", "deploy", "metric", "trace",
    "archive", "import", "login", "password", "avatar", "report", "digest",
)  # fmt: skip
IDENT_TAILS = (
    "salt", "after_ms", "limit", "window", "ttl", "prefix", "version", "timeout", "budget", "mode", "depth", "count",
    "size", "key", "path", "threshold", "level", "policy", "format", "offset", "interval", "region", "bucket",
    "secret", "ratio", "retries", "cutoff", "grace", "seed", "url",
)  # fmt: skip
FAILURES = (
    "breaks", "times out", "leaks memory", "drops events", "returns stale data", "double charges",
    "fails silently", "deadlocks", "rejects valid input", "overflows", "retries forever", "loses writes",
)  # fmt: skip
CONDITIONS = (
    "the clock skews", "the replica lags", "two workers race", "the payload exceeds one megabyte",
    "the config is reloaded", "the tenant is deleted", "a retry overlaps", "the cache is cold", "the disk fills up",
    "daylight saving begins", "the leader fails over", "a deploy is half done",
)  # fmt: skip
VALUES = (
    "thirty seconds", "five retries", "per-repository", "disabled", "utc", "one hour", "ten thousand rows",
    "the first region", "strict mode", "read only", "two replicas", "gzip",
)  # fmt: skip
VERBS = ("rotate", "bump", "pin", "purge", "drain", "reindex", "backfill", "flush", "revoke", "replay", "resize")
PEOPLE = ("Ana", "Bo", "Chen", "Dara", "Eli", "Femi", "Gus", "Hana")
SYNONYMS = {
    "breaks": "stops working", "times out": "hangs", "leaks memory": "grows its heap", "drops events": "loses messages",
    "returns stale data": "serves old values", "double charges": "bills twice", "fails silently": "errors quietly",
    "deadlocks": "gets stuck", "rejects valid input": "refuses good requests", "overflows": "wraps around",
    "retries forever": "loops on retry", "loses writes": "forgets updates", "use": "adopt", "rotate": "cycle",
    "bump": "raise", "pin": "freeze", "purge": "clear", "drain": "empty", "reindex": "rebuild", "backfill": "fill in",
    "flush": "write out", "revoke": "withdraw", "replay": "rerun", "resize": "change the size of",
    "defaults to": "is set by default to", "keep": "retain", "store": "save", "avoid": "stay away from",
    "prefer": "choose", "owned by": "maintained by", "lives in": "is found in", "needs": "requires",
}  # fmt: skip
TYPES = ("decision", "warning", "procedure", "fact", "preference", "risk")
TITLES = {
    "decision": ("Use {tool} for the {component} {noun}", "Set {ident} per tenant in {component}",
                 "Keep {ident} out of {tool}"),
    "warning": ("{Component} {noun} {failure} when {condition}", "{ident} in {component} {failure} under {tool}"),
    "procedure": ("{Verb} the {component} {noun} before a release", "How to {verb} {ident} in {component}"),
    "fact": ("{Component} {ident} defaults to {value}", "The {noun} of {component} lives in {file}.py"),
    "preference": ("Prefer {tool} over hand-rolled {noun} in {component}",
                   "Avoid a manual {verb} of {ident} in {component}"),
    "risk": ("{Component} {noun} needs {tool} to stay consistent", "Unowned {ident} in {component} {failure}"),
}  # fmt: skip
SENTENCES = (
    "We found that the {noun} in {path} {failure} when {condition} ({ticket}).",
    "{ident} is read from {ident2} at start-up, so changing one needs a restart of {component}.",
    "Since {version} the {component} client sends {ident2} on every request.",
    "The fix was to {verb} the {noun2} before the {component2} worker reads it.",
    "See the incident review for {component2}; {person} owns the follow-up.",
    "This matters for the {component2} {noun3} too, because it reads the same {noun2}.",
    "Do not {verb} the {noun3} by hand; run the {tool} job for {component} instead.",
    "It was measured on {value} with {tool} and the {noun2} unchanged.",
    "The {component2} team agreed that the {noun} should stay in {file}.py.",
    "An older note said the {noun3} {failure}; that is no longer true after the {tool} upgrade.",
)
SPLIT_SEED = 4242  # the fixed shuffle that cuts every pool into halves A and B
HALVES = {"bench": ("A", 17), "tune": ("B", 91)}  # corpus -> (vocabulary half, seed)


@dataclass(frozen=True)
class Note:
    """One generated record's text fields."""

    number: int
    type: str
    title: str
    body: str
    tags: tuple[str, ...]
    applies_to: tuple[str, ...]


@dataclass(frozen=True)
class Query:
    """One query, the number of the note it was written for, its kind and whether it is a paraphrase."""

    text: str
    target: int
    kind: str
    paraphrase: bool


def _half(pool: tuple[str, ...], half: str) -> tuple[str, ...]:
    order = list(pool)
    random.Random(f"{SPLIT_SEED}:{pool[0]}").shuffle(order)
    cut = len(order) // 2
    return tuple(order[:cut] if half == "A" else order[cut:])


class Vocabulary:
    """The half of every pool one corpus draws from."""

    def __init__(self, half: str) -> None:
        self.components, self.nouns = _half(COMPONENTS, half), _half(NOUNS, half)
        self.tools, self.files = _half(TOOLS, half), _half(FILES, half)
        self.idents = tuple(f"{head}_{tail}" for head in _half(IDENT_HEADS, half) for tail in IDENT_TAILS)


def _fill(template: str, fields: dict[str, str]) -> str:
    out = template
    for key, value in fields.items():
        out = out.replace("{" + key + "}", value).replace("{" + key.capitalize() + "}", value.capitalize())
    return out


def notes(corpus: str) -> Iterator[Note]:
    """The endless, deterministic note stream of ``corpus`` (``bench`` or ``tune``); titles never repeat."""
    half, seed = HALVES[corpus]
    vocab, rng, seen = Vocabulary(half), random.Random(seed), set()
    number = 0
    while True:
        kind = TYPES[number % len(TYPES)]
        component, component2 = rng.sample(vocab.components, 2)
        noun, noun2, noun3 = rng.sample(vocab.nouns, 3)
        file = rng.choice(vocab.files)
        fields = {
            "component": component, "component2": component2, "noun": noun, "noun2": noun2, "noun3": noun3,
            "tool": rng.choice(vocab.tools), "file": file, "path": f"src/{component}/{file}.py",
            "failure": rng.choice(FAILURES), "condition": rng.choice(CONDITIONS), "value": rng.choice(VALUES),
            "verb": rng.choice(VERBS), "person": rng.choice(PEOPLE), "ident": rng.choice(vocab.idents),
            "ident2": rng.choice(vocab.idents), "ticket": f"INC-{rng.randint(1000, 9999)}",
            "version": f"v{rng.randint(1, 9)}.{rng.randint(0, 30)}",
        }  # fmt: skip
        template = rng.choice(TITLES[kind])
        title = _fill(template, fields)
        if title.casefold() in seen:
            continue
        seen.add(title.casefold())
        body = " ".join(_fill(s, fields) for s in rng.sample(SENTENCES, rng.randint(2, 5)))
        tags = (
            component,
            (fields["ident"] if "{ident}" in template else noun).split()[0].split("_")[0],
            fields["tool"],
        )
        yield Note(number, kind, title, body, tags, (f"src/{component}/{file}.py",))
        number += 1


STOP = frozenset(
    "a an and are as at be by for from how in is it of on or the to when with we that this".split()  # noqa: SIM905
)
_GLUE = "use set per tenant keep out under before release how defaults lives prefer over hand-rolled avoid manual"
TEMPLATE_WORDS = frozenset(
    f"{_GLUE} needs stay consistent unowned".split()
)  # a user asking about a note names its subject, not its template's glue


def _content(text: str) -> list[str]:
    words = (w.strip(".,;()") for w in text.split())
    return [w for w in words if w and w.lower() not in STOP]


def _specific(words: list[str]) -> list[str]:
    return [w for w in words if "_" in w or "/" in w or w.startswith("INC-")]


def _subject(text: str) -> list[str]:
    return [w for w in _content(text) if w.lower() not in TEMPLATE_WORDS]


KINDS = (("title", 16), ("title_words", 16), ("title_body", 16), ("question", 12), ("file_tag", 10), ("body", 10))


def queries(corpus: str, first: list[Note], draw: int = 0) -> list[Query]:
    """The 100 queries of ``corpus`` over its ``first`` 1,000 notes: 80 lexical (:data:`KINDS`), 20 paraphrases;
    ``draw`` > 0 draws another 100 (other targets, other words: the tuning corpus's extra queries)."""
    rng = random.Random(HALVES[corpus][1] * 7 + 1 + 1000 * draw)
    targets = rng.sample(first, 100)
    out: list[Query] = []
    lexical = [kind for kind, count in KINDS for _ in range(count)]
    for note, kind in zip(targets, lexical, strict=False):
        words = _subject(note.title)
        ident = next((w for w in words if "_" in w), None)
        body = _content(note.body)
        if kind == "title":
            text = note.title
        elif kind == "title_words":  # a user remembers the name in a title
            others = [w for w in words if w != ident]
            text = " ".join(
                [*([ident] if ident else []), *rng.sample(others, min(len(others), 3 - bool(ident)))]
            ).lower()
        elif kind == "title_body":  # and one specific word of the body (a name, a ticket, a path) if it has one
            text = " ".join([*rng.sample(words, min(2, len(words))), rng.choice(_specific(body) or body)]).lower()
        elif kind == "question":
            others = [w for w in words if w != ident]
            subject = [*([ident] if ident else []), *rng.sample(others, min(len(others), 2 - bool(ident)))]
            text = f"what did we write about the {' '.join(subject)} in this repo".lower()
        elif kind == "file_tag":
            text = f"{note.applies_to[0]} {note.tags[1]}"
        else:  # four consecutive words around a specific one
            at = body.index(rng.choice(_specific(body))) if _specific(body) else rng.randrange(len(body))
            start = max(0, min(at - rng.randrange(4), len(body) - 4))
            text = " ".join(body[start : start + 4]).lower()
        out.append(Query(text, note.number, kind, False))
    for note in targets[80:]:
        text = note.title.lower().replace(note.applies_to[0].split("/")[1], "that service")
        for phrase, synonym in sorted(SYNONYMS.items(), key=lambda kv: -len(kv[0])):
            text = re.sub(rf"\b{re.escape(phrase)}\b", synonym, text)
        out.append(Query(text, note.number, "paraphrase", True))
    return out
