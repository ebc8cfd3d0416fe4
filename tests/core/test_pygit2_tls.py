"""pygit2's import hands OpenSSL's certificate locations to libgit2 and fails when none exists; this tool never
speaks TLS through libgit2, so it loads pygit2 anyway and leaves the environment as it was
(``gitview_pygit2.load_pygit2``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.support.repos import Repo, entry_text

LOAD = """
import json, os, sys
if sys.argv[1] == "no-store":  # a machine without a certificate store: only an explicit SSL_CERT_DIR exists
    import ssl
    found = ssl.get_default_verify_paths
    ssl.get_default_verify_paths = lambda: found()._replace(
        cafile=None, capath=os.environ.get("SSL_CERT_DIR") if os.path.isdir(os.environ.get("SSL_CERT_DIR", "")) else None
    )
from git_memzoi.core.gitview_pygit2 import load_pygit2
pygit2 = load_pygit2()
print(json.dumps({"libgit2": pygit2.LIBGIT2_VERSION, "env": {k: os.environ.get(k) for k in ("SSL_CERT_FILE", "SSL_CERT_DIR")}}))
"""
MISSING = {"SSL_CERT_FILE": "/nonexistent/ca.pem", "SSL_CERT_DIR": "/nonexistent/certs"}


def load(case: str, extra: dict[str, str]) -> dict[str, object]:
    env = {k: v for k, v in os.environ.items() if k not in MISSING} | extra
    proc = subprocess.run([sys.executable, "-c", LOAD, case], env=env, capture_output=True, text=True, check=True)
    found: dict[str, object] = json.loads(proc.stdout)
    return found


def test_plain_pygit2_fails_where_both_locations_are_missing() -> None:
    env = {**os.environ, **MISSING}
    proc = subprocess.run([sys.executable, "-c", "import pygit2"], env=env, capture_output=True, text=True)
    assert proc.returncode == 1 and "failed to load certificates" in proc.stderr  # what load_pygit2 works around


def test_missing_locations_in_the_environment_are_set_aside_for_the_import() -> None:
    found = load("system", MISSING)
    assert found["libgit2"]
    assert found["env"] == MISSING  # restored: a check command run later sees the user's environment


def test_a_machine_without_a_certificate_store_still_loads_pygit2() -> None:
    found = load("no-store", {})
    assert found["libgit2"]
    assert found["env"] == {"SSL_CERT_FILE": None, "SSL_CERT_DIR": None}


def test_status_works_with_a_broken_tls_environment(repo: Repo, tmp_path: Path) -> None:
    anchor = repo.commit("code", **{"src/app.py": "x = 1\n"})
    repo.commit("memory", **{"agent-memory/entries/app.md": entry_text("app", anchor=anchor, scope=["src/app.py"])})
    repo.commit("change", **{"src/app.py": "x = 2\n"})
    env = {**os.environ, **MISSING}
    memkeep = Path(sys.executable).with_name("git-memkeep")
    proc = subprocess.run(
        [str(memkeep), "status", "--json"], cwd=repo.root, env=env, capture_output=True, text=True, check=False
    )
    assert (proc.returncode, proc.stderr) == (1, "")
    assert [v["id"] for v in json.loads(proc.stdout)["verdicts"]] == ["app"]
