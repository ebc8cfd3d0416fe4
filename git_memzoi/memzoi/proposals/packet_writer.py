"""The proposal packet writer: a :class:`~git_memzoi.memzoi.proposals.packets.Packet` as file text (pure).

Split from :mod:`~git_memzoi.memzoi.proposals.packets` (the model, parsing and validation), which re-exports
:func:`render` and the key orders of a source and a resolution. The key order is memzoi-spec.md §3 Writer, plus ``resolution``, ``valid_from`` / ``valid_to``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from git_memzoi.memzoi.records.okf import scalar, summary, yaml_lines

if TYPE_CHECKING:
    from git_memzoi.memzoi.proposals.packets import Packet

SOURCE_KEYS = ("path", "url", "ref")  # a packet's source entry (packets re-exports both)
RESOLUTION_KEYS = ("outcome", "resolved_by", "resolved_at", "reason", "record_id", "target_id")


def render(packet: Packet) -> str:
    """The file text of ``packet`` in the writer's key order (memzoi-spec.md §3 Writer, plus ``resolution``)."""
    proposal = {
        "action": packet.action,
        "proposed_by": packet.proposed_by,
        "proposed_at": packet.proposed_at,
        "reason": packet.reason,
        "confidence": packet.confidence,
        "target": packet.target,
    }
    scope = {"kind": packet.scope_kind, "id": packet.scope_id, "paths": list(packet.paths) or None}
    lines = ["---"]
    for key, value in (
        ("id", packet.id),
        ("kind", "proposal"),
        ("profile", "memzoi"),
        ("type", packet.type),
        ("lane", packet.lane),
        ("title", packet.title),
        ("description", packet.description or summary(packet.body)),
        ("status", packet.status),
    ):
        lines.append(f"{key}: {scalar(value)}")
    lines += yaml_lines("proposal", _present(proposal)) + yaml_lines("scope", _present(scope))
    if packet.tags:
        lines += yaml_lines("tags", list(packet.tags))
    lines.append(f"timestamp: {scalar(packet.timestamp)}")
    if packet.created_by is not None:
        lines.append(f"created_by: {scalar(packet.created_by)}")
    if packet.sources:
        lines += yaml_lines("sources", [_present({k: getattr(s, k) for k in SOURCE_KEYS}) for s in packet.sources])
    lines += yaml_lines("supersedes", list(packet.supersedes))
    lines += [f"sensitivity: {scalar(packet.sensitivity)}", f"content_class: {scalar(packet.content_class)}"]
    if packet.resolution is not None:
        lines += yaml_lines("resolution", _present({k: getattr(packet.resolution, k) for k in RESOLUTION_KEYS}))
    if packet.capture is not None:
        lines += yaml_lines("capture", packet.capture)
    for key, value in (packet.validity or {}).items():  # business validity (records/validity.py)
        lines.append(f"{key}: {scalar(value)}")
    lines += yaml_lines("retention", packet.retention) + yaml_lines("origin", packet.origin)
    for name, block in (("lineage", packet.lineage), ("memkeep", packet.memkeep), ("relations", packet.relations)):
        if block is not None:
            lines += yaml_lines(name, block)
    lines += ["---", "", f"# {packet.title.strip()}", "", packet.body.strip(), ""]
    return "\n".join(lines)


def _present(mapping: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in mapping.items() if v is not None}
