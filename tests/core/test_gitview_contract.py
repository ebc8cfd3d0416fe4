"""The RepoView contract: the fake and the pygit2 view give the same answers, exactly, on the same histories.

Each test runs twice, on a ``FakeRepoView`` and on a real repository (``tests/support/scenario.py`` builds both
from one spec), over the methods the staleness core asks (memkeep/staleness.py): ``head``, ``is_shallow``,
``anchor_states``, ``changed_since`` (and ``changed_files``, what it is defined by) and ``path_exists``.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from pathlib import Path

import pytest

from git_memzoi.core.gitview import AnchorState
from tests.support.scenario import BUILDERS, Built, Commit, Scenario

A = AnchorState
Build = Callable[[Scenario], Built]

# A history with a side branch merged back, a rename, a revert to an earlier blob, a commit dated before its
# parent (clock skew), a file replaced by a folder of the same name, a commit after HEAD and one never merged.
HISTORY = Scenario(
    (
        Commit(
            "root",
            "2026-01-01",
            write={"README.md": "# Demo\n", "src/app.py": "v1\n", "src/util.py": "u1\n", "docs/guide.md": "guide\n"},
        ),
        Commit("edit", "2026-01-02", write={"src/app.py": "v2\n"}),
        Commit("side", "2026-01-03", parents=("edit",), write={"src/side.py": "side\n", "docs/café.md": "menu\n"}),
        Commit("move", "2026-01-03", parents=("edit",), write={"docs/manual.md": "guide\n"}, delete=("docs/guide.md",)),
        Commit(
            "merge", "2026-01-04", parents=("move", "side"), write={"src/side.py": "side\n", "docs/café.md": "menu\n"}
        ),
        Commit("skewed", "2025-12-30", write={"src/app.py": "v1\n"}),
        Commit("swap", "2026-01-05", write={"src/util/__init__.py": "u2\n"}, delete=("src/util.py",)),
        Commit("later", "2026-01-06", write={"src/app.py": "v3\n"}),
        # the message makes this commit's id share its first four hex digits with side's (found by trying)
        Commit("stray", "2026-01-07", parents=("root",), write={"notes.txt": "n\n"}, message="stray 26555"),
    ),
    head="swap",
)
ANCESTORS = ("root", "edit", "side", "move", "merge", "skewed", "swap")
# what changed between each commit and HEAD (swap)
CHANGED = {
    "root": ["docs/café.md", "docs/guide.md", "docs/manual.md", "src/side.py", "src/util.py", "src/util/__init__.py"],
    "edit": [
        "docs/café.md",
        "docs/guide.md",
        "docs/manual.md",
        "src/app.py",
        "src/side.py",
        "src/util.py",
        "src/util/__init__.py",
    ],
    "side": ["docs/guide.md", "docs/manual.md", "src/app.py", "src/util.py", "src/util/__init__.py"],
    "move": ["docs/café.md", "src/app.py", "src/side.py", "src/util.py", "src/util/__init__.py"],
    "merge": ["src/app.py", "src/util.py", "src/util/__init__.py"],
    "skewed": ["src/util.py", "src/util/__init__.py"],
    "swap": [],
    "later": ["src/app.py"],
    "stray": [
        "docs/café.md",
        "docs/guide.md",
        "docs/manual.md",
        "notes.txt",
        "src/side.py",
        "src/util.py",
        "src/util/__init__.py",
    ],
}
SHALLOW = Scenario(
    (
        Commit("c1", "2026-02-01", write={"a.txt": "1\n"}),
        Commit("c2", "2026-02-02", write={"a.txt": "2\n", "b/c.txt": "c\n"}),
        Commit("c3", "2026-02-03", write={"a.txt": "3\n"}),
        Commit("c4", "2026-02-04", write={"d.txt": "d\n"}, delete=("b/c.txt",)),
    ),
    depth=2,
)
NFD = unicodedata.normalize("NFD", "docs/café.md")
DECOMPOSED = Scenario(  # a file name written in NFD (as macOS spells it); its one spelling is NFC (BR-23)
    (
        Commit("first", "2026-03-01", write={NFD: "1\n", "x.txt": "x\n"}),
        Commit("second", "2026-03-02", write={NFD: "2\n"}),
    )
)


@pytest.fixture(params=sorted(BUILDERS))
def build(request: pytest.FixtureRequest, tmp_path: Path) -> Build:
    """Builds a scenario as a ``FakeRepoView`` ("fake") or as a real repository opened with pygit2 ("git")."""
    return lambda scenario: BUILDERS[request.param](scenario, tmp_path)


def test_both_views_name_the_same_commits(build: Build) -> None:
    built = build(HISTORY)
    assert built.ids == HISTORY.ids()
    assert built.ids["stray"][:4] == built.ids["side"][:4] and built.ids["stray"][4] != built.ids["side"][4]


# ------------------------------------------------------------------------------------------------ head, shallow


def test_head_and_shallowness(build: Build) -> None:
    history, shallow, empty = build(HISTORY), build(SHALLOW), build(Scenario())
    assert (history.view.head(), history.view.is_shallow()) == (history.ids["swap"], False)
    assert (shallow.view.head(), shallow.view.is_shallow()) == (shallow.ids["c4"], True)
    assert (empty.view.head(), empty.view.is_shallow()) == (None, False)


# ------------------------------------------------------------------------------------------------ anchor states


def test_every_commit_is_placed_against_head(build: Build) -> None:
    built = build(HISTORY)
    ids = built.ids
    states = built.view.anchor_states(ids.values())
    assert states == {
        **{ids[name]: (A.ANCESTOR, ids[name]) for name in ANCESTORS},
        ids["later"]: (A.NOT_ANCESTOR, ids["later"]),
        ids["stray"]: (A.NOT_ANCESTOR, ids["stray"]),
    }


def test_abbreviated_and_unknown_ids(build: Build) -> None:
    built = build(HISTORY)
    ids = built.ids
    revs = {
        "seven": ids["edit"][:7],
        "upper": ids["move"].upper(),
        "twelve": ids["stray"][:12],
        "shared": ids["side"][:4],
        "five": ids["side"][:5],
        "zeros": "0" * 40,
        "longer": ids["swap"] + "00",
    }
    states = built.view.anchor_states(revs.values())
    assert {name: states[rev] for name, rev in revs.items()} == {
        "seven": (A.ANCESTOR, ids["edit"]),
        "upper": (A.ANCESTOR, ids["move"]),
        "twelve": (A.NOT_ANCESTOR, ids["stray"]),
        "shared": (A.AMBIGUOUS, None),
        "five": (A.ANCESTOR, ids["side"]),
        "zeros": (A.MISSING, None),
        "longer": (A.MISSING, None),
    }


def test_names_that_are_not_ids_name_no_commit(build: Build) -> None:
    built = build(HISTORY)
    states = built.view.anchor_states(["HEAD", "main", "swap", "v1.0", ""])
    assert states == {rev: (A.NOT_COMMIT, None) for rev in ("HEAD", "main", "swap", "v1.0", "")}


def test_a_shallow_clone_lacks_the_commits_below_its_depth(build: Build) -> None:
    built = build(SHALLOW)
    ids = built.ids
    states = built.view.anchor_states([*ids.values(), "f" * 40])
    assert states == {
        ids["c1"]: (A.SHALLOW, None),
        ids["c2"]: (A.SHALLOW, None),
        ids["c3"]: (A.ANCESTOR, ids["c3"]),
        ids["c4"]: (A.ANCESTOR, ids["c4"]),
        "f" * 40: (A.SHALLOW, None),
    }


def test_without_commits_every_rev_meets_no_head(build: Build) -> None:
    built = build(Scenario())
    assert built.view.anchor_states(["HEAD", "0" * 40]) == {"HEAD": (A.NO_HEAD, None), "0" * 40: (A.NO_HEAD, None)}


# ------------------------------------------------------------------------------------------------ changed files


@pytest.mark.parametrize("base", sorted(CHANGED))
def test_changed_files_against_head(build: Build, base: str) -> None:
    built = build(HISTORY)
    head = built.ids["swap"]
    assert built.view.changed_files(built.ids[base], head) == CHANGED[base]
    assert built.view.changed_files(head, built.ids[base]) == CHANGED[base]


def test_changed_since_answers_every_base_at_once_in_any_order(build: Build) -> None:
    built = build(HISTORY)
    ids, head = built.ids, built.ids["swap"]
    want = {ids[name]: frozenset(files) for name, files in CHANGED.items()}
    for order in (sorted(CHANGED), sorted(CHANGED, reverse=True), ["skewed", "root", "later", "merge"]):
        bases = [ids[name] for name in order]
        assert built.view.changed_since(bases, head) == {base: want[base] for base in bases}
    assert built.view.changed_since([ids["root"], ids["root"]], head) == {ids["root"]: want[ids["root"]]}
    assert built.view.changed_since([ids["edit"]], head) == {ids["edit"]: want[ids["edit"]]}  # again, cached


def test_changed_files_in_a_shallow_clone(build: Build) -> None:
    built = build(SHALLOW)
    ids = built.ids
    assert built.view.changed_files(ids["c3"], ids["c4"]) == ["b/c.txt", "d.txt"]
    assert built.view.changed_since([ids["c3"], ids["c4"]], ids["c4"]) == {
        ids["c3"]: frozenset({"b/c.txt", "d.txt"}),
        ids["c4"]: frozenset(),
    }


def test_changed_paths_are_spelled_in_nfc(build: Build) -> None:
    built = build(DECOMPOSED)
    first, second = built.ids["first"], built.ids["second"]
    assert built.view.changed_files(first, second) == ["docs/café.md"]
    assert built.view.changed_since([first], second) == {first: frozenset({"docs/café.md"})}


# ------------------------------------------------------------------------------------------------ tree lookups

LOOKUPS = {
    ("swap", "README.md"): True,
    ("swap", "src"): True,  # a folder
    ("swap", "src/"): True,
    ("swap", "/src/app.py"): True,
    ("swap", "src/app.py/"): True,
    ("swap", "src/util"): True,  # the folder that replaced the file
    ("swap", "src/util.py"): False,
    ("root", "src/util.py"): True,
    ("root", "src/util"): False,
    ("edit", "docs/guide.md"): True,
    ("swap", "docs/guide.md"): False,  # renamed away
    ("swap", "docs/manual.md"): True,
    ("swap", "docs/café.md"): True,
    ("swap", NFD): True,  # the other spelling of the same name
    ("swap", "sr"): False,  # a prefix of a name is no folder
    ("swap", "SRC"): False,
    ("swap", "./README.md"): False,
    ("swap", "src//app.py"): False,
    ("swap", ""): False,
    ("swap", "nothing"): False,
    ("later", "notes.txt"): False,
    ("stray", "notes.txt"): True,
}


def test_path_exists(build: Build) -> None:
    built = build(HISTORY)
    got = {(name, path): built.view.path_exists(built.ids[name], path) for name, path in LOOKUPS}
    assert got == LOOKUPS


def test_path_exists_finds_a_decomposed_name_by_either_spelling(build: Build) -> None:
    built = build(DECOMPOSED)
    second = built.ids["second"]
    assert [built.view.path_exists(second, p) for p in (NFD, "docs/café.md", "docs")] == [True, True, True]
