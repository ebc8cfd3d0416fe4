"""The closed value sets of the Memzoi model (seed "Reference": memory types, lanes, scopes, statuses ...)."""

from __future__ import annotations

TYPES = (
    "fact",
    "preference",
    "decision",
    "procedure",
    "episode",
    "relationship",
    "warning",
    "failed_attempt",
    "risk",
    "instruction_projection",
)
LANES = ("session", "semantic", "episodic", "procedural")
SCOPE_KINDS = ("personal", "repo", "project", "team", "org", "agent", "imported_untrusted")
VISIBILITIES = ("public", "private", "repo", "team", "org")
RECORD_STATUSES = ("proposed", "active", "rejected", "superseded", "expired", "tombstoned", "redacted")
CONTENT_CLASSES = (
    "general_repo_knowledge",
    "raw_transcript",
    "private_personal_data",
    "screen_or_activity_history",
    "private_endpoint",
    "undisclosed_vulnerability",
    "unminimized_private_evidence",
    "temporary_task_state",
    "local_only_state",
    "unknown",
)
SENSITIVITIES = (
    "repo-safe",
    "local-only",
    "sensitive",
    "secret",
    "raw-transcript",
    "private-personal-data",
    "temporary-state",
    "unknown",
)
ORIGIN_ROUTES = (
    "capture",
    "import",
    "session_end",
    "local_memory",
    "checkpoint_create",
    "checkpoint_continue",
    "checkpoint_close",
    "checkpoint_successor",
    "repository_proposal",
    "repository_materialization",
    "owner_command",
)
PACKET_ACTIONS = ("create", "supersede", "tombstone")
PACKET_STATUSES = ("proposed", "applied", "rejected")
INBOX_STATUSES = ("pending", "validated", "approved", "applied", "rejected")
OPEN_INBOX_STATUSES = ("pending", "validated", "approved")
DESTINATIONS = ("repo", "local", "session", "discard", "needs_review")
