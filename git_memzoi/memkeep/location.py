"""Where a memkeep store is (io): ``.memkeep.yml`` read between the start folder and the repository root, and
the store folder found there (memkeep README "Configuration"). Split from :mod:`~git_memzoi.memkeep.store` so
that the record index, which asks on every command whether the repository has a store, loads no entry reader
(issue 17, "Start-up").
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from git_memzoi.core import safe_read
from git_memzoi.core.paths import is_within
from git_memzoi.errors import InputError

DEFAULT_STORE_DIR = "agent-memory"
CONFIG_NAME = ".memkeep.yml"
CONFIG_FIELDS = ("store_dir", "referential_check", "siblings")  # memkeep README ".memkeep.yml"
MAX_CONFIG_BYTES = 64 * 1024  # .memkeep.yml holds three settings


class StoreNotFound(InputError):
    """No store where one was asked for or searched (exit 2)."""

    default_code = "store_not_found"


@dataclass(frozen=True)
class StoreConfig:
    """``.memkeep.yml``: ``store_dir``, ``referential_check`` and ``siblings`` (other keys are ignored)."""

    store_dir: str = DEFAULT_STORE_DIR
    referential_check: bool = False
    siblings: Mapping[str, str] = field(default_factory=dict)
    source: Path | None = None


@dataclass(frozen=True)
class Store:
    """A located store: the repository root, the store directory and its configuration."""

    root: Path
    path: Path
    config: StoreConfig

    @property
    def entries_dir(self) -> Path:
        """The ``entries/`` folder."""
        return self.path / "entries"

    @property
    def index_path(self) -> Path:
        """The generated ``INDEX.md``."""
        return self.path / "INDEX.md"

    @property
    def rel(self) -> str:
        """The store directory relative to the repository root (POSIX)."""
        rel = self.path.relative_to(self.root).as_posix()
        return rel or "."


def locate(start: Path, root: Path, *, store: str | None = None, store_dir: str | None = None) -> Store:
    """Resolve the store for a command started in ``start`` inside the repository at ``root``.

    Raises:
        StoreNotFound: when no store exists where one was asked for or searched.
        InputError: for a store outside the repository (``path_outside_repo``) or a bad ``.memkeep.yml``.
    """
    config = read_config(start, root)
    if store:
        path = (start / store) if not Path(store).is_absolute() else Path(store)
        inside = is_within(path, root)
        if not path.exists():
            where = "" if inside else f" (and it would be outside the repository {root}, where stores are refused)"
            raise StoreNotFound(f"no memkeep store at {store}: no such folder{where}")
        if not inside:
            raise InputError(f"store {store} is outside the repository {root}", "path_outside_repo")
        if not (path / "entries").is_dir():
            raise StoreNotFound(f"no memkeep store at {store} (it needs an entries/ folder)")
        return _real_entries(Store(root, path.resolve(), config))
    name = store_dir or config.store_dir
    if not name or "/" in name.strip("/") or name in (".", ".."):
        raise InputError(f"store directory name {name!r} must be one folder name", "bad_store_dir")
    for directory in _upwards(start, root):
        candidate = directory / name
        if (candidate / "entries").is_dir():
            if not is_within(candidate, root):
                raise InputError(f"store {candidate} resolves outside the repository", "path_outside_repo")
            return _real_entries(Store(root, candidate.resolve(), config))
    raise StoreNotFound(
        f"no memkeep store found: looked for {name}/entries/ from {start} up to {root} "
        f"(start one: mkdir -p {name}/entries, write a first entry there, git memkeep index; "
        f"{CLI_HINT})"
    )


CLI_HINT = "or pass --store / --store-dir"  # the CLI's way to another store; the MCP server names its own


def _real_entries(store: Store) -> Store:
    """``store`` when its ``entries/`` folder is a real folder: one that is a symlink (committed with
    ``--no-verify``, say to ``/outside``) would have every read and write of the store follow it (issue 13).

    Raises:
        UnsafePath: ``entries/`` is a symlink.
    """
    from git_memzoi.core.confine import UnsafePath

    if store.entries_dir.is_symlink():
        raise UnsafePath(
            f"{store.rel}/entries is a symlink (to {os.readlink(store.entries_dir)!r}); a memkeep store's entries "
            "must be a real folder: replace the link by the folder"
        )
    return store


def _upwards(start: Path, root: Path) -> list[Path]:
    start, root = start.resolve(), root.resolve()
    chain = [start, *start.parents]
    if root not in chain:
        return [root]
    return chain[: chain.index(root) + 1]


def read_config(start: Path, root: Path) -> StoreConfig:
    """Read the nearest ``.memkeep.yml`` between ``start`` and ``root``; defaults when there is none.

    Raises:
        InputError: a symlink resolving outside ``root`` (``path_outside_repo``); when the file is not valid YAML,
            has a field other than :data:`CONFIG_FIELDS`, or a field
            has the wrong type (``bad_config``); is too complex to parse (``yaml_too_complex``); or is no regular
            file (``not_a_regular_file``, a FIFO: never opened) or over 64 KiB (``file_too_large``).
    """
    for directory in _upwards(start, root):
        path = directory / CONFIG_NAME
        if path.exists() and not path.is_dir():  # a FIFO or a device there is refused, not taken for no file
            if path.is_symlink() and not is_within(path, root):  # settings from outside: as entries, refused
                raise InputError(
                    f"{path}: a symlink to {os.readlink(path)!r}, outside the repository; memkeep reads its "
                    "settings only from files inside it (replace the link by the file)",
                    "path_outside_repo",
                )
            return _parse_config(path)
    return StoreConfig()


def _parse_config(path: Path) -> StoreConfig:
    from git_memzoi.core import yamlio

    try:
        text = safe_read.read_text(path, MAX_CONFIG_BYTES, follow_symlinks=True)
        data, _ = yamlio.load_mapping(text, "the file", max_bytes=MAX_CONFIG_BYTES)
    except yamlio.YamlProblem as exc:
        line = f":{exc.line + 1}" if exc.line is not None else ""
        raise InputError(f"{path}{line}: {exc.reason}", exc.code or "bad_config") from None
    except safe_read.FileRefused as exc:  # a FIFO or a 10 MB file would stall every memkeep command
        raise InputError(exc.message, exc.code) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read ({exc})", "bad_config") from None
    unknown = sorted(str(k) for k in data if k not in CONFIG_FIELDS)
    if unknown:  # a misspelt key would otherwise switch its setting off without a word
        raise InputError(f"{path}: unknown field {unknown[0]!r} (known: {', '.join(CONFIG_FIELDS)})", "bad_config")
    store_dir = data.get("store_dir", DEFAULT_STORE_DIR)
    referential = data.get("referential_check", False)
    siblings = data.get("siblings", {})
    for name, value, ok, want in (
        ("store_dir", store_dir, isinstance(store_dir, str), "a folder name"),
        ("referential_check", referential, isinstance(referential, bool), "true or false"),
        ("siblings", siblings, isinstance(siblings, dict), "a mapping"),
    ):
        if not ok:
            raise InputError(f"{path}: {name} must be {want}, not {value!r}", "bad_config")
    return StoreConfig(store_dir, referential, {str(k): str(v) for k, v in siblings.items()}, path)
