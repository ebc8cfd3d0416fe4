"""ADR capture over the real ADR templates (issue 20): every fixture of ``data/adr`` (adr-tools, adr-tools-python,
MADR 2.1.2/3.0.0/4.0.0, log4brains; see its README) with its exact candidates, the three status forms (a ``##
Status`` section, an inline ``Status:`` line, a front-matter ``status:``) and status placeholders, under extractor
1.1.0; 1.0.0 reads none of the templates."""

from __future__ import annotations

from pathlib import Path

import pytest

from git_memzoi.memzoi.capture import plan as capture
from git_memzoi.memzoi.workspace import Workspace
from tests.memzoi.capture.test_capture_adr import file, request
from tests.support.repos import Repo

TEMPLATES = Path(__file__).parent / "data" / "adr"
PLACEHOLDER_MADR2 = "ADR: [short title of solved problem and solution]"
PLACEHOLDER_MADR4 = "ADR: {short title, representative of solved problem and found solution}"
MADR_RECORDS = "ADR: Use Markdown Architectural Decision Records"

# file → [(memory type, title, status, decision-body opening, destination)] under 1.1.0, or [] (no candidate).
# Filled-in examples keep their real status (MADR's own 0000 records carry none: unknown, for review); a raw
# template's status placeholder ("[proposed | rejected | …]", "{…}", "STATUS", "{DATE} proposed") is unknown, so a
# template is never an accepted decision: its candidates go to review, none is written.
TEMPLATE_CASES: dict[str, list[tuple[str, str, str, str, str]]] = {
    "adr-tools-2.0.4-en.md": [
        ("decision", "ADR: {NUMBER}. {TITLE}", "unknown", 'Chosen option: "[option 1]", because', "needs_review"),
        ("fact", "ADR: {NUMBER}. {TITLE} (consequences)", "unknown", "### Positive Consequences", "needs_review"),
    ],
    "adr-tools-python-1.0.2-template.md": [
        ("decision", "ADR: NUMBER. TITLE", "unknown", "The change that we're proposing", "needs_review"),
        ("fact", "ADR: NUMBER. TITLE (consequences)", "unknown", "What becomes easier or more", "needs_review"),
    ],
    "log4brains-1.1.0-template.md": [
        ("decision", PLACEHOLDER_MADR2, "unknown", 'Chosen option: "[option 1]", because', "needs_review"),
        ("fact", f"{PLACEHOLDER_MADR2} (consequences)", "unknown", "### Positive Consequences", "needs_review"),
    ],
    "log4brains-1.1.0-use-log4brains-to-manage-the-adrs.md": [
        ("decision", "ADR: Use Log4brains to manage the ADRs", "accepted", 'Chosen option: "Log4brains"', "repo"),
    ],
    "log4brains-1.1.0-use-markdown-architectural-decision-records.md": [
        ("decision", MADR_RECORDS, "accepted", 'Chosen option: "MADR 2.1.2 with Log4brains patch"', "repo"),
    ],
    "madr-2.1.2-0000-use-markdown-architectural-decision-records.md": [
        ("decision", MADR_RECORDS, "unknown", 'Chosen option: "MADR 2.1.2", because', "needs_review"),
    ],
    "madr-2.1.2-template.md": [
        ("decision", PLACEHOLDER_MADR2, "unknown", 'Chosen option: "[option 1]", because', "needs_review"),
        ("fact", f"{PLACEHOLDER_MADR2} (consequences)", "unknown", "### Positive Consequences", "needs_review"),
    ],
    "madr-3.0.0-0000-use-markdown-any-decision-records.md": [
        (
            "decision",
            "ADR: Use Markdown Any Decision Records",
            "unknown",
            'Chosen option: "MADR 3.0.0"',
            "needs_review",
        ),
    ],
    "madr-3.0.0-adr-template.md": [
        (
            "decision",
            "ADR: {short title of solved problem and solution}",
            "unknown",
            'Chosen option: "{title of option 1}", because',
            "needs_review",
        ),
        (
            "fact",
            "ADR: {short title of solved problem and solution} (consequences)",
            "unknown",
            "* Good, because {positive consequence",
            "needs_review",
        ),
    ],
    "madr-4.0.0-0000-use-markdown-architectural-decision-records.md": [
        ("decision", MADR_RECORDS, "unknown", 'Chosen option: "MADR 4.0.0", because', "needs_review"),
    ],
    # its title is an HTML comment only: no ADR, one unsupported_adr_content diagnostic
    "madr-4.0.0-adr-template-bare.md": [],
    "madr-4.0.0-adr-template-minimal.md": [
        ("decision", PLACEHOLDER_MADR4, "unknown", 'Chosen option: "{title of option 1}"', "needs_review"),
        ("fact", f"{PLACEHOLDER_MADR4} (consequences)", "unknown", "* Good, because {positive", "needs_review"),
    ],
    "madr-4.0.0-adr-template.md": [
        ("decision", PLACEHOLDER_MADR4, "unknown", 'Chosen option: "{title of option 1}"', "needs_review"),
        ("fact", f"{PLACEHOLDER_MADR4} (consequences)", "unknown", "* Good, because {positive", "needs_review"),
    ],
}


def test_every_template_fixture_has_a_case() -> None:
    assert sorted(p.name for p in TEMPLATES.glob("*.md") if p.name != "README.md") == sorted(TEMPLATE_CASES)


@pytest.mark.parametrize("name", sorted(TEMPLATE_CASES))
def test_real_adr_templates(repo: Repo, ctx: Workspace, name: str) -> None:
    repo.write(f"docs/adr/{name}", (TEMPLATES / name).read_text("utf-8"))
    plan = capture.plan_request(ctx, request(file(f"docs/adr/{name}")))
    got = [
        (
            c["memory"]["type"],
            c["memory"]["title"],
            c["memory"]["tags"][1].removeprefix("adr-status:"),
            c["memory"]["body"],
            c["classification"]["destination"],
        )
        for c in plan["candidates"]
    ]
    want = TEMPLATE_CASES[name]
    assert [(t, ti, s, d) for t, ti, s, _, d in got] == [(t, ti, s, d) for t, ti, s, _, d in want]
    for (*_, body, _dest), (*_, opening, _want) in zip(got, want, strict=True):
        assert body.startswith(opening)
    accepted = [c for c in plan["candidates"] if c["action"]["kind"] == "create_proposal"]
    assert len(accepted) == sum(w[4] == "repo" for w in want)
    expected_diagnostics = [] if want else [1]
    assert [d["line_start"] for d in plan["diagnostics"]] == expected_diagnostics


@pytest.mark.parametrize(
    "name", ["log4brains-1.1.0-use-log4brains-to-manage-the-adrs.md", "madr-4.0.0-adr-template.md"]
)
def test_upstream_v1_reads_no_real_template(repo: Repo, ctx: Workspace, name: str) -> None:
    repo.write(f"docs/adr/{name}", (TEMPLATES / name).read_text("utf-8"))
    plan = capture.plan_request(ctx, request(file(f"docs/adr/{name}"), "1.0.0"))
    assert plan["candidates"] == []
    assert plan["diagnostics"] == [
        {"code": "unsupported_adr_content", "source_id": "adrs", "path": f"docs/adr/{name}", "line_start": 1}
    ]


DECISION = "## Context\nWe need a store.\n\n## Decision\nUse SQLite.\n"


@pytest.mark.parametrize(
    ("text", "status_line"),
    [
        (f"# 1. Use SQLite\n\nStatus: Accepted\n\n{DECISION}", 3),
        (f"# Use SQLite\n\n* Status: accepted\n* Date: 2026-07-01\n\n{DECISION}", 3),
        (f"# Use SQLite\n\n- **Status:** Accepted\n\n{DECISION}", 3),
        (f"---\nstatus: accepted\ndate: 2026-07-01\n---\n\n# Use SQLite\n\n{DECISION}", 2),
        (f'---\nstatus: "accepted"\n---\n\n# Use SQLite\n\n{DECISION}', 2),
        (f"# ADR-0001: Use SQLite\n\n## Status\n\nAccepted\n\n{DECISION}", 3),
    ],
    ids=["inline", "inline-list", "inline-bold", "front-matter", "front-matter-quoted", "section"],
)
def test_three_status_forms_route_an_accepted_decision(repo: Repo, ctx: Workspace, text: str, status_line: int) -> None:
    repo.write("docs/adr/0001-use-sqlite.md", text)
    (c,) = capture.plan_request(ctx, request(file("docs/adr/0001-use-sqlite.md")))["candidates"]
    assert (c["memory"]["title"], c["memory"]["body"], c["memory"]["tags"]) == (
        "ADR: Use SQLite",
        "Use SQLite.",
        ["adr", "adr-status:accepted", "adr-field:decision"],
    )
    assert c["classification"]["destination"] == "repo" and c["action"]["kind"] == "create_proposal"
    assert [e["section_kind"] for e in c["evidence"]] == ["title", "status", "decision"]
    assert c["evidence"][1]["span"]["line_start"] == status_line
    # 1.0.0 reads only '# ADR:' titles with a '## Status' section
    old = capture.plan_request(ctx, request(file("docs/adr/0001-use-sqlite.md"), "1.0.0"))["candidates"]
    assert old == []


@pytest.mark.parametrize(
    "status",
    ["[proposed | rejected | accepted]", "{accepted}", "accepted | rejected", "STATUS"],
)
def test_status_placeholders_are_unknown(repo: Repo, ctx: Workspace, status: str) -> None:
    repo.write("docs/adr/0001.md", f"# Use SQLite\n\n* Status: {status}\n\n{DECISION}")
    (c,) = capture.plan_request(ctx, request(file("docs/adr/0001.md")))["candidates"]
    assert c["memory"]["tags"][1] == "adr-status:unknown" and c["action"]["kind"] == "no_write"
