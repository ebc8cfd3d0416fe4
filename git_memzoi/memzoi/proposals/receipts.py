"""The sensitivity preflight and the redacted receipt of a non-repo-safe packet (memzoi-spec.md §3 Reject; pure).

A packet's classification is read from raw top-level YAML lines before anything else is parsed, so a malformed
packet that is not ``repo-safe`` is still handled. Such a packet is only ever shown, archived or logged as its
receipt: a create-shaped, repo-safe packet whose ids are ``redacted-identity-<blake3>`` tokens of the original
id and file id and whose body holds two hashes, never the original title, body, source, scope or authorship.
"""

from __future__ import annotations

from dataclasses import dataclass

from git_memzoi.core import yamlio
from git_memzoi.core.hashing import content_hash
from git_memzoi.memzoi.proposals.packets import REPO_SAFE, Packet, identity_token
from git_memzoi.memzoi.records import okf_subset, vocab

EPOCH = "1970-01-01T00:00:00Z"
RECEIPT_TITLE = "Redacted non-repo-safe proposal"
RECEIPT_DESCRIPTION = "Original proposal content and identity redacted before archival."
MISSING_ID = "<missing-or-non-string>"


@dataclass(frozen=True)
class Preflight:
    """Read before parsing: raw unique top-level ``id``/``content_class`` strings (``None`` when missing, not a
    string or repeated), the ``sensitivity`` (default ``unknown``) and the receipt's two hashes (§3 Reject)."""

    file_id: str
    raw_id: str | None
    sensitivity: str
    raw_content_class: str | None
    digest: str
    classification_digest: str

    @property
    def repo_safe(self) -> bool:
        """Whether the packet is classified ``repo-safe``."""
        return self.sensitivity == REPO_SAFE


def preflight(file_id: str, data: bytes) -> Preflight:
    """Classify raw packet bytes without parsing the rest (``file_id``: path below the root, minus ``.md``)."""
    head = _preflight_frontmatter(data.decode("utf-8", errors="replace"))
    raw_id = _unique_scalar(head, "id")
    value = _unique_scalar(head, "sensitivity")
    sensitivity = value.strip() if value is not None and value.strip() in vocab.SENSITIVITIES else "unknown"
    raw_class = _unique_scalar(head, "content_class")
    digest = _hex(
        b"proposal-id\0"
        + (raw_id if raw_id is not None else MISSING_ID).encode("utf-8")
        + b"\0proposal-file-id\0"
        + file_id.encode("utf-8")
        + b"\0proposal-markdown\0"
        + data
    )
    classification = _hex(
        b"memzoi.rejected-proposal-classification.v1\0"
        + sensitivity.encode("utf-8")
        + b"\0"
        + (raw_class if raw_class is not None else "<missing>").encode("utf-8")
    )
    return Preflight(file_id, raw_id, sensitivity, raw_class, digest, classification)


def _preflight_frontmatter(text: str) -> str:
    for opening in ("---\n", "---\r\n"):
        if text.startswith(opening):
            return text[len(opening) :].split("\n---", 1)[0]
    return ""


def _unique_scalar(head: str, key: str) -> str | None:
    found: list[str | None] = []
    for line in head.split("\n"):
        if not line or line[0].isspace():
            continue
        name, sep, value = line.rstrip("\r").partition(":")
        if sep and name == key:
            found.append(_yaml_string(value.strip()))
    return found[0] if len(found) == 1 else None


def _yaml_string(text: str) -> str | None:
    fields = okf_subset.load(f"v: {text}")  # a plain word or a JSON string: the same value, without ruamel
    if fields is None:
        try:
            fields, _ = yamlio.load_mapping(f"v: {text}")
        except yamlio.YamlProblem:
            return None
    value = fields.get("v")
    return value if isinstance(value, str) else None


def receipt(pre: Preflight) -> Packet:
    """The create-shaped, repo-safe receipt that stands in for a non-repo-safe packet (no original content)."""
    receipt_id = identity_token(pre.raw_id if pre.raw_id is not None else f"missing-id:{pre.digest}")
    body = (
        "Original non-repo-safe proposal content, identity, and classification were redacted before archival."
        f"\n\nContent hash (BLAKE3): `{pre.digest}`.\n\n"
        f"Original classification hash (BLAKE3): `{pre.classification_digest}`."
    )
    return Packet(
        id=receipt_id,
        file_id=identity_token(pre.file_id),
        type="fact",
        lane="semantic",
        title=RECEIPT_TITLE,
        description=RECEIPT_DESCRIPTION,
        body=body,
        action="create",
        proposed_by="redacted",
        proposed_at=EPOCH,
        timestamp=EPOCH,
        sensitivity=REPO_SAFE,
        content_class="general_repo_knowledge",
        retention={},
        origin={"origin_key": f"rejected-proposal:{pre.digest}", "route": "repository_proposal"},
    )


def _hex(data: bytes) -> str:
    return content_hash(data).removeprefix("blake3:")


def is_receipt(packet: Packet) -> bool:
    """Whether ``packet`` is a redacted receipt (by its fixed title and ``proposed_by: redacted``)."""
    return packet.title == RECEIPT_TITLE and packet.proposed_by == "redacted"
