"""``templates/memkeep-status.yml``: a valid GitHub Actions workflow (SchemaStore's workflow schema, kept in
``data/`` from the check-jsonschema wheel, and check-jsonschema itself when installed) that installs git-memzoi
from a pinned git commit the user fills in (it is not on PyPI), refuses to run with the placeholder, and says
where the annotations land."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from git_memzoi.core.yamlio import load_mapping

PROJECT = Path(__file__).resolve().parents[2]
TEMPLATE = PROJECT / "templates" / "memkeep-status.yml"
DATA = Path(__file__).parent / "data"


def workflow() -> dict[str, Any]:
    return load_mapping(TEMPLATE.read_text("utf-8"), "workflow")[0]


def test_the_template_validates_against_the_github_workflow_schema() -> None:
    schema = json.loads((DATA / "github-workflows.json").read_text("utf-8"))
    validator = jsonschema.Draft7Validator(schema)
    errors = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(workflow())]
    assert errors == []


def test_the_schema_refuses_a_broken_workflow() -> None:
    schema = json.loads((DATA / "github-workflows.json").read_text("utf-8"))
    broken = workflow()
    broken["jobs"]["memkeep-status"].pop("runs-on")
    assert not jsonschema.Draft7Validator(schema).is_valid(broken)


@pytest.mark.skipif(find_spec("check_jsonschema") is None, reason="check-jsonschema is not installed ([test] extra)")
def test_check_jsonschema_accepts_the_template() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.github-workflows", str(TEMPLATE)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert (done.returncode, done.stdout.strip()) == (0, "ok -- validation done"), done.stderr


def install_script() -> str:
    steps = workflow()["jobs"]["memkeep-status"]["steps"]
    return next(s["run"] for s in steps if s.get("name") == "install git-memzoi")


def run_install(tmp_path: Path, value: str) -> subprocess.CompletedProcess[str]:
    """The install step under bash with ``GIT_MEMZOI=value`` and a fake ``pip`` that prints its arguments."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    fake = bin_dir / "pip"
    fake.write_text(f'#!{sys.executable}\nimport sys\nprint("pip", *sys.argv[1:])\n', "utf-8")
    fake.chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "GIT_MEMZOI": value}
    return subprocess.run(["bash", "-e", "-c", install_script()], capture_output=True, text=True, env=env, check=False)


def test_the_install_is_a_pinned_git_url_and_never_pypi(tmp_path: Path) -> None:
    assert workflow()["env"]["GIT_MEMZOI"] == "git+https://github.com/OWNER/git-memzoi@COMMIT"
    assert "pip install git-memzoi\n" not in TEMPLATE.read_text("utf-8")
    refused = "::error::set GIT_MEMZOI in this workflow to git+https://…/git-memzoi@<commit or tag> to install\n"
    for value in (workflow()["env"]["GIT_MEMZOI"], "git+https://github.com/acme/git-memzoi", "git-memzoi"):
        placeholder = run_install(tmp_path, value)  # the placeholder, an unpinned url, PyPI's name
        assert (placeholder.returncode, placeholder.stdout) == (1, refused), value
    pinned = "git+https://github.com/acme/git-memzoi@" + "a" * 40
    filled = run_install(tmp_path, pinned)
    assert (filled.returncode, filled.stdout) == (0, f"pip install git-memzoi @ {pinned}\n")


def test_the_comment_says_where_annotations_land() -> None:
    text = TEMPLATE.read_text("utf-8")
    assert "on the changed files" not in text
    assert "on the entry file (agent-memory/entries/<id>.md) at the line of the" in text
    assert "one notice on each changed line range of that code" in text


def status_step(name: str) -> str:
    steps = workflow()["jobs"]["memkeep-status"]["steps"]
    return next(s["run"] for s in steps if s.get("name") == name)


@pytest.mark.parametrize("code", [0, 1, 2])
def test_the_status_steps_let_suspects_through_and_fail_on_tool_errors(tmp_path: Path, code: int) -> None:
    """Exit 1 (suspect entries) is a warning; exit 2 (a broken store) fails the step, never hidden."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "git").write_text(f"#!/bin/sh\nexit {code}\n")
    (bin_dir / "git").chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    for name in ("memkeep status (annotations)", "memkeep status (SARIF)"):
        done = subprocess.run(["bash", "-e", "-c", status_step(name)], cwd=tmp_path, env=env, check=False)
        assert done.returncode == (1 if code == 2 else 0), name


def test_the_sarif_upload_cannot_fail_the_job() -> None:
    steps = workflow()["jobs"]["memkeep-status"]["steps"]
    upload = next(s for s in steps if str(s.get("uses", "")).startswith("github/codeql-action/upload-sarif"))
    assert upload["continue-on-error"] is True
