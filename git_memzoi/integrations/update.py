"""``git memzoi update --check``: the installed version against a release, and how to upgrade (Memzoi reference,
"Update Command"; issue 20).

The reference's ``update`` replaces release binaries; this tool is a Python package, so the check never changes
files and the upgrade is the installer's own command (pip, pipx, or an editable checkout's ``git pull``). It is
offline unless asked: ``--ref X.Y.Z`` is compared without any network, ``latest`` is looked up on the package
index only with ``online=True``. Statuses are the reference's (``up_to_date``, ``update_available``,
``invalid_ref``, ``download_failed``) plus ``not_checked``: latest was asked for offline.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from typing import Any

from git_memzoi.core.patterns import lazy
from git_memzoi.errors import InputError

PACKAGE = "git-memzoi"
INDEX_URL = "https://pypi.org/pypi/git-memzoi/json"
_REF = lazy(r"v?(\d+)\.(\d+)\.(\d+)")
TIMEOUT_S = 5.0


@dataclass(frozen=True)
class UpdateCheck:
    """The result: ``status``, ``installed`` (version), ``target`` (the version compared, ``None`` when not
    looked up), ``install`` (``pip``, ``pipx``, ``editable``), ``command`` (how to upgrade) and ``reason``."""

    status: str
    installed: str
    target: str | None
    install: str
    command: str
    reason: str

    def to_json(self) -> dict[str, Any]:
        """``{ok, status, installed, target, install, command, reason}``; ``ok`` is false only for a failure."""
        ok = self.status not in ("invalid_ref", "download_failed")
        return {"ok": ok, **vars(self)}


def normalize_ref(ref: str) -> str | None:
    """``latest``, or ``X.Y.Z`` for ``vX.Y.Z`` / ``X.Y.Z``; ``None`` for anything else (branches, SHAs, URLs)."""
    if ref == "latest":
        return ref
    match = _REF.fullmatch(ref.strip())
    return ".".join(match.groups()) if match else None


def install_kind() -> tuple[str, str]:
    """``(kind, upgrade command)`` of this installation, read from its ``direct_url.json`` (PEP 610) and
    ``sys.prefix``: an editable checkout upgrades with git, a pipx venv with pipx, else pip of this python."""
    from importlib import metadata

    try:
        direct = metadata.distribution(PACKAGE).read_text("direct_url.json")
    except metadata.PackageNotFoundError:
        direct = None
    found = json.loads(direct or "{}")
    if found.get("dir_info", {}).get("editable"):
        checkout = str(found.get("url", "")).removeprefix("file://")
        return "editable", f"git -C {checkout or '<checkout>'} pull"
    if "/pipx/venvs/" in sys.prefix.replace("\\", "/"):
        return "pipx", f"pipx upgrade {PACKAGE}"
    return "pip", f"{sys.executable} -m pip install -U {PACKAGE}"


def check(installed: str, ref: str = "latest", *, online: bool = False, fetch: Any = None) -> UpdateCheck:
    """Compare ``installed`` with ``ref`` (``latest``, ``vX.Y.Z`` or ``X.Y.Z``).

    Args:
        installed: the running version (``git_memzoi.__version__``).
        ref: the release to compare with.
        online: look ``latest`` up on the package index (one HTTPS request, :data:`TIMEOUT_S` seconds).
        fetch: ``() -> str`` returning the latest version, for tests; default the index's JSON API.

    Raises:
        InputError: ``invalid_ref`` (exit 2) for a ref that is not ``latest`` or a release version.
    """
    from packaging.version import Version

    kind, command = install_kind()
    target = normalize_ref(ref)
    if target is None:
        message = f"--ref {ref!r} is not latest, vX.Y.Z or X.Y.Z (branches, commits and URLs are refused)"
        raise InputError(message, "invalid_ref")
    if target == "latest":
        if not online:
            reason = "latest was not looked up (offline); pass --online, or --ref X.Y.Z to compare with a release"
            return UpdateCheck("not_checked", installed, None, kind, command, reason)
        try:
            target = (fetch or _latest)()
        except (OSError, ValueError, KeyError) as exc:
            return UpdateCheck("download_failed", installed, None, kind, command, _lookup_failed(exc))
    if Version(installed) >= Version(target):
        return UpdateCheck("up_to_date", installed, target, kind, command, f"{installed} is at or after {target}")
    if kind == "editable":
        reason = f"{target} is newer; an editable install follows its checkout"
    else:
        reason = f"{target} is newer than {installed}"
    return UpdateCheck("update_available", installed, target, kind, command, reason)


def _latest() -> str:
    """The newest release on the package index (its JSON API's ``info.version``)."""
    from urllib.request import urlopen

    with urlopen(INDEX_URL, timeout=TIMEOUT_S) as response:
        version: str = json.loads(response.read(1_000_000))["info"]["version"]
    return version


def _lookup_failed(exc: BaseException) -> str:
    """Why the latest release was not found: an HTTP 404 is an answer (the index has no such package; a
    git-only install is not on PyPI), anything else is no answer."""
    if getattr(exc, "code", None) == 404:
        return "the package index has no git-memzoi release (HTTP 404); pass --ref X.Y.Z to compare with a release"
    return f"the index did not answer: {exc}"
