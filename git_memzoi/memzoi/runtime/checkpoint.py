"""Session checkpoints (io): private notes on a task in progress, kept as session runtime records (seed
"Session checkpoints").
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from git_memzoi.core import safe_read
from git_memzoi.errors import InputError
from git_memzoi.memzoi.recall.index import db as index_db
from git_memzoi.memzoi.records import okf

if TYPE_CHECKING:
    from git_memzoi.memzoi.runtime import replay
    from git_memzoi.memzoi.workspace import Workspace
from git_memzoi.memzoi.runtime.local import (
    Draft,
    Written,
    checked_body,
    checked_title,
    read_input,
    write_draft,
)


def add_checkpoint(
    ws: Workspace,
    *,
    task: str,
    note: str | None = None,
    from_file: Path | None = None,
    session_id: str | None = None,
    event_id: str | None = None,
) -> Written:
    """``checkpoint add``: write one session checkpoint (type episode, lane session) holding only the explicit
    ``note`` or the content of ``from_file`` (exactly one of the two).

    With ``session_id`` (and ``event_id``; default: the digest of task and text) the call is idempotent
    (:mod:`~git_memzoi.memzoi.runtime.replay`): an identical replay returns the stored checkpoint, ``reused``.

    Raises:
        InputError: both or neither of note/file, an unreadable or empty file, an empty task; a credential in the
            task, note or file (``prohibited_content_detected``: the option and line named, never the value).
        CheckpointConflict: ``checkpoint_mismatch``, ``checkpoint_in_progress`` (nothing written).
    """
    from git_memzoi.memzoi.records.secrets import require_clean_fields
    from git_memzoi.memzoi.runtime import replay

    if note is not None and from_file is None:
        text, source = note, "--note"
    elif note is None and from_file is not None:
        text, source = read_input(from_file), f"--from-file {from_file}"
    else:
        raise InputError("give exactly one of --note or --from-file", "bad_usage")
    require_clean_fields({"--task": task, source: text}, "the checkpoint", private=True)
    draft = Draft(
        "session",
        "episode",
        "session",
        checked_title("--task", task),
        checked_body("the note", text),
        "checkpoint_create",
    )
    key = replay.key_for("checkpoint", session_id, event_id, {"task": draft.title, "text": draft.body})
    prior = _stored(ws, key)
    if prior is None:
        with replay.claimed(ws.layout, key):
            prior = _stored(ws, key)  # finished by another process between the first look and the claim
            if prior is None:
                return write_draft(ws, draft, "memory.checkpoint_created", key)
    return prior


def _stored(ws: Workspace, key: replay.Key | None) -> Written | None:
    """The checkpoint an earlier call with ``key`` wrote, ``reused``; ``None`` without a key or a usable result."""
    from git_memzoi.memzoi.runtime import replay

    prior = replay.lookup(ws.layout, key)
    if (
        key is None
        or prior is None
        or not isinstance(prior.get("record"), dict)
        or not isinstance(prior.get("path"), str)
    ):
        return None
    return Written(prior["record"], prior["path"], key.ids(), True)


def load_checkpoint(ws: Workspace, checkpoint_id: str) -> okf.Record:
    """The session checkpoint ``checkpoint_id``.

    Raises:
        InputError: an id that is not a concept id, or no such checkpoint (``unknown_checkpoint``);
            RecordError: the checkpoint file is not a valid record.
    """
    if okf.concept_id_problem(checkpoint_id):
        raise InputError(f"{checkpoint_id!r} is not a checkpoint id", "unknown_checkpoint")
    path = index_db.runtime_dir(ws.layout, "session") / f"{checkpoint_id}.md"
    if not path.is_file() or path.is_symlink():
        raise InputError(f"no checkpoint {checkpoint_id!r}; see `git memzoi checkpoint list`", "unknown_checkpoint")
    rel = ws.layout.label(path)
    return index_db.parse_record(checkpoint_id, rel, safe_read.read_bytes(path))  # swapped since: refused
