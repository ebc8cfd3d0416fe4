"""Eight agents in eight linked worktrees write memory at the same moment (issue 16): every worktree's writes go
through the one lifecycle lock in the git common directory, so no private record is lost, no id is handed out
twice and the shared event log holds one whole JSON line per write."""

from __future__ import annotations

import json
import os
import subprocess
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
