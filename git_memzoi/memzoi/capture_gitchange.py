"""The ``git-change-deterministic`` capture profile over a ``git_range`` of pinned full commit ids
(memzoi-spec.md §9.2, §9.3, §9.5).

The range is read in-process through :class:`~git_memzoi.core.gitview_pygit2.Pygit2RepoView` (tree-to-tree diff,
optional rename detection): never from ambient HEAD, ref names or the worktree, so the same locator always gives
the same plan. Markdown files in the range are read at their pinned blobs: a typed section (the markdown profile's
heading rules) that holds an added line on the new side becomes a candidate; a typed section whose heading was
deleted on the old side (and is gone from the new side) becomes an old-side ``needs_review`` candidate. Caps: 512
changed files and 4,096 hunks; binary changes and non-regular Markdown entries fail closed.
"""

from __future__ import annotations

import re
from typing import Any

from git_memzoi.core.hashing import content_hash
from git_memzoi.memzoi import capture_markdown as md
from git_memzoi.memzoi.capture_markdown import CaptureError, canonical_hash

PROFILE = "git-change-deterministic"
EXTRACTOR = {"kind": "deterministic", "id": "memzoi-git-change", "version": "1.0.0"}
MAX_FILES = 512
MAX_HUNKS = 4096
MAX_DIFF_BYTES = 2 * 1024 * 1024
# typed headings this profile captures (Fact, Preference and Episode are ignored in changes, §9.5)
DURABLE = frozenset({"decision", "procedure", "warning", "risk", "failed_attempt"})
LOCATOR_KEYS = ("kind", "repository", "base", "head", "merge_parent", "rename_detection", "diff_format")
MERGE_PARENTS = ("base_to_head", "first_parent")
_REV = re.compile(r"^(?:sha1:)?([0-9a-f]{40})$|^sha256:([0-9a-f]{64})$")
REGULAR = (0o100644, 0o100755)


def check_locator(locator: Any) -> tuple[str, str]:
    """The (base, head) full ids of a strict ``git_range`` locator, else :class:`CaptureError`.

    Codes: ``invalid_capture_request`` (unknown or missing keys, bad values), ``invalid_git_revision`` (a ref
    name, abbreviation or anything but a full lowercase object id; equal base and head).
    """
    if not isinstance(locator, dict) or sorted(locator) != sorted(LOCATOR_KEYS):
        raise CaptureError(f"a git_range locator has exactly the keys {', '.join(LOCATOR_KEYS)}",
                           "invalid_capture_request")  # fmt: skip
    if locator["kind"] != "git_range" or locator["repository"] != "." or locator["diff_format"] != "git-unified-v1" \
            or locator["merge_parent"] not in MERGE_PARENTS or not isinstance(locator["rename_detection"], bool):  # fmt: skip
        raise CaptureError("git_range: repository '.', merge_parent base_to_head|first_parent, boolean "
                           "rename_detection, diff_format git-unified-v1", "invalid_capture_request")  # fmt: skip
    ids = []
    for key in ("base", "head"):
        match = _REV.match(locator[key]) if isinstance(locator[key], str) else None
        if match is None:
            raise CaptureError(f"git_range.{key} must be a pinned full commit id (sha1:<40 hex>), never a ref name",
                               "invalid_git_revision")  # fmt: skip
        ids.append(match.group(1) or match.group(2))
    if ids[0] == ids[1]:
        raise CaptureError("git_range.base and head must differ", "invalid_git_revision")
    return ids[0], ids[1]


def load_range(root: Any, locator: dict[str, Any]) -> tuple[bytes, list[dict[str, Any]], Any]:
    """(rendered diff bytes, files, view) of the pinned range; fails closed on unknown commits, a base off the
    first-parent chain, caps, binary changes and unsafe Markdown entries."""
    from git_memzoi.core.gitview_pygit2 import NotARepository, Pygit2RepoView
    from git_memzoi.errors import InputError

    base, head = check_locator(locator)
    try:
        view = Pygit2RepoView(root)
    except NotARepository:
        raise CaptureError("git_range needs the project's git repository", "source_not_found") from None
    for oid in (base, head):
        if view.pinned_commit(oid) is None:
            raise CaptureError("a pinned commit of the range is not in the repository", "invalid_git_revision")
    if locator["merge_parent"] == "first_parent" and view.first_parent_chain(base, head) is None:
        raise CaptureError("git_range.base is not on head's first-parent chain", "invalid_git_revision")
    try:
        files = view.tree_diff(base, head, renames=locator["rename_detection"], max_files=MAX_FILES,
                               max_hunks=MAX_HUNKS)  # fmt: skip
    except InputError as exc:
        raise CaptureError(str(exc), exc.code) from None
    rendered = []
    for f in files:
        for key in ("old_path", "new_path"):
            path = f[key]
            if "\\" in path or any(ord(c) < 32 or ord(c) == 127 for c in path):
                raise CaptureError("the range holds an unsafe path", "extractor_safeguard_failed")
        if f["binary"]:
            raise CaptureError("the range holds a binary change", "extractor_safeguard_failed")
        if _markdown(f) and any(m not in (0, *REGULAR) for m in (f["old_mode"], f["new_mode"])):
            raise CaptureError("a Markdown entry of the range is not a regular file", "extractor_safeguard_failed")
        rendered.append(f"diff --git a/{f['old_path']} b/{f['new_path']}\n")
        for h in f["hunks"]:
            rendered.append(h["header"] + "\n")
            rendered.extend(origin + text if text.endswith("\n") else origin + text + "\n"
                            for origin, text, _, _ in h["lines"] if origin in "+- ")  # fmt: skip
    data = "".join(rendered).encode("utf-8", "surrogateescape")
    if len(data) > MAX_DIFF_BYTES:
        raise CaptureError(f"the range's diff is larger than {MAX_DIFF_BYTES} bytes", "capture_limit_exceeded")
    return data, files, view


def _markdown(f: dict[str, Any]) -> bool:
    return any(p.endswith(".md") for p in (f["old_path"], f["new_path"]))


def _skipped(path: str) -> bool:
    return any(p.lower() in (".memzoi", ".git") for p in path.split("/"))


def extract(source_id: str, locator: dict[str, Any], data: bytes, files: list[dict[str, Any]],
            view: Any) -> md.Extraction:  # fmt: skip
    """Candidates and diagnostics of a loaded range; ``blocked`` when the diff or an excerpt holds prohibited
    content (the diagnostics name the rule and the diff line only)."""
    from git_memzoi.memzoi.secrets import classify

    findings = classify(data.decode("utf-8", "replace"))
    if findings:
        return md.Extraction([], [{"code": "prohibited_content_detected", "source_id": source_id,
                                   "line_start": f.line, "detector": f.rule, "class": f.kind}
                                  for f in findings], blocked=True)  # fmt: skip
    out = md.Extraction()
    source_hash = content_hash(data)
    for f in files:
        path = f["new_path"] if f["status"] != "deleted" else f["old_path"]
        if not _markdown(f) or _skipped(f["old_path"]) or _skipped(f["new_path"]):
            out.diagnostics.append({"code": "unsupported_git_change", "source_id": source_id, "path": path,
                                    "line_start": 0})  # fmt: skip
            continue
        found = _file_candidates(source_id, locator, source_hash, f, view)
        if any(classify(c["evidence"][0]["text"]) for c in found):
            return md.Extraction([], [{"code": "prohibited_content_detected", "source_id": source_id,
                                       "line_start": 0, "detector": "evidence", "class": "credential"}],
                                 blocked=True)  # fmt: skip
        out.candidates.extend(found)
        if not found:
            code = {"renamed": "git_rename_without_durable_candidate",
                    "deleted": "git_deleted_file_without_durable_candidate"}.get(f["status"], "unsupported_git_change")  # fmt: skip
            out.diagnostics.append({"code": code, "source_id": source_id, "path": path, "line_start": 0})
        elif any("git-deletion" in c["memory"]["tags"] for c in found):
            out.diagnostics.append({"code": "git_deleted_durable_guidance_requires_review", "source_id": source_id,
                                    "path": f["old_path"], "line_start": 0})  # fmt: skip
    if len(out.candidates) > md.MAX_CANDIDATES:
        raise CaptureError(f"the range yields more than {md.MAX_CANDIDATES} candidates", "capture_limit_exceeded")
    if sum(len(c["evidence"][0]["text"].encode("utf-8")) for c in out.candidates) > md.MAX_EVIDENCE_TOTAL:
        raise CaptureError(f"the evidence is larger than {md.MAX_EVIDENCE_TOTAL} bytes", "capture_limit_exceeded")
    return out


def _sections(data: bytes) -> list[tuple[md.Heading, int, list[str], tuple[str, str, str, str]]]:
    """(heading, byte end, heading path, typed kind) of each durable typed section of ``data``."""
    heads = md.headings(data)
    out = []
    stack: list[md.Heading] = []
    for i, head in enumerate(heads):
        stack = [h for h in stack if h.level < head.level] + [head]
        kind = md.typed(head.text)
        if kind is not None and kind[1] in DURABLE:
            out.append((head, heads[i + 1].byte_start if i + 1 < len(heads) else len(data),
                        [h.text for h in stack], kind))  # fmt: skip
    return out


def _file_candidates(source_id: str, locator: dict[str, Any], source_hash: str, f: dict[str, Any],
                     view: Any) -> list[dict[str, Any]]:  # fmt: skip
    zero = "0" * 40
    new = view.blob_bytes(f["new_blob"]) if f["status"] != "deleted" and f["new_blob"] != zero else b""
    old = view.blob_bytes(f["old_blob"]) if f["status"] != "added" and f["old_blob"] != zero else b""
    for blob in (new, old):
        try:
            blob.decode("utf-8")
        except UnicodeDecodeError:
            raise CaptureError("a Markdown file of the range is not UTF-8", "invalid_encoding") from None
    added = {ln[3]: h for h in f["hunks"] for ln in h["lines"] if ln[0] == "+"}
    deleted = {ln[2]: h for h in f["hunks"] for ln in h["lines"] if ln[0] == "-"}
    out = []
    for head, end, path, kind in _sections(new):
        last = head.line + new[head.byte_start : end][:-1].count(b"\n")
        hunk = next((added[n] for n in range(head.line, last + 1) if n in added), None)
        if hunk is not None:
            out.append(_candidate(source_id, locator, source_hash, f, "new", new, head, end, path, kind, hunk))
    still = {h.text for h, _, _, _ in _sections(new)}
    for head, end, path, kind in _sections(old):
        if head.line in deleted and head.text not in still:
            out.append(_candidate(source_id, locator, source_hash, f, "old", old, head, end, path, kind,
                                  deleted[head.line]))  # fmt: skip
    return out


def _candidate(source_id: str, locator: dict[str, Any], source_hash: str, f: dict[str, Any], side: str,
               blob: bytes, head: md.Heading, end: int, heading_path: list[str], kind: tuple[str, str, str, str],
               hunk: dict[str, Any]) -> dict[str, Any]:  # fmt: skip
    title, memory_type, lane, routed = kind
    excerpt = blob[head.byte_start : end]
    if len(excerpt) > md.MAX_EVIDENCE_ITEM:
        raise CaptureError(f"an evidence item is larger than {md.MAX_EVIDENCE_ITEM} bytes", "capture_limit_exceeded")
    line_end = blob.find(b"\n", head.byte_start, end)
    body = blob[line_end + 1 if line_end >= 0 else end : end].decode("utf-8").strip()
    path = f["new_path"] if side == "new" else f["old_path"]
    span = {"byte_start": head.byte_start, "byte_end": end, "line_start": head.line,
            "line_end": head.line + excerpt[:-1].count(b"\n")}  # fmt: skip
    tags = ["git-change"] if side == "new" else ["git-change", "git-deletion"]
    memory = {"type": memory_type, "lane": lane, "title": title, "body": body,
              "scope": {"kind": "repo", "id": None, "paths": [path]}, "tags": tags}  # fmt: skip
    semantic = {"kind": "git_change", "repository": locator["repository"], "base": locator["base"],
                "head": locator["head"], "old_blob": f["old_blob"], "new_blob": f["new_blob"],
                "old_path": f["old_path"], "new_path": f["new_path"], "change_kind": f["status"],
                "hunk": content_hash(hunk["header"].encode("utf-8")), "hunk_header": hunk["header"], "side": side,
                "old_line_start": hunk["old_start"], "old_line_end": hunk["old_start"] + max(hunk["old_lines"], 1) - 1,
                "new_line_start": hunk["new_start"], "new_line_end": hunk["new_start"] + max(hunk["new_lines"], 1) - 1,
                "path": path, "blob": f["new_blob"] if side == "new" else f["old_blob"]}  # fmt: skip
    evidence = {"source_id": source_id, "locator": locator, "source_content_hash": source_hash, "span": span,
                "evidence_content_hash": content_hash(excerpt), "text": excerpt.decode("utf-8"),
                "heading_path": heading_path, "section_kind": memory_type, "semantic_location": semantic}  # fmt: skip
    claim_id = "claim_" + canonical_hash(memory)[:32]
    candidate_id = "candidate_" + canonical_hash({"claim": claim_id, "evidence": evidence})[:32]
    return {"claim_id": claim_id, "candidate_id": candidate_id, "memory": memory, "evidence": [evidence],
            "extraction": {"profile": PROFILE, **EXTRACTOR}, "confidence": "1.0",
            "routed_destination": routed if side == "new" else None}  # fmt: skip


def load(ctx: Any, source: dict[str, Any], supplied: Any) -> Any:
    """The git-change-deterministic source of a request: a ``git_range`` of pinned full commit ids (§9.3)."""
    from git_memzoi.memzoi import capture_sources as sources

    if source["locator"].get("kind") != "git_range" or "git" in source:
        raise CaptureError("the git-change profile reads a git_range source", "unsupported_capture_profile")
    if source["media_type"] != "text/x-diff":
        raise CaptureError("a git_range source is text/x-diff", "unsupported_media_type")
    data, files, view = load_range(ctx.layout.root, source["locator"])
    configuration = {"prefixes": md.PREFIXES, "durable": sorted(DURABLE), "max_files": MAX_FILES,
                     "max_hunks": MAX_HUNKS, "context_lines": 3}  # fmt: skip
    return sources.Loaded(sources.snapshot(source, data), extract(source["source_id"], source["locator"], data,
                                                                  files, view), sources.extractor(EXTRACTOR, configuration))  # fmt: skip
