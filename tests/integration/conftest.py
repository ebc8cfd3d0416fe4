"""Fixtures of the integration tests: ``ctx``, an initialised memzoi project with a pinned clock (modules that
need another set-up define their own ``ctx``)."""

from __future__ import annotations

import pytest

from git_memzoi.core.clock import FixedClock
from git_memzoi.memzoi import workspace
from git_memzoi.memzoi.workspace import Workspace
from tests.conftest import Repo
from tests.integration.memzoi_ctx import NOW


@pytest.fixture
def ctx(repo: Repo) -> Workspace:
    """An initialised project in ``repo`` acting as ``zoki`` at :data:`NOW`."""
    workspace.init(repo.root)
    return workspace.open_workspace(repo.root, clock=FixedClock(NOW.date(), NOW), actor="zoki")
