"""Eight agents in eight linked worktrees write memory at the same moment (issue 16): every worktree's writes go
through the one lifecycle lock in the git common directory, so no private record is lost, no id is handed out
twice and the shared event log holds one whole JSON line per write."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from git_memzoi.memzoi.layout import Layout
from tests.memzoi.runtime.test_private_memory import BIN, as_json, project, worktree
from tests.support import repos

AGENTS = 8
COMMAND = (str(BIN / "git-memzoi"),)
ADD = ("local", "add", "--type", "fact", "--title", "Shared build cache")


def test_eight_worktrees_writing_at_once_lose_nothing(tmp_path: Path) -> None:
    main = project(tmp_path)
    agents = [worktree(main, f"agent-{n}") for n in range(AGENTS)]
    env = {**os.environ, **repos.PINNED}
    started = [
        subprocess.Popen(
            [*COMMAND, "-C", str(agent.root), *ADD, "--body", f"Agent {n} saw the cache warm.", "--json"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for n, agent in enumerate(agents)
    ]
    results = [(p.wait(timeout=120), *p.communicate()) for p in started]
    assert [(code, err) for code, _, err in results] == [(0, "")] * AGENTS
    records = [json.loads(out)["record"] for _, out, _ in results]
    ids = [r["id"] for r in records]
    assert len(set(ids)) == AGENTS  # one title, eight writers: eight distinct ids, none overwritten

    listed = sorted(r["id"] for r in as_json(main, "local", "list")["records"])
    assert listed == sorted(ids)
    folder = Layout(main.root).runtime("local")
    assert sorted(r["body"] for r in records) == [f"Agent {n} saw the cache warm." for n in range(AGENTS)]
    assert all(r["body"] in (folder / f"{r['id']}.md").read_text("utf-8") for r in records)
    lines = Layout(main.root).events.read_text("utf-8").splitlines()
    written = [json.loads(line) for line in lines]  # a torn line would not parse
    created = [e["record_id"] for e in written if e["event_type"] == "memory.local_created"]
    assert sorted(created) == sorted(ids)
    assert len({e["id"] for e in written}) == len(written)  # event ids unique across the worktrees


WORKER = """
import json, sys
from click.testing import CliRunner
from git_memzoi.cli.memzoi import cli
root, agent, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
for i in range(count):
    args = ["-C", root, "propose", "--type", "fact", "--sensitivity", "repo-safe", "--apply", "--json"]
    args += ["--title", f"Agent {agent} fact {i}", "--body", f"Fact {i} seen by agent {agent}."]
    result = CliRunner().invoke(cli, args, env={"MEMZOI_NOW": None})
    assert result.exit_code == 0, result.output
    applied = json.loads(result.stdout)["applied"]
    print(applied["record_id"], applied["file_id"])
"""


def test_eight_worktrees_applying_proposals_at_once_lose_nothing(tmp_path: Path) -> None:
    """Issue 16's drill, at 8 x COUNT (``MEMZOI_DRILL_COUNT``, default 10; the issue's 8 x 100 passes too): one
    process per worktree applies its proposals back to back while the others do."""
    count = int(os.environ.get("MEMZOI_DRILL_COUNT", "10"))
    main = project(tmp_path)
    agents = [worktree(main, f"agent-{n}") for n in range(AGENTS)]
    env = {**os.environ, **repos.PINNED}
    env.pop("MEMZOI_NOW", None)  # real time: events and proposal ids of concurrent writers must still be unique
    started = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, str(agent.root), str(n), str(count)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for n, agent in enumerate(agents)
    ]
    outputs = [p.communicate(timeout=600) for p in started]
    assert [(p.returncode, err) for p, (_, err) in zip(started, outputs, strict=True)] == [(0, "")] * AGENTS
    applied = [line.split() for out, _ in outputs for line in out.splitlines()]
    assert len(applied) == AGENTS * count
    assert len({record for record, _ in applied}) == len({prop for _, prop in applied}) == AGENTS * count
    for n, agent in enumerate(agents):  # each worktree's records are its own files, every one there and whole
        files = sorted((agent.root / ".memzoi" / "records").glob("agent-*.md"))
        assert len(files) == count
        assert all(f"seen by agent {n}." in f.read_text("utf-8") for f in files)
    written = [json.loads(line) for line in Layout(main.root).events.read_text("utf-8").splitlines()]
    done = sorted(e["proposal_id"] for e in written if e["event_type"] == "proposal.applied")
    assert done == sorted(prop for _, prop in applied)
    assert len({e["id"] for e in written}) == len(written)
