"""Claude Code hook output against the hook output schema of Claude Code 2.1.197 (``data/``, with its source),
and, where ``MEMZOI_CLAUDE_CODE_DIR`` names an installed ``@anthropic-ai/claude-code`` (node_modules/@anthropic-ai),
the same facts against the package's own files."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from git_memzoi.integrations import claude_code

SCHEMA = json.loads((Path(__file__).parent / "data" / "claude_code_hook_output.schema.json").read_text("utf-8"))
EVENTS = sorted(claude_code.KNOWN_EVENTS)
# read at import: the hermetic fixture clears MEMZOI_* from each test's environment
PACKAGE_DIR = os.environ.get("MEMZOI_CLAUDE_CODE_DIR")


def validate_output(out: str) -> dict[str, Any]:
    """A hook's stdout parsed as JSON, after it validated against the hook output schema."""
    payload = json.loads(out)
    jsonschema.validate(payload, SCHEMA)
    return payload


@pytest.mark.parametrize("event", EVENTS)
def test_every_event_output_is_the_form_the_schema_accepts(event: str) -> None:
    out = claude_code.hook_output(event, "1 suspect: hit (scope_hit)")
    assert out is not None
    if event in SCHEMA["x-plain-text-events"]:
        assert out == "1 suspect: hit (scope_hit)"  # PreCompact: stdout is the compaction instructions, verbatim
        return
    payload = validate_output(out)
    if event in SCHEMA["x-context-events"]:
        assert payload == {
            "hookSpecificOutput": {"hookEventName": event, "additionalContext": "1 suspect: hit (scope_hit)"}
        }
    else:
        assert payload == {"systemMessage": "1 suspect: hit (scope_hit)"}


def test_the_context_events_match_the_schema() -> None:
    assert sorted(claude_code.CONTEXT_EVENTS) == sorted(SCHEMA["x-context-events"])
    assert sorted(claude_code.PLAIN_TEXT_EVENTS) == ["PreCompact"]


@pytest.mark.parametrize("event", ["Stop", "SubagentStop"])
def test_stop_is_silent_once_a_stop_hook_continued_the_turn(event: str) -> None:
    assert claude_code.hook_output(event, "x", {"stop_hook_active": True}) is None
    assert claude_code.hook_output(event, "x", {"stop_hook_active": False}) is not None


def test_empty_text_prints_nothing_for_every_event() -> None:
    assert {claude_code.hook_output(e, "  \n") for e in EVENTS} == {None}


def test_plain_text_is_cut_like_the_context() -> None:
    out = claude_code.hook_output("PreCompact", "line\n" * 2000)
    assert out is not None and len(out) <= claude_code.MAX_CONTEXT_CHARS and out.endswith("full list)")


def _package_text() -> bytes:
    where = PACKAGE_DIR
    if not where:
        pytest.skip("MEMZOI_CLAUDE_CODE_DIR is not set (an installed node_modules/@anthropic-ai folder)")
    root = Path(where)
    files = [p for p in root.rglob("*") if p.is_file() and (p.stat().st_size > 1_000_000 or p.suffix == ".js")]
    blobs = [p.read_bytes() for p in files]
    text = b"".join(b for b in blobs if b"hookSpecificOutput" in b)
    if not text:
        pytest.skip(f"no file under {root} holds the hook output schema")
    return text


def test_the_schema_facts_hold_in_the_installed_package() -> None:
    text = _package_text()
    for event in SCHEMA["x-context-events"]:
        assert f'hookEventName:H.literal("{event}"),additionalContext:'.encode() in text or (
            f'hookEventName:H.literal("{event}"),permissionDecision'.encode() in text
        ), event
    assert b'hookEventName:H.literal("PreCompact")' not in text  # PreCompact takes no hookSpecificOutput
    assert b'hook_event_name:"PreCompact"' in text and b"newCustomInstructions:" in text
