"""The ``git-change-deterministic`` capture profile (io): its three source shapes, read and pinned, then handed to
the strict diff reader :mod:`~git_memzoi.memzoi.capture.profiles.diff` (memzoi-spec.md §9.2, §9.3, §9.5).

Sources (exactly one per request):

- a ``.diff``/``.patch`` ``project_path`` (``text/x-diff``, ≤ 2 MiB) with a ``git: {repository: ".", base,
  head}`` context of full object ids;
- ``supplied_bytes`` (``{kind, display_name, media_type: text/x-diff, byte_length, source_content_hash}``) with
  the same ``git`` context; the bytes come from ``--source-bytes`` and must have exactly that length and BLAKE3
  hash (``supplied_bytes_mismatch``; none given: ``supplied_bytes_missing``);
- a ``git_range`` of pinned full commit ids, rendered in-process exactly as ``git diff --full-index -M <base>
  <head>`` prints it (:meth:`~git_memzoi.core.gitview_pygit2.Pygit2RepoView.unified_diff`): never from ambient
  HEAD, ref names or the worktree. Its snapshot lists ``policy_inputs`` (repository identity, the local
  ``.git/config``, the renderer version, and the head tree's applicable ``.gitignore`` files); the config and the
  ``.gitignore`` files are scanned for prohibited content (``prohibited_policy_input``), and a config that
  includes other files is refused the same way.

Evidence spans are spans of the diff bytes (the rendered range for a ``git_range``). Caps: 512 changed files,
4,096 hunks, 2 MiB of diff.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from git_memzoi.core.hashing import content_hash
from git_memzoi.core.patterns import lazy
from git_memzoi.memzoi.capture.profiles import diff
from git_memzoi.memzoi.capture.profiles import markdown as md
from git_memzoi.memzoi.capture.profiles.diff import DURABLE, EXTRACTOR, PROFILE  # noqa: F401  (the profile's identity)
from git_memzoi.memzoi.capture.profiles.markdown import CaptureError, canonical_hash

MAX_FILES = 512
MAX_HUNKS = 4096
MAX_DIFF_BYTES = 2 * 1024 * 1024
LOCATOR_KEYS = ("kind", "repository", "base", "head", "merge_parent", "rename_detection", "diff_format")
SUPPLIED_KEYS = ("kind", "display_name", "media_type", "byte_length", "source_content_hash")
MERGE_PARENTS = ("base_to_head", "first_parent")
_REV = lazy(r"^sha1:([0-9a-f]{40})$|^sha256:([0-9a-f]{64})$")
_HASH = lazy(r"^blake3:[0-9a-f]{64}$")
RENDERER = "memzoi/git-unified-renderer-v1"
# what the extractor's identity hashes (``extractor.configuration_hash``)
CONFIGURATION = {
    "prefixes": md.PREFIXES,
    "durable": sorted(DURABLE),
    "max_files": MAX_FILES,
    "max_hunks": MAX_HUNKS,
    "max_diff_bytes": MAX_DIFF_BYTES,
    "context_lines": 3,
}


def check_revisions(where: Any, what: str) -> tuple[str, str]:
    """The (base, head) hex ids of ``where['base']``/``where['head']``: ``sha1:<40 hex>`` or ``sha256:<64 hex>``,
    one object format, different; else :class:`CaptureError` ``invalid_git_revision`` (a ref name, an
    abbreviation, upper case, equal ids)."""
    ids, formats = [], set()
    for key in ("base", "head"):
        match = _REV.match(where[key]) if isinstance(where[key], str) else None
        if match is None:
            raise CaptureError(
                f"{what}.{key} must be a pinned full commit id (sha1:<40 hex>), never a ref name",
                "invalid_git_revision",
            )
        ids.append(match.group(1) or match.group(2))
        formats.add(where[key].split(":")[0])
    if ids[0] == ids[1] or len(formats) != 1:
        raise CaptureError(f"{what}.base and head must differ and share one object format", "invalid_git_revision")
    return ids[0], ids[1]


def check_locator(locator: Any) -> tuple[str, str]:
    """The (base, head) full ids of a strict ``git_range`` locator, else :class:`CaptureError`.

    Codes: ``invalid_capture_request`` (unknown or missing keys, bad values), ``invalid_git_revision``.
    """
    if not isinstance(locator, dict) or sorted(locator) != sorted(LOCATOR_KEYS):
        raise CaptureError(
            f"a git_range locator has exactly the keys {', '.join(LOCATOR_KEYS)}", "invalid_capture_request"
        )
    if (
        locator["kind"] != "git_range"
        or locator["repository"] != "."
        or locator["diff_format"] != "git-unified-v1"
        or locator["merge_parent"] not in MERGE_PARENTS
        or not isinstance(locator["rename_detection"], bool)
    ):
        raise CaptureError(
            "git_range: repository '.', merge_parent base_to_head|first_parent, boolean "
            "rename_detection, diff_format git-unified-v1",
            "invalid_capture_request",
        )
    return check_revisions(locator, "git_range")


def check_git_context(source: dict[str, Any]) -> tuple[str, str, str]:
    """(repository, base, head) of a diff source's strict ``git`` context (``invalid_capture_request``,
    ``invalid_git_revision``)."""
    from git_memzoi.memzoi.capture import sources

    if "git" not in source:
        raise CaptureError("a diff source needs git: {repository, base, head}", "invalid_capture_request")
    git = sources.strict(source["git"], "git", ("repository", "base", "head"))
    if git["repository"] != ".":
        raise CaptureError("git.repository must be '.'", "invalid_capture_request")
    check_revisions(git, "git")
    return diff.git_identity(git)


def read_supplied(source: dict[str, Any], supplied: Mapping[str, bytes]) -> bytes:
    """The ``--source-bytes`` of a strict ``supplied_bytes`` source, checked against its locator.

    Codes: ``invalid_capture_request`` (keys, display name, hash shape), ``unsupported_media_type``,
    ``source_too_large``, ``supplied_bytes_missing``, ``supplied_bytes_mismatch`` (length or hash differs).
    """
    from git_memzoi.memzoi.capture import sources
    from git_memzoi.memzoi.records.secrets import classify

    locator = sources.strict(source["locator"], "locator", SUPPLIED_KEYS)
    name, length = locator["display_name"], locator["byte_length"]
    if (
        not isinstance(name, str)
        or not 0 < len(name) <= 255
        or name in (".", "..")
        or "/" in name
        or "\\" in name
        or any(ord(c) < 32 or ord(c) == 127 for c in name)
        or classify(name)
    ):
        raise CaptureError("display_name must be a plain, safe file name", "invalid_capture_request")
    if (
        not isinstance(length, int)
        or isinstance(length, bool)
        or length < 0
        or not isinstance(locator["source_content_hash"], str)
        or not _HASH.match(locator["source_content_hash"])
    ):
        raise CaptureError("byte_length is a count and source_content_hash blake3:<64 hex>", "invalid_capture_request")
    if locator["media_type"] != "text/x-diff" or source["media_type"] != "text/x-diff":
        raise CaptureError("supplied bytes are text/x-diff", "unsupported_media_type")
    if length > MAX_DIFF_BYTES:
        raise CaptureError(f"a diff is at most {MAX_DIFF_BYTES} bytes", "source_too_large")
    data = supplied.get(source["source_id"])
    if data is None:
        raise CaptureError("the supplied_bytes source needs --source-bytes", "supplied_bytes_missing")
    if len(data) != length or content_hash(data) != locator["source_content_hash"]:
        raise CaptureError("the supplied bytes differ from the request's length or hash", "supplied_bytes_mismatch")
    return data


def load_range(root: Any, locator: dict[str, Any]) -> tuple[bytes, list[dict[str, Any]]]:
    """(the rendered diff, the snapshot's policy inputs) of a pinned range; fails closed on unknown commits, a
    base off the first-parent chain, caps, binary or type changes, unsafe paths and prohibited policy inputs."""
    from git_memzoi.core.gitview_pygit2 import NotARepository, Pygit2RepoView
    from git_memzoi.errors import InputError

    base, head = check_locator(locator)
    try:
        view = Pygit2RepoView(root)
    except NotARepository:
        raise CaptureError("git_range needs the project's git repository", "source_not_found") from None
    commits = [view.pinned_commit(oid) for oid in (base, head)]
    if None in commits:
        raise CaptureError("a pinned commit of the range is not in the repository", "invalid_git_revision")
    if locator["merge_parent"] == "first_parent" and view.first_parent_chain(base, head) is None:
        raise CaptureError("git_range.base is not on head's first-parent chain", "invalid_git_revision")
    try:
        data, paths = view.unified_diff(
            base,
            head,
            renames=locator["rename_detection"],
            max_files=MAX_FILES,
            max_hunks=MAX_HUNKS,
            max_bytes=MAX_DIFF_BYTES,
        )
    except InputError as exc:
        code = "capture_limit_exceeded" if exc.code == "capture_limit_exceeded" else diff.SAFEGUARD
        raise CaptureError(str(exc), code) from None
    return data, _policy_inputs(view, locator, commits, paths)


def _policy_inputs(view: Any, locator: dict[str, Any], commits: list[Any], paths: list[str]) -> list[dict[str, Any]]:
    """Repository identity, local config, renderer version and the head tree's applicable ``.gitignore`` files;
    the config and ignore files must hold no prohibited content and the config no include."""
    from git_memzoi.memzoi.records.secrets import classify

    identity = {
        "object_format": locator["base"].split(":")[0],
        "commits": commits,
        "rename_detection": locator["rename_detection"],
        "merge_parent": locator["merge_parent"],
    }
    config = view.local_config_bytes()
    text = config.decode("utf-8", "replace")
    # credentials only: a local user.email is ordinary git configuration, not personal data to keep out
    findings = classify(text, personal=False)
    if findings:
        raise CaptureError(
            f"the repository's local git config holds prohibited content ({findings[0].rule}, line {findings[0].line})",
            "prohibited_policy_input",
        )
    include = re.search(r"(?im)^\s*\[\s*include(?:if)?\b", text)
    if include:
        raise CaptureError(
            f"the repository's local git config has an [include] (line {text[: include.start()].count(chr(10)) + 1}): "
            "capture cannot pin what it would read",
            "prohibited_policy_input",
        )
    renderer = f"{RENDERER}+{view.renderer_version()}"
    inputs = [
        {
            "path": ".git",
            "engine_version": "memzoi/git-repository-identity-v1",
            "source_content_hash": "blake3:" + canonical_hash(identity),
        },
        {
            "path": ".git/config",
            "engine_version": "memzoi/git-local-config-v1",
            "source_content_hash": content_hash(config),
        },
        {
            "path": ".git/renderer-version",
            "engine_version": renderer,
            "source_content_hash": content_hash(renderer.encode("utf-8")),
        },
    ]
    folders = sorted({"/".join(p.split("/")[:n]) for p in paths for n in range(p.count("/") + 1)})
    for folder in folders:
        rel = f"{folder}/.gitignore" if folder else ".gitignore"
        blob = view.tree_blob(commits[1]["id"], rel)
        if blob is None:
            continue
        findings = classify(blob.decode("utf-8", "replace"), personal=False)
        if findings:
            raise CaptureError(
                f"a .gitignore of the head tree holds prohibited content ({findings[0].rule}, line {findings[0].line})",
                "prohibited_policy_input",
            )
        inputs.append(
            {"path": rel, "engine_version": "memzoi/git-head-ignore-v1", "source_content_hash": content_hash(blob)}
        )
    return inputs


def load(ws: Any, source: dict[str, Any], supplied: Mapping[str, bytes]) -> Any:
    """The git-change-deterministic source of a request (a diff ``project_path``, ``supplied_bytes`` or a
    ``git_range``), read, parsed and extracted; ``Loaded`` as :mod:`capture_sources` defines it."""
    from git_memzoi.memzoi.capture import sources

    kind = source["locator"].get("kind")
    extra: dict[str, Any] = {}
    if kind == "git_range":
        if "git" in source:
            raise CaptureError("a git_range carries its revisions in the locator", "invalid_capture_request")
        if source["media_type"] != "text/x-diff":
            raise CaptureError("a git_range source is text/x-diff", "unsupported_media_type")
        data, extra["policy_inputs"] = load_range(ws.layout.root, source["locator"])
        identity = diff.git_identity(source["locator"])
    elif kind in ("project_path", "supplied_bytes"):
        identity = check_git_context(source)
        if kind == "project_path":
            path = sources.project_path(source, "text/x-diff")
            if not path.endswith((".diff", ".patch")):
                raise CaptureError("a diff source is a .diff or .patch file", "unsupported_media_type")
            data = sources.read_source(ws.layout.root, path, MAX_DIFF_BYTES)
        else:
            data = read_supplied(source, supplied)
    else:
        raise CaptureError(
            "the git-change profile reads a diff file, supplied bytes or a git_range", "unsupported_capture_profile"
        )
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        raise CaptureError("the diff is not UTF-8", "invalid_encoding") from None
    files = diff.parse(data, max_files=MAX_FILES, max_hunks=MAX_HUNKS)
    extraction = diff.extract(source["source_id"], source["locator"], identity, data, files)
    return sources.Loaded(
        sources.snapshot(source, data, **extra), extraction, sources.extractor(EXTRACTOR, CONFIGURATION)
    )
