"""Bad input is exit 2, never "internal error" (issue 13, "Exit 3 where exit 2 is right", and the FIFO leftovers of
"Hangs"): a clock variable that is no day or zoned instant, an argument that is not UTF-8, a check holding a NUL,
a 5,000-character id or path, JSON nested 100,000 deep, an instant in the year 9999, a record that is a socket, and
a file or folder of the wrong kind where memzoi or memkeep keeps its state, or where ``integrate`` reads.

Each case runs in-process (CliRunner: text, then ``--json``) and as a subprocess (with a timeout, for the real exit
code): exit 2, one line on stderr, the stable code, and the working tree byte-identical afterwards.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from git_memzoi.memzoi.layout import Layout
from tests.support import hostile
from tests.support.repos import PINNED, PROJECT, TODAY, Repo, entry_text, invoke, tree

LONG = "a" * 5000
BAD_UTF8 = os.fsdecode(b"t\xff")  # what Python makes of a non-UTF-8 argv byte: a lone surrogate
PROPOSE = ("propose", "--title", "Sign tags", "--body", "Sign release tags.", "--sensitivity", "repo-safe", "--apply")

Plant = Callable[[Path, contextlib.ExitStack], None]


@dataclass(frozen=True)
class Case:
    """One bad input: which tool, its arguments (without ``-C``), extra environment, what to plant, the code."""

    tool: str  # memzoi | memkeep
    args: tuple[str, ...]
    code: str
    env: dict[str, str] = field(default_factory=dict)
    plant: Plant | None = None


def _nothing(_root: Path, _stack: contextlib.ExitStack) -> None:
    return None


def _entry(root: Path, _stack: contextlib.ExitStack, run: str) -> None:
    """Give entry ``one`` a check whose command is ``run``."""
    path = root / "agent-memory" / "entries" / "one.md"
    head, body = path.read_text(encoding="utf-8").split("\n---\n", 1)
    path.write_text(f"{head}\ncheck:\n  run: {json.dumps(run)}\n  safe: true\n---\n{body}", encoding="utf-8")


def _replace(rel: str, make: str) -> Plant:
    """Put a folder (``dir``), a file (``file``), a socket or a FIFO (with its watchdog) at ``rel``."""

    def plant(root: Path, stack: contextlib.ExitStack) -> None:
        path = root / rel
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        elif path.exists():
            path.unlink()
        path.parent.mkdir(parents=True, exist_ok=True)
        if make == "dir":
            path.mkdir()
        elif make == "file":
            path.write_text("not what belongs here\n")
        elif make == "fifo":
            stack.enter_context(_watched_fifo(path))
        else:  # a socket: bound by a relative name, since a tmp_path address can pass the 108-byte limit
            here = Path.cwd()
            os.chdir(path.parent)
            try:
                server = socket.socket(socket.AF_UNIX)
                server.bind(path.name)
                stack.callback(server.close)
            finally:
                os.chdir(here)

    return plant


@contextlib.contextmanager
def _watched_fifo(path: Path) -> Iterator[None]:
    with hostile.fifo(path) as made:
        yield
    assert not made.fired, f"a reader blocked on the FIFO {path.name}"


def _write(rel: str, text: str) -> Plant:
    def plant(root: Path, _stack: contextlib.ExitStack) -> None:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")

    return plant


def _corpus(kind: str) -> Plant:
    """The project's own eval corpus, copied into the repository with ``evaluated_at`` in the year 9999."""

    def plant(root: Path, _stack: contextlib.ExitStack) -> None:
        target = root / "corpus" / kind
        shutil.copytree(PROJECT / "evals" / kind, target)
        text = (target / "corpus.yaml").read_text(encoding="utf-8")
        lines = [
            "evaluated_at: '9999-12-31T23:59:59Z'" if line.startswith("evaluated_at:") else line
            for line in text.splitlines()
        ]
        (target / "corpus.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")

    return plant


CASES: dict[str, Case] = {
    # the clock, checked once where it is made (core/clock.py)
    "today-garbage-memzoi": Case("memzoi", ("search", "tags"), "invalid_clock", {"MEMZOI_TODAY": "garbage"}),
    "today-garbage-memkeep": Case("memkeep", ("status",), "invalid_clock", {"MEMZOI_TODAY": "garbage"}),
    "today-month-13-memzoi": Case("memzoi", PROPOSE, "invalid_clock", {"MEMZOI_TODAY": "2026-13-01"}),
    "today-month-13-memkeep": Case("memkeep", ("status",), "invalid_clock", {"MEMZOI_TODAY": "2026-13-01"}),
    "now-garbage": Case("memzoi", PROPOSE, "invalid_clock", {"MEMZOI_NOW": "garbage"}),
    "now-without-zone": Case("memzoi", PROPOSE, "invalid_clock", {"MEMZOI_NOW": "2026-07-10T12:00:00"}),
    "now-year-9999": Case(
        "memzoi", ("context", "--task", "tags"), "invalid_clock", {"MEMZOI_NOW": "9999-12-31T23:59:59Z"}
    ),
    # arguments
    "relation-bad-role": Case("memzoi", (*PROPOSE, "--relation", "Depends=sign-tags"), "invalid_relation"),
    "relation-no-equals": Case("memzoi", (*PROPOSE, "--relation", "depends_on"), "invalid_relation"),
    "relation-owns-absolute": Case("memzoi", (*PROPOSE, "--relation", "owns=/etc/**"), "invalid_relation"),
    "related-missing": Case("memzoi", ("related", "no-such-record"), "target_not_found"),
    "related-bad-role": Case("memzoi", ("related", "sign-tags", "--role", "Bad"), "invalid_relation"),
    "check-run-nul": Case("memkeep", ("verify", "one"), "check_format", plant=lambda r, s: _entry(r, s, "a\0b")),
    "title-not-utf8": Case("memzoi", ("propose", "--title", BAD_UTF8, "--body", "b", "--apply"), "invalid_argument"),
    "task-not-utf8": Case("memzoi", ("context", "--task", BAD_UTF8), "invalid_argument"),
    "memkeep-id-not-utf8": Case("memkeep", ("verify", BAD_UTF8), "invalid_argument"),
    "memkeep-store-env-not-utf8": Case("memkeep", ("status",), "invalid_environment", {"MEMKEEP_STORE": BAD_UTF8}),
    # a prefix of a record's id, where a command that changes a record takes the whole id
    "tombstone-prefix": Case("memzoi", ("tombstone", "sign", "--reason", "gone"), "target_missing"),
    "supersede-prefix": Case(
        "memzoi", ("supersede", "sign", "--title", "t", "--body", "b", "--sensitivity", "repo-safe"), "target_missing"
    ),
    "verify-prefix": Case("memzoi", ("verify", "sign", "--manual"), "unknown_record"),
    "id-5000-memzoi": Case("memzoi", ("expiry", LONG), "invalid_id"),
    "id-5000-tombstone": Case("memzoi", ("tombstone", LONG, "--reason", "gone"), "invalid_id"),
    "id-5000-memkeep": Case("memkeep", ("verify", LONG), "invalid_id"),
    "checkpoint-5000": Case("memzoi", ("session-end", "--from-checkpoint", LONG), "invalid_id"),
    "store-5000": Case("memkeep", ("--store", LONG, "status"), "name_too_long"),
    "directory-5000": Case("memzoi", ("-C", LONG, "search", "tags"), "name_too_long"),
    # documents
    "request-100000-deep": Case(
        "memzoi",
        ("capture", "plan", "--request-file", "{root}/deep.json"),
        "invalid_capture_request",
        plant=_write("deep.json", hostile.deep_json()),
    ),
    "manifest-100000-deep": Case(
        "memzoi",
        ("import", "plan", "--from-file", "{root}/deep.json"),
        "invalid_import_manifest",
        plant=_write("deep.json", hostile.deep_json()),
    ),
    "recall-evaluated-at-9999": Case(
        "memzoi",
        ("eval", "recall", "--corpus", "{root}/corpus/recall/corpus.yaml"),
        "corpus_invalid_value",
        plant=_corpus("recall"),
    ),
    "capture-evaluated-at-9999": Case(
        "memzoi",
        ("eval", "capture", "--corpus", "{root}/corpus/capture/corpus.yaml"),
        "corpus_invalid_value",
        plant=_corpus("capture"),
    ),
    # paths of the wrong kind
    "record-socket": Case(
        "memzoi",
        ("expiry", "sign-tags"),
        "not_a_regular_file",
        plant=_replace(".memzoi/records/sign-tags.md", "socket"),
    ),
    "index-md-folder": Case(
        "memkeep", ("index",), "not_a_regular_file", plant=_replace("agent-memory/INDEX.md", "dir")
    ),
    "index-md-folder-fix": Case(
        "memkeep", ("lint", "--fix"), "not_a_regular_file", plant=_replace("agent-memory/INDEX.md", "dir")
    ),
    "local-file": Case("memzoi", PROPOSE, "bad_layout", plant=_replace(".memzoi/local", "file")),
    "local-file-search": Case("memzoi", ("search", "tags"), "bad_layout", plant=_replace(".memzoi/local", "file")),
    "index-sqlite-folder": Case(
        "memzoi", ("search", "tags"), "not_a_regular_file", plant=_replace(".memzoi/local/index.sqlite", "dir")
    ),
    "events-folder": Case(
        "memzoi", ("rebuild",), "not_a_regular_file", plant=_replace(".memzoi/local/events.jsonl", "dir")
    ),
    "lock-folder": Case("memzoi", PROPOSE, "not_a_regular_file", plant=_replace(".memzoi/local/lifecycle.lock", "dir")),
    "inbox-file": Case("memzoi", PROPOSE, "bad_layout", plant=_replace(".memzoi/local/inbox", "file")),
    "transactions-file": Case("memzoi", PROPOSE, "bad_layout", plant=_replace(".memzoi/local/transactions", "file")),
    # the same in the git directory's private folders (Layout.private, Layout.derived)
    "private-file": Case("memzoi", PROPOSE, "bad_layout", plant=_replace(".git/memzoi/local", "file")),
    "private-index-folder": Case(
        "memzoi", ("search", "tags"), "not_a_regular_file", plant=_replace(".git/memzoi/worktree/index.sqlite", "dir")
    ),
    "private-events-folder": Case(
        "memzoi", ("rebuild",), "not_a_regular_file", plant=_replace(".git/memzoi/local/events.jsonl", "dir")
    ),
    "private-lock-folder": Case(
        "memzoi", PROPOSE, "not_a_regular_file", plant=_replace(".git/memzoi/local/lifecycle.lock", "dir")
    ),
    "private-inbox-file": Case("memzoi", PROPOSE, "bad_layout", plant=_replace(".git/memzoi/local/inbox", "file")),
    "private-transactions-file": Case(
        "memzoi", PROPOSE, "bad_layout", plant=_replace(".git/memzoi/worktree/transactions", "file")
    ),
    # what integrate reads (FIFOs: they hung before)
    "agents-md-fifo": Case(
        "memzoi",
        ("integrate", "instructions", "--profile", "codex"),
        "unreadable_file",
        plant=_replace("AGENTS.md", "fifo"),
    ),
    "claude-md-fifo": Case(
        "memzoi",
        ("integrate", "instructions", "--profile", "claude"),
        "unreadable_file",
        plant=_replace("CLAUDE.md", "fifo"),
    ),
    "settings-fifo": Case(
        "memzoi",
        ("integrate", "install", "--profile", "claude-code"),
        "malformed_settings",
        plant=_replace(".claude/settings.json", "fifo"),
    ),
    "settings-100000-deep": Case(
        "memzoi",
        ("integrate", "install", "--profile", "claude-code"),
        "malformed_settings",
        plant=_write(".claude/settings.json", hostile.deep_json()),
    ),
}


@pytest.fixture
def project(repo: Repo) -> Repo:
    """A repository with a memkeep store (entry ``one``, INDEX.md) and a memzoi memory (record ``sign-tags``)."""
    repo.commit("start", **{"src/app.py": "x = 1\n"})
    repo.write("agent-memory/entries/one.md", entry_text("one", anchor=repo.head(), scope=["src/**"]))
    assert memkeep_cli(repo, "index").exit_code == 0
    assert memzoi_cli(repo, "init").exit_code == 0
    assert memzoi_cli(repo, *PROPOSE).exit_code == 0
    repo.commit("memory")
    return repo


def memzoi_cli(repo: Repo, *args: str, env: dict[str, str] | None = None, codes: tuple[int, ...] = (0, 1, 2)) -> object:
    from git_memzoi.cli.memzoi import cli

    env = {**PINNED, **(env or {})}
    return invoke(cli, ["-C", str(repo.root), *args], env=env, exit_codes=codes, prog_name="git-memzoi")


def memkeep_cli(
    repo: Repo, *args: str, env: dict[str, str] | None = None, codes: tuple[int, ...] = (0, 1, 2)
) -> object:
    from git_memzoi.cli.memkeep import cli

    env = {"MEMZOI_TODAY": TODAY, **(env or {})}
    return invoke(cli, ["-C", str(repo.root), *args], env=env, exit_codes=codes, prog_name="git-memkeep")


def _args(repo: Repo, case: Case) -> list[str]:
    return [a.replace("{root}", str(repo.root)) for a in case.args]


def _in_process(repo: Repo, case: Case, *extra: str) -> object:
    run = memzoi_cli if case.tool == "memzoi" else memkeep_cli
    return run(repo, *_args(repo, case), *extra, env=case.env, codes=(2,))


def _subprocess(repo: Repo, case: Case) -> subprocess.CompletedProcess[bytes]:
    entry = "git_memzoi.cli.memzoi" if case.tool == "memzoi" else "git_memzoi.cli.memkeep"
    command = [sys.executable, "-c", f"from {entry} import main; main()", "-C", str(repo.root)]
    env = {**os.environ, **PINNED, "MEMZOI_TODAY": TODAY, **case.env}
    if case.tool == "memzoi" and "MEMZOI_TODAY" not in case.env:
        env.pop("MEMZOI_TODAY")  # the memzoi day follows MEMZOI_NOW
    args = [*command, *(os.fsencode(a) for a in _args(repo, case))]  # a lone surrogate goes back to its byte
    return subprocess.run(args, cwd=repo.root, env=env, capture_output=True, timeout=120, check=False)


@pytest.mark.parametrize("name", sorted(CASES))
def test_bad_input_is_exit_2_with_one_line_a_code_and_nothing_written(project: Repo, name: str) -> None:
    case = CASES[name]
    with contextlib.ExitStack() as stack:
        (case.plant or _nothing)(project.root, stack)
        before = tree(project.root)
        text = _in_process(project, case)
        as_json = _in_process(project, case, "--json")
        proc = _subprocess(project, case)
        after = tree(project.root)
    prog = "git-memzoi" if case.tool == "memzoi" else "git-memkeep"
    for stderr in (text.stderr, as_json.stderr, proc.stderr.decode("utf-8", "replace")):  # type: ignore[attr-defined]
        assert stderr.startswith(f"{prog}: error: ") and stderr.count("\n") == 1, stderr
        assert "internal error" not in stderr and len(stderr) < 400, stderr
    assert json.loads(as_json.stdout)["error"]["code"] == case.code  # type: ignore[attr-defined]
    assert proc.returncode == 2, proc.stderr
    assert after == before


def test_a_propose_apply_on_a_broken_local_folder_leaves_no_pending_packet(project: Repo) -> None:
    """The drill's worst case: ``propose --apply`` wrote its packet, then failed on the transaction folder."""
    _replace(".git/memzoi/worktree/transactions", "file")(project.root, contextlib.ExitStack())
    assert memzoi_cli(project, *PROPOSE, codes=(2,)).exit_code == 2
    assert list((project.root / ".memzoi" / "proposals" / "pending").iterdir()) == []
    assert len(list(Layout(project.root).inbox.iterdir())) == 1  # the fixture's own proposal


@pytest.mark.parametrize(
    ("index", "inbox"),
    [
        (".git/memzoi/worktree/index.sqlite", ".git/memzoi/local/inbox"),
        (".memzoi/local/index.sqlite", ".memzoi/local/inbox"),  # an older version's folder, not migrated yet
    ],
)
def test_doctor_names_what_is_of_the_wrong_kind_in_local(project: Repo, index: str, inbox: str) -> None:
    _replace(index, "dir")(project.root, contextlib.ExitStack())
    _replace(inbox, "file")(project.root, contextlib.ExitStack())
    result = memzoi_cli(project, "doctor", "--json", codes=(1,))
    checks = {c["name"]: c for c in json.loads(result.stdout)["checks"]}  # type: ignore[attr-defined]
    assert checks["local"]["status"] == "fail"
    assert checks["local"]["message"] == (
        f"{inbox}: a regular file, not a folder; {index}: a directory, not a regular file"
    )


def test_an_entry_file_name_that_is_not_utf8_is_one_unreadable_entry(project: Repo) -> None:
    """Not a command failure: like any broken entry file it is listed (lint, index) while the others are read."""
    name = os.path.join(os.fsencode(project.root / "agent-memory" / "entries"), b"bad\xff.md")
    Path(os.fsdecode(name)).write_text(entry_text("bad", anchor=project.head()), encoding="utf-8")
    index = memkeep_cli(project, "index", "--json", codes=(1,))  # the others indexed, the one left out named
    lint = memkeep_cli(project, "lint", "--json", codes=(1,))
    assert [(u["path"], u["code"]) for u in json.loads(index.stdout)["unreadable"]] == [  # type: ignore[attr-defined]
        ("agent-memory/entries/bad\\xff.md", "bad_file_name")
    ]
    assert "bad" not in (project.root / "agent-memory" / "INDEX.md").read_text()
    violations = json.loads(lint.stdout)["violations"]  # type: ignore[attr-defined]
    assert [(v["path"], v["message"]) for v in violations] == [
        ("agent-memory/entries/bad\\xff.md", "the file name is not valid UTF-8; rename it")
    ]


def test_a_title_whose_slug_passes_a_file_name_is_applied_under_a_shorter_id(project: Repo) -> None:
    title = "abcd " * 59  # 295 characters: valid, but its full slug made a 298-byte file name (ENAMETOOLONG)
    result = memzoi_cli(project, "propose", "--title", title, "--body", "b", "--sensitivity", "repo-safe", "--apply")
    assert result.exit_code == 0, result.stderr  # type: ignore[attr-defined]
    names = sorted(p.name for p in (project.root / ".memzoi" / "records").iterdir())
    made = [n for n in names if n.startswith("abcd-")]  # the slug cut to 119 characters, then the id suffix
    assert len(made) == 1 and made[0][: -len("-123456.md")] == "-".join(["abcd"] * 24), names


@pytest.mark.parametrize(
    ("rel", "args"),
    [
        (".pre-commit-config.yaml", ("hooks", "status")),
        (".git/hooks/pre-commit", ("hooks", "status")),
        (".git/hooks/pre-commit", ("hooks", "install")),
        (".husky/pre-commit", ("hooks", "status")),
        (".git/memzoi/cache/secret-shapes.json", ("search", "tags")),
        (".git/memzoi/cache/secret-shapes.json", PROPOSE[:-1]),
    ],
)
def test_a_fifo_where_hooks_or_the_secret_scanner_read_never_blocks(
    project: Repo, rel: str, args: tuple[str, ...]
) -> None:
    with contextlib.ExitStack() as stack:
        _replace(rel, "fifo")(project.root, stack)
        result = memzoi_cli(project, *args, codes=(0, 1))
        proc = _subprocess(project, Case("memzoi", args, ""))
    assert "internal error" not in result.stderr  # type: ignore[attr-defined]
    assert proc.returncode in (0, 1), proc.stderr


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("request-100000-deep", "deep.json: nested deeper than 100 levels"),
        ("manifest-100000-deep", "deep.json: not valid JSON: nested deeper than 100 levels"),
    ],
)
def test_json_nested_too_deep_says_so(project: Repo, name: str, message: str) -> None:
    case = CASES[name]
    with contextlib.ExitStack() as stack:
        (case.plant or _nothing)(project.root, stack)
        result = _in_process(project, case)
    assert result.stderr == f"git-memzoi: error: {message}\n"  # type: ignore[attr-defined]


def test_a_usage_error_listing_choices_reads_as_one_plain_line(repo: Repo) -> None:
    from git_memzoi.cli.memzoi import cli

    result = invoke(cli, ["-C", str(repo.root), "export", "--json"])
    assert result.exit_code == 2
    assert result.stderr == (  # in-process the program is named after the click command
        "cli: error: Missing argument 'FORMAT'. Choose from: okf, agents-md, claude-md (see cli export -h)\n"
    )
    assert json.loads(result.stdout)["error"]["code"] == "bad_usage"


def test_a_prefix_given_to_a_command_that_changes_a_record_names_the_ids_it_may_mean(project: Repo) -> None:
    """``show`` resolves a prefix; ``tombstone``, ``supersede`` and ``verify`` take the whole id, and say which
    ids start so (a short id copied from ``show`` was only "does not exist")."""
    record_id = next((project.root / ".memzoi" / "records").glob("sign*.md")).stem
    hint = f"did you mean {record_id}? (give the whole id)"
    expected = {
        "tombstone-prefix": f"tombstone: target record 'sign' does not exist; {hint}",
        "supersede-prefix": f"supersede: target record 'sign' does not exist; {hint}",
        "verify-prefix": f"no record 'sign' in .memzoi/records/; {hint}",
        "unrelated": "tombstone: target record 'zzz' does not exist",
        # cut after a '-': no id at all (bad_id), yet plainly a copied prefix
        "tombstone-dash": f"tombstone: target record 'sign-' does not exist; {hint}",
        "verify-dash": "record id 'sign-': segment 'sign-' must be lowercase ASCII letters, digits and '-', "
        f"starting and ending alphanumeric; {hint}",
    }
    cases = {
        **{name: CASES[name].args for name in expected if name in CASES},
        "unrelated": ("tombstone", "zzz", "--reason", "x"),
        "tombstone-dash": ("tombstone", "sign-", "--reason", "x"),
        "verify-dash": ("verify", "sign-"),
    }
    messages = {
        name: json.loads(memzoi_cli(project, *args, "--json", codes=(2,)).stdout)["error"]["message"]  # type: ignore[attr-defined]
        for name, args in cases.items()
    }
    assert messages == expected
