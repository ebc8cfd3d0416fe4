"""The approval policy by who proposes (issue 15): a human on the CLI keeps default ``auto``; an agent (MCP,
hooks) defaults to ``manual`` and may be opted in only by a human's config, never by its own override."""

from __future__ import annotations

from pathlib import Path

import pytest

from git_memzoi.errors import InputError
from git_memzoi.memzoi.records import policy
from git_memzoi.memzoi.records.policy import ApprovalPolicy, PolicyError

BOTH = '[workflow]\nproposal_approval = "manual"\nagent_proposal_approval = "auto"\n'


def config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(text, "utf-8")
    return path


@pytest.mark.parametrize(
    ("text", "kind", "override", "expected"),
    [
        ("", "human", None, ("auto", "default")),
        ("", "agent", None, ("manual", "default")),
        ('[workflow]\nproposal_approval = "auto"\n', "agent", None, ("manual", "default")),  # the human key only
        (BOTH, "human", None, ("manual", "repo")),
        (BOTH, "agent", None, ("auto", "repo")),
        (BOTH, "agent", "manual", ("manual", "override")),
        ("", "human", "auto", ("auto", "override")),
    ],
)
def test_policy_table(tmp_path: Path, text: str, kind: str, override: str | None, expected: tuple[str, str]) -> None:
    repo_config = config(tmp_path, text)
    got = policy.resolve(repo_config, None, override, actor_kind=kind)
    path = str(repo_config) if expected[1] == "repo" else None
    assert got == ApprovalPolicy(*expected, path)


def test_an_agent_never_overrides_towards_auto(tmp_path: Path) -> None:
    with pytest.raises(InputError) as info:
        policy.resolve(config(tmp_path, BOTH), None, "auto", actor_kind="agent")
    assert info.value.code == "agent_self_approval"
    with pytest.raises(InputError) as bad:
        policy.resolve(config(tmp_path, ""), None, None, actor_kind="robot")
    assert bad.value.code == "invalid_actor_kind"


def test_the_agent_key_is_validated_for_humans_too(tmp_path: Path) -> None:
    with pytest.raises(PolicyError) as info:
        policy.resolve(config(tmp_path, '[workflow]\nagent_proposal_approval = "sometimes"\n'), None)
    assert info.value.message.endswith(
        """[workflow] agent_proposal_approval must be "auto" or "manual", not 'sometimes'"""
    )
