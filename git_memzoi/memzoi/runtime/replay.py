"""Idempotent session ends and checkpoints (io): the ``(session_id, event_id)`` key store (issue 15; seed 004,
vault-memory "Explicit session lifecycle (F10)"; docs/private-memory.md).

A caller that names its event - ``--session-id`` and ``--event-id``, or the ``session_id`` of a hook's input -
may send it again (a retried hook, a timed-out call whose write had landed): the first run's result is returned,
``reused: true``, and nothing is written twice. The key is the SHA-256 of the operation kind, the session id and
the event id; beside it is the SHA-256 of the payload (the parsed batch, or the checkpoint's task and text), so
the same key with a changed payload is refused (``checkpoint_mismatch``, exit 2, nothing written). Without an
``--event-id`` the payload's digest is the event id: an identical replay within one session is reused, a changed
one is simply a new event.

One file per key in :attr:`Layout.replay` (private memory, shared by every worktree): ``<key>.json`` holds the
ids, the payload digest and the result, written as the last step of the operation that made the result (a
killed operation is rolled back with its key). While an operation runs, ``<key>.claim`` (created exclusively,
holding the pid) marks it in progress: a second caller with the same key gets ``checkpoint_in_progress`` (exit
2: retry with the same ids) while that process lives; a claim whose process is gone is reclaimed.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from git_memzoi.errors import InputError

if TYPE_CHECKING:
    from git_memzoi.memzoi.layout import Layout

MAX_ID_CHARS = 200
CLAIM_MAX_AGE_S = 86400.0  # a claim older than this is stale even if its pid lives again (pid reuse)


class CheckpointConflict(InputError):
    """The key was used with another payload (``checkpoint_mismatch``) or its operation is running
    (``checkpoint_in_progress``); exit 2, nothing written."""

    default_code = "checkpoint_mismatch"


@dataclass(frozen=True)
class Key:
    """One event's identity: the operation ``kind`` (``session_end``, ``checkpoint``), the caller's ids and the
    payload's SHA-256 (hex)."""

    kind: str
    session_id: str
    event_id: str
    digest: str

    @property
    def name(self) -> str:
        """The key's file name stem: SHA-256 (hex) of kind, session id and event id."""
        return hashlib.sha256(f"{self.kind}\0{self.session_id}\0{self.event_id}".encode()).hexdigest()

    def ids(self) -> dict[str, str]:
        """``{"session_id", "event_id"}`` as results show them."""
        return {"session_id": self.session_id, "event_id": self.event_id}


def digest(payload: Mapping[str, Any]) -> str:
    """The SHA-256 (hex) of ``payload`` as canonical JSON (sorted keys, no spaces)."""
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=list)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def key_for(kind: str, session_id: str | None, event_id: str | None, payload: Mapping[str, Any]) -> Key | None:
    """The key of one call, or ``None`` when the caller named no session (not idempotent: every call writes).

    Raises:
        InputError: ``--event-id`` without ``--session-id`` (``bad_usage``); an id that is empty, longer than 200
            characters or not one printable line (``invalid_event_id``).
    """
    if session_id is None:
        if event_id is not None:
            raise InputError("--event-id needs --session-id", "bad_usage")
        return None
    payload_digest = digest(payload)
    checked = {"--session-id": session_id, "--event-id": event_id if event_id is not None else "x"}
    for option, value in checked.items():
        if not value.strip() or len(value) > MAX_ID_CHARS or not value.isprintable():
            raise InputError(
                f"{option} must be one printable line of 1 to {MAX_ID_CHARS} characters", "invalid_event_id"
            )
    return Key(kind, session_id, event_id if event_id is not None else f"sha256:{payload_digest[:32]}", payload_digest)


def ids_from_hook(hook_input: Mapping[str, Any]) -> tuple[str | None, str | None]:
    """``(session_id, event_id)`` of a hook's JSON input (Claude Code's ``session_id``; an ``event_id`` when the
    host sends one, else ``None``: the payload's digest then names the event)."""
    session = hook_input.get("session_id")
    event = hook_input.get("event_id")
    return (session if isinstance(session, str) and session else None, event if isinstance(event, str) else None)


def lookup(layout: Layout, key: Key | None) -> dict[str, Any] | None:
    """The stored result of ``key`` (``None``: no key, or not run yet).

    Raises:
        CheckpointConflict: ``checkpoint_mismatch`` when it was run with another payload.
    """
    if key is None:
        return None
    from git_memzoi.core import safe_read

    try:
        stored = safe_read.load_json(safe_read.read_text(_path(layout, key, ".json"), None))
    except FileNotFoundError:
        return None
    except (OSError, ValueError, safe_read.FileRefused):
        return None  # an unreadable key file is no proof of a run: the operation runs (and rewrites it)
    if not isinstance(stored, dict) or not isinstance(stored.get("result"), dict):
        return None
    if stored.get("digest") != key.digest:
        raise CheckpointConflict(
            f"{key.kind} event {key.event_id!r} of session {key.session_id!r} was recorded with another payload; "
            "nothing was written (use a new --event-id for a new event)",
            "checkpoint_mismatch",
        )
    return dict(stored["result"])


@contextlib.contextmanager
def claimed(layout: Layout, key: Key | None) -> Iterator[None]:
    """Hold the in-progress claim of ``key`` for the block (nothing when ``key`` is ``None``).

    Raises:
        CheckpointConflict: ``checkpoint_in_progress`` while another live process holds it.
    """
    if key is None:
        yield
        return
    from git_memzoi.core.atomic import remove_file

    path = _path(layout, key, ".claim")
    root = layout.root_for(path)
    for _ in range(2):
        if _claim(layout, key):
            break
        if _holder_alive(path):
            raise CheckpointConflict(
                f"{key.kind} event {key.event_id!r} of session {key.session_id!r} is in progress in another process; "
                "retry with the same ids",
                "checkpoint_in_progress",
            )
        remove_file(path, root=root)  # its process is gone: a killed run, rolled back by the next guarded command
    else:
        raise CheckpointConflict(f"{key.kind} event {key.event_id!r} is in progress", "checkpoint_in_progress")
    try:
        yield
    finally:
        remove_file(path, root=root)


def record_step(layout: Layout, key: Key, result: Mapping[str, Any]) -> Any:
    """The lifecycle step that stores ``result`` under ``key`` (the caller writes it inside its operation, last)."""
    from git_memzoi.memzoi.proposals.lifecycle import Step

    data = {"version": 1, "kind": key.kind, **key.ids(), "digest": key.digest, "result": dict(result)}
    return Step(_path(layout, key, ".json"), (json.dumps(data, ensure_ascii=False) + "\n").encode("utf-8"))


def _path(layout: Layout, key: Key, suffix: str) -> Any:
    return layout.replay / f"{key.name}{suffix}"


def _claim(layout: Layout, key: Key) -> bool:
    from git_memzoi.core.atomic import write_new

    path = _path(layout, key, ".claim")
    data = json.dumps({"pid": os.getpid(), **key.ids()}).encode("utf-8")
    return write_new(path, data, root=layout.root_for(path), mode=0o600, parents=True)


def _holder_alive(path: Any) -> bool:
    """Whether the process named in the claim at ``path`` still runs (a claim gone meanwhile: no holder)."""
    from git_memzoi.core import safe_read, scratch
    from git_memzoi.core.clock import file_time_ns

    try:
        holder = safe_read.load_json(safe_read.read_text(path, None))
        age = file_time_ns() / 1e9 - os.stat(path).st_mtime
        pid = int(holder["pid"])
    except FileNotFoundError:
        return False
    except (OSError, ValueError, LookupError, TypeError, safe_read.FileRefused):
        return True  # being written, or unreadable: never taken from a live holder
    return scratch.alive(pid) and age < CLAIM_MAX_AGE_S  # this process too: another thread's run
