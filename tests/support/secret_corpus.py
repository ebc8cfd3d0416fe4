"""The labelled secret set: realistic-format fake credentials and their look-alikes, generated from a seeded RNG at
test time (no literal secret is committed, and none is real). Shared by tests/core/test_secret_labelled_set.py,
which asserts the misses and false positives exactly, and evals/bench/secret_classifier.py, which prints recall, the
false-positive rate and the time per KB.

Each sample is ``(label, text)``; a positive's label names its provider or shape, a look-alike's what it is.
The formats follow each provider's documented token shape (prefix, alphabet, length).
"""

from __future__ import annotations

import base64
import json
import random
import string

ALNUM = string.ascii_letters + string.digits
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
B64URL = ALNUM + "-_"
SEED = 20261201
ROUNDS = 5  # instances of each generator


def _r(rng: random.Random, n: int, alphabet: str = ALNUM) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _context(rng: random.Random, name: str, value: str) -> str:
    """One of the places a credential turns up in memory: an env line, YAML, JSON, a shell export, prose."""
    return rng.choice(
        [
            f"{name}={value}",
            f"{name.lower()}: {value}",
            f'{{"{name.lower()}": "{value}"}}',
            f"export {name}='{value}'",
            f"The CI job reads {value} for deploys.",
            f"- use `{value}` when the staging job asks",
        ]
    )


def _jwt(rng: random.Random) -> str:
    header = _b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    claims = _b64url(json.dumps({"sub": _r(rng, 10), "iat": rng.randrange(10**9, 2 * 10**9)}).encode())
    return f"{header}.{claims}.{_r(rng, 43, B64URL)}"


def _private_key(rng: random.Random) -> str:
    kind = rng.choice(["RSA ", "EC ", "OPENSSH ", ""])
    body = "\n".join(_r(rng, 64, B64) for _ in range(3))
    return f"-----BEGIN {kind}PRIVATE KEY-----\n{body}\n-----END {kind}PRIVATE KEY-----"


def _upper(rng: random.Random, n: int) -> str:
    return _r(rng, n, string.ascii_uppercase + "234567")


POSITIVE_MAKERS = {
    "aws-access-key-id": lambda g: _context(g, "AWS_ACCESS_KEY_ID", "AKIA" + _upper(g, 16)),
    "aws-secret-access-key": lambda g: f"aws_secret_access_key = {_r(g, 40, B64)}",
    "github-pat": lambda g: _context(g, "GITHUB_TOKEN", "ghp_" + _r(g, 36)),
    "github-fine-grained": lambda g: _context(g, "GH_PAT", f"github_pat_{_r(g, 22)}_{_r(g, 59)}"),
    "gitlab-pat": lambda g: _context(g, "GITLAB_TOKEN", "glpat-" + _r(g, 20, B64URL)),
    "slack-bot": lambda g: _context(
        g, "SLACK_BOT", f"xoxb-{g.randrange(10**11, 10**12)}-{g.randrange(10**12, 10**13)}-{_r(g, 24)}"
    ),
    "slack-webhook": lambda g: (
        f"alerts go to https://hooks.slack.com/services/T{_upper(g, 8)}/B{_upper(g, 8)}/{_r(g, 24)}"
    ),
    "stripe": lambda g: _context(g, "STRIPE_KEY", f"{g.choice(['sk', 'rk'])}_live_{_r(g, 24)}"),
    "google-api-key": lambda g: _context(g, "MAPS_KEY", "AIza" + _r(g, 35, B64URL)),
    "anthropic": lambda g: _context(g, "ANTHROPIC_API_KEY", f"sk-ant-api03-{_r(g, 93, B64URL)}AA"),
    "openai": lambda g: _context(g, "OPENAI_API_KEY", f"sk-proj-{_r(g, 74, B64URL)}T3BlbkFJ{_r(g, 74, B64URL)}"),
    "openai-legacy": lambda g: f"the key is sk-{_r(g, 48)}",
    "huggingface": lambda g: _context(g, "HF_TOKEN", "hf_" + _r(g, 34, string.ascii_letters)),
    "docker": lambda g: _context(g, "DOCKER_PAT", "dckr_pat_" + _r(g, 27, B64URL)),
    "shopify": lambda g: _context(g, "SHOPIFY_TOKEN", "shpat_" + _r(g, 32, HEX)),
    "square": lambda g: _context(g, "SQUARE_TOKEN", "sq0atp-" + _r(g, 22, B64URL)),
    "npm": lambda g: f"//registry.npmjs.org/:_authToken=npm_{_r(g, 36)}",
    "pypi": lambda g: _context(g, "TWINE_PASSWORD", "pypi-AgEIcHlwaS5vcmc" + _r(g, 70, B64URL)),
    "twilio": lambda g: _context(g, "TWILIO_API_KEY", "SK" + _r(g, 32, HEX)),
    "sendgrid": lambda g: _context(g, "SENDGRID_API_KEY", f"SG.{_r(g, 22, B64URL)}.{_r(g, 43, B64URL)}"),
    "digitalocean": lambda g: _context(g, "DO_TOKEN", "dop_v1_" + _r(g, 64, HEX)),
    "databricks": lambda g: _context(g, "DATABRICKS_TOKEN", "dapi" + _r(g, 32, HEX)),
    "groq": lambda g: _context(g, "GROQ_API_KEY", "gsk_" + _r(g, 52)),
    "telegram": lambda g: f"bot token {g.randrange(10**8, 10**9)}:AA{_r(g, 33, B64URL)}",
    "jwt": lambda g: f"Authorization: Bearer {_jwt(g)}",
    "private-key": _private_key,
    "azure-storage": lambda g: (
        f"DefaultEndpointsProtocol=https;AccountName={_r(g, 8).lower()};AccountKey={_r(g, 86, B64)}=="
    ),
    "secret-key-assignment": lambda g: (
        f"{g.choice(['SECRET_KEY', 'DJANGO_SECRET_KEY', 'JWT_SECRET'])}={_r(g, 40, B64)}="
    ),
    "bare-base64": lambda g: (
        f"{g.choice(['Signing value:', 'Rotated to', 'old one was'])} {_r(g, g.choice([32, 40, 44, 64]), B64)}"
    ),
    "password-in-prose": lambda g: (
        f"The {g.choice(['admin', 'staging db', 'vpn'])} password is {_r(g, 6, string.ascii_letters)}{g.randrange(10, 99)}{g.choice('!#%&')}{_r(g, 3)}."
    ),
    "password-assignment": lambda g: (
        f"{g.choice(['password', 'db_password', 'PGPASSWORD'])} = {_r(g, 12, string.digits)}"
    ),
    "url-password": lambda g: (
        f"{g.choice(['redis', 'postgres', 'amqp', 'mongodb'])}://{g.choice(['', 'app'])}:{_r(g, 14)}@{_r(g, 6).lower()}.internal:6379/0"
    ),
    "basic-auth-url": lambda g: f"clone https://{_r(g, 6).lower()}:{_r(g, 14)}@git.{_r(g, 5).lower()}.io/r.git",
}


def positives(rng: random.Random | None = None) -> list[tuple[str, str]]:
    """``(label, text)`` pairs that must each give at least one credential finding: 33 shapes × 5."""
    rng = rng or random.Random(SEED)
    return [(label, make(rng)) for _ in range(ROUNDS) for label, make in POSITIVE_MAKERS.items()]


def _camel(rng: random.Random) -> str:
    words = ["Secret", "Scanner", "Record", "Proposal", "Index", "Token", "Budget", "Recall", "Context", "Guard"]
    return "".join(rng.choice(words) for _ in range(5)) + str(rng.randrange(2, 99)) + rng.choice(words)


NEGATIVE_MAKERS = {
    "commit-sha": lambda g: f"Introduced in commit {_r(g, 40, HEX)}.",
    "blake3-digest": lambda g: f"checksum blake3:{_r(g, 64, HEX)}",
    "image-digest": lambda g: f"image ghcr.io/owner/app@sha256:{_r(g, 64, HEX)}",
    "npm-integrity": lambda g: f'"integrity": "sha512-{_r(g, 86, B64)}=="',
    "uuid": lambda g: f"id {_r(g, 8, HEX)}-{_r(g, 4, HEX)}-4{_r(g, 3, HEX)}-a{_r(g, 3, HEX)}-{_r(g, 12, HEX)}",
    "ssh-public-key": lambda g: f"deploy key: ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{_r(g, 43, B64)} ci@runner",
    "public-key-header": lambda g: "-----BEGIN PUBLIC KEY-----",
    "placeholder": lambda g: f"DB password: ${{{_r(g, 6, string.ascii_uppercase)}_PASSWORD}}",
    "env-reference": lambda g: f"export API_TOKEN=$DEPLOY_{_r(g, 4, string.ascii_uppercase)}",
    "os-environ": lambda g: (
        f"{g.choice(['api_key', 'token', 'secret_key'])} = os.environ['{_r(g, 5, string.ascii_uppercase)}_KEY']"
    ),
    "getenv": lambda g: f'password = os.getenv("{_r(g, 5, string.ascii_uppercase)}_PASSWORD")',
    "settings-reference": lambda g: f"SECRET_KEY = settings.{_r(g, 6, string.ascii_uppercase)}_SECRET_KEY",
    "actions-secret": lambda g: f"token: ${{{{ secrets.{_r(g, 6, string.ascii_uppercase)}_TOKEN }}}}",
    "masked": lambda g: g.choice(["password: ********", '"password": "••••••••"', "PASSWORD=********", "token: ****"]),
    "doc-example-key": lambda g: "aws_access_key_id = AKIAIOSFODNN7EXAMPLE",
    "reserved-email": lambda g: (
        f"mail {g.choice(['ops', 'release', 'oncall'])}@example.{g.choice(['com', 'org', 'net'])} first"
    ),
    "noreply-email": lambda g: f"author {g.randrange(10**6, 10**8)}+{_r(g, 7).lower()}@users.noreply.github.com",
    "git-remote": lambda g: f"git@github.com:{_r(g, 6).lower()}/{_r(g, 5).lower()}.git is the remote",
    "token-prose": lambda g: "The token: rotate it weekly, and keep the secret: out of memory",
    "password-prose": lambda g: g.choice(
        [
            "The password is required for the admin role.",
            "the password is re-generated on every deploy",
            "The password is stored in the team vault, never here.",
            "password is at least 12 characters long",
        ]
    ),
    "key-words": lambda g: f"max_tokens={g.randrange(256, 8192)}; key_id = {g.randrange(1, 99)}; secret_length: 32",
    "camel-identifier": lambda g: f"see {_camel(g)} in the docs",
    "source-path": lambda g: (
        f"src/git_memzoi/core/{_r(g, 6).lower()}_{_r(g, 5).lower()}/SecretScanner{g.randrange(2, 9)}Config.py"
    ),
    "github-url": lambda g: (
        f"https://github.com/owner/repo/blob/{_r(g, 40, HEX)}/git_memzoi/core/secret_scan.py#L{g.randrange(1, 600)}"
    ),
    "localhost-url": lambda g: f"GET http://localhost:{g.randrange(3000, 9000)}/api/v1/token?page=2",
    "db-url-no-password": lambda g: f"postgresql://{g.choice(['app', '${DB_USER}'])}@db.internal:5432/app",
    "db-url-placeholder": lambda g: "postgresql://${DB_USER}:${DB_PASSWORD}@db:5432/app",
    "bearer-reference": lambda g: 'curl -H "Authorization: Bearer ${API_TOKEN}" https://api.example.com',
    "prefix-prose": lambda g: "GitHub tokens start with ghp_ and AWS key ids with AKIA; rotate both.",
    "version": lambda g: f"Requires git >= 2.{g.randrange(10, 50)}.{g.randrange(0, 9)} and Python 3.12",
    "date": lambda g: f"Released 2026-0{g.randrange(1, 9)}-1{g.randrange(0, 9)} at 12:00:00Z",
    "risk-words": lambda g: "Adopt a risk-based rollout; ask-first for task-scheduler changes.",
    "data-uri": lambda g: f"logo: data:image/png;base64,iVBORw0KGgo{_r(g, 60, B64)}",
    "hex-color-port": lambda g: f"color #{_r(g, 6, HEX)} on port {g.randrange(1024, 65535)}",
}


def negatives(rng: random.Random | None = None) -> list[tuple[str, str]]:
    """``(label, text)`` look-alikes that must give no finding at all (personal data included): 34 kinds × 5."""
    rng = rng or random.Random(SEED + 1)
    return [(label, make(rng)) for _ in range(ROUNDS) for label, make in NEGATIVE_MAKERS.items()]
