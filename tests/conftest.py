"""The fixtures every test can use, registered here and built in :mod:`tests.support.repos`; the Hypothesis
profiles of the property suites (``*_property.py``), chosen by HYPOTHESIS_PROFILE: "ci" (the default) is
deterministic and quick."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from hypothesis import settings

from tests.support import repos
from tests.support.repos import Repo

if TYPE_CHECKING:
    from git_memzoi.memzoi.workspace import Workspace

# ONNX Runtime writes telemetry under ~/.cache on import (transformer.runtime); test modules import it at collection,
# before any test's HOME is in tmp
os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")

settings.register_profile("ci", derandomize=True, max_examples=50, deadline=None)
settings.register_profile("thorough", max_examples=2000, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(autouse=True)
def hermetic_env(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test: HOME in tmp, no inherited git or memzoi environment, a pinned git identity, and no installed
    semantic model: recall defaults to lexical whatever the venv holds, in this process and in the processes tests
    start (MEMZOI_RECALL_MODE); a test installs its own embedder (tests/support/embedder.py)."""
    from git_memzoi.memzoi.recall import embedder

    repos.hermetic(tmp_path_factory.mktemp("home"), monkeypatch)
    monkeypatch.setattr(embedder, "bundled_dir", lambda: None)
    monkeypatch.setenv("MEMZOI_RECALL_MODE", "lexical")


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    """An empty repository (no commits) on branch main."""
    return repos.new_repo(tmp_path / "repo")


@pytest.fixture
def ctx(repo: Repo) -> Workspace:
    """An initialised memzoi project in ``repo`` acting as ``zoki`` at ``repos.NOW`` (a module that needs another
    set-up defines its own ``ctx``)."""
    return repos.memzoi_workspace(repo)


# ../shared and its upstream corpora, read in place (copy into tmp_path before anything writes): the one place
# that skips the tests needing them where ../shared is absent (a user's clone)


@pytest.fixture(scope="session")
def shared() -> Path:
    """``../shared`` (``MEMZOI_SHARED_DIR`` overrides it); skips the test where its conformance corpora are absent."""
    return repos.shared_dir()


@pytest.fixture(scope="session")
def recall_v2(shared: Path) -> Path:
    """The upstream recall-v2 trust corpus."""
    return shared / "conformance" / "memzoi" / "recall-v2"


@pytest.fixture(scope="session")
def capture_v1(shared: Path) -> Path:
    """The upstream capture-v1 trust corpus."""
    return shared / "conformance" / "memzoi" / "capture-v1"


@pytest.fixture(scope="session")
def dogfood_records(shared: Path) -> Path:
    """The upstream project's own memory records."""
    return shared / "conformance" / "memzoi" / "dogfood-records" / "records"
