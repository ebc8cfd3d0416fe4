"""Scope globs: field reports BR-14 and BR-16, select() against matches(), pattern_problem, and git compat."""

from __future__ import annotations

import subprocess
import unicodedata
from pathlib import Path

import pytest

from git_memzoi.core.globs import Scope, ScopeError, pattern_problem

# BR-14: negation without a trailing slash.


@pytest.mark.parametrize(("path", "expected"), [("build/file.py", True), ("foo/build/file.py", False)])
def test_br14_negation_without_trailing_slash_reincludes_the_directory(path: str, expected: bool) -> None:
    assert Scope(["build", "!/foo/build"]).matches(path) is expected


# BR-16: `**` and directory-only patterns. (glob, path, matches)
BR16 = [
    ("/foo/**/*.html", "foo/index.html", True),
    ("/foo/**/*.html", "foo/bar/index.html", True),
    ("/foo/**/*.html", "x/foo/index.html", False),
    ("a/**/b", "a/b", True),
    ("a/**/b", "a/x/b", True),
    ("a/**/b", "a/x/y/b", True),
    ("a/**/b", "a/bb", False),
    ("foo/**/", "foo/sub/g.txt", True),
    ("foo/**/", "foo/f.txt", False),
    ("docs/", "docs/guide.md", True),
    ("docs/", "sub/docs/x.md", True),
    ("Docs/", "docs/a.md", False),
    ("/infra/helm/*", "infra/helm/values.yaml", True),
    ("/infra/helm/*", "infra/helm/abc/chart.yaml", True),
    ("/README.md", "notes/README.md", False),
    ("a.md ", "a.md", True),
]


@pytest.mark.parametrize(("pattern", "path", "expected"), BR16)
def test_br16_star_star_and_directory_only_patterns(pattern: str, path: str, expected: bool) -> None:
    assert Scope([pattern]).matches(path) is expected


# Brackets, stars and escapes, as git's wildmatch reads them. (glob, path, matches)
WILDMATCH = [
    ("*.md", "notes/x.md", True),
    ("*.md", "x.mdx", False),
    ("/*.md", "notes/x.md", False),
    ("/*.md", "x.md", True),
    ("**/x", "x", True),
    ("**/x", "a/b/x", True),
    ("**/x", "a/xy", False),
    ("**/x/", "a/x/f", True),
    ("**/x/", "a/x", False),
    ("x/**", "x/a/b", True),
    ("x/**", "x", False),
    ("***/x", "a/b/x", True),  # a run of stars is `**`
    ("a/*/c", "a/b/c", True),
    ("a/*/c", "a/b/d/c", False),
    ("*/", "a/f", True),
    ("*/", "f", False),
    ("x?y", "x/y", False),
    ("x*y", "x/y", False),
    ("\\#a", "#a", True),
    ("\\!b", "!b", True),
    ("a\\*b", "a*b", True),
    ("a\\*b", "axb", False),
    ("a\\ ", "a ", True),
    ("a\\  ", "a ", True),  # the escaped space stays, the trailing one goes
    ("?.md", "ab.md", False),
    ("[ab].md", "b.md", True),
    ("[!a].md", "a.md", False),
    ("[!a].md", "b.md", True),
    ("[^a].md", "b.md", True),
    ("a[!b]c", "a/c", False),  # a bracket never matches '/'
    ("x/a[!b]c", "x/a/c", False),
    ("test[!s]data", "test/data", False),
    ("[!/]x", "ax", True),
    ("[!/]x", "sub/ax", False),  # a '/' inside a bracket still anchors the pattern
    ("[[:digit:]]x", "1x", True),
    ("[[:digit:]]x", "ax", False),
    ("[![:digit:]]x", "ax", True),
    ("[![:digit:]]x", "1x", False),
    ("[[:alpha:]_]x", "_x", True),
    ("[[:upper:][:lower:]]x", "Ax", True),
    ("[[:punct:]]x", "-x", True),
    ("[[:space:]]x", " x", True),
    ("[a\\]]x", "]x", True),
    ("[a\\]]x", "ax", True),
    ("[a\\-c]x", "-x", True),
    ("[a\\-c]x", "bx", False),
    ("[]a]x", "]x", True),
    ("[!]a]x", "bx", True),
    ("[!]a]x", "]x", False),
    ("[a-]x", "-x", True),
    ("[c-a]x", "cx", True),  # a reversed range is empty; its first character still counts
    ("[c-a]x", "bx", False),
    ("[:a]x", "ax", True),  # `[:` outside a bracket opens no class: the set of ':' and 'a'
    ("[:a]x", "bx", False),
]


@pytest.mark.parametrize(("pattern", "path", "expected"), WILDMATCH)
def test_wildmatch_rules(pattern: str, path: str, expected: bool) -> None:
    assert Scope([pattern]).matches(path) is expected


# Several patterns: the last one that matches the file or a parent directory decides. (scope, path, matches)
LISTS = [
    (["build", "!/foo/build"], "build/file.py", True),
    (["build", "!/foo/build"], "foo/build/file.py", False),
    (["*.md", "!docs/*.md"], "docs/a.md", False),
    (["*.md", "!docs/*.md"], "notes/a.md", True),
    (["src/**", "!src/gen.py"], "src/gen.py", False),
    (["src/**", "!src/gen.py"], "src/a.py", True),
    (["a/*", "!a/x", "a/x/y"], "a/x/y", True),
    (["*", "!*.md", "README.md"], "README.md", True),
    (["*", "!*.md", "README.md"], "docs/README.md", True),
    (["*", "!*.md", "README.md"], "a.md", False),
]


@pytest.mark.parametrize(("scope", "path", "expected"), LISTS)
def test_negation_and_last_match_wins(scope: list[str], path: str, expected: bool) -> None:
    assert Scope(scope).matches(path) is expected


@pytest.mark.parametrize(
    ("scope", "path"),
    [(["src/", "!src/gen.py"], "src/gen.py"), (["*", "!*.md"], "docs/x.md"), (["b", "!a"], "a/b/c")],
)
def test_a_negation_reincludes_below_a_matched_directory_unlike_git(
    scope: list[str], path: str, tmp_path: Path
) -> None:
    # git never re-includes below an excluded directory; a scope's last matching pattern decides (globs.py)
    assert Scope(scope).matches(path) is False
    assert git_ignores(tmp_path, scope, path) is True


def test_paths_and_patterns_compare_in_nfc() -> None:
    nfd = unicodedata.normalize("NFD", "café")
    assert Scope(["café/"]).matches(f"{nfd}/menu.md") is True
    assert Scope([f"/{nfd}/*.md"]).matches("café/menu.md") is True
    assert Scope([f"/{nfd}/*.md"]).select(["cafe/menu.md", "café/menu.md"]) == ["café/menu.md"]


# select() gives the answer of matches() on every path, in order.

PATHS = sorted(
    [
        "README.md",
        "a.md",
        "a/b",
        "a/bb",
        "a/x/b",
        "a/x/y/b",
        "build/file.py",
        "docs/a.md",
        "docs/guide/x.md",
        "foo/build/file.py",
        "foo/f.txt",
        "foo/index.html",
        "foo/sub/g.txt",
        "infra/helm/abc/chart.yaml",
        "infra/helm/values.yaml",
        "notes/README.md",
        "src/a.py",
        "src/gen.py",
        "src/x/y.py",
        "sub/docs/x.md",
        "x",
        "x/foo/index.html",
        "y/x",
        "y/x/z",
        "#notes.md",
        "a*b",
        "a b",
        "1x",
        "ax",
    ]
)
SELECT = [
    (["*.md"], ["#notes.md", "README.md", "a.md", "docs/a.md", "docs/guide/x.md", "notes/README.md", "sub/docs/x.md"]),
    (["*.md", "!docs/"], ["#notes.md", "README.md", "a.md", "notes/README.md"]),
    (["/docs/", "/src/**", "!src/gen.py"], ["docs/a.md", "docs/guide/x.md", "src/a.py", "src/x/y.py"]),
    (["**/x"], ["a/x/b", "a/x/y/b", "src/x/y.py", "x", "x/foo/index.html", "y/x", "y/x/z"]),
    (["a/**/b"], ["a/b", "a/x/b", "a/x/y/b"]),
    (["/foo/**/*.html", "/infra/helm/*"], ["foo/index.html", "infra/helm/abc/chart.yaml", "infra/helm/values.yaml"]),
    (["\\#notes.md", "a\\*b", "a\\ b"], ["#notes.md", "a b", "a*b"]),
    (["build", "!/foo/build"], ["build/file.py"]),
    (["/README.md"], ["README.md"]),
    (["[[:digit:]]x", "/[!1]x"], ["1x", "ax"]),
    (["!src/**"], []),
    (["src/**", "!src/**"], []),
]


@pytest.mark.parametrize(("scope", "expected"), SELECT, ids=[" ".join(s) for s, _ in SELECT])
def test_select_is_matches_applied_in_order(scope: list[str], expected: list[str]) -> None:
    compiled = Scope(scope)
    assert compiled.select(PATHS) == [p for p in PATHS if compiled.matches(p)]
    assert compiled.select(PATHS) == expected


# pattern_problem and Scope validation.


@pytest.mark.parametrize(
    ("pattern", "problem"),
    [
        ("", "empty pattern"),
        ("   ", "empty pattern"),
        ("!", "empty pattern"),
        ("!  ", "empty pattern"),
        ("#comment", "starts with '#', which gitignore reads as a comment (write \\# for a literal #)"),
        ("../x", "contains a '..' component; scopes are relative to the repository root"),
        ("a/../b", "contains a '..' component; scopes are relative to the repository root"),
        ("!../x", "contains a '..' component; scopes are relative to the repository root"),
        ("a\tb", "contains a control character"),
        ("a\nb", "contains a control character"),
        ("a\x00", "contains a control character"),
        ("a\x7f", "contains a control character"),
        ("a\x85", "contains a control character"),
        (None, "a scope pattern must be a string"),
        (3, "a scope pattern must be a string"),
        (b"docs/", "a scope pattern must be a string"),
        (["docs/"], "a scope pattern must be a string"),
        ("/", "contains an empty or '.' path component, which matches no path"),
        ("a//b", "contains an empty or '.' path component, which matches no path"),
        ("./a", "contains an empty or '.' path component, which matches no path"),
        ("[x", "not a valid gitignore pattern (unterminated '[' (write \\[ for a literal [))"),
        ("[[:word:]]", "not a valid gitignore pattern (unknown character class [:word:])"),
        ("a[/]b", "not a valid gitignore pattern (a bracket expression that matches no character ('/' never matches))"),
    ],
)
def test_pattern_problem_rejects(pattern: object, problem: str) -> None:
    assert pattern_problem(pattern) == problem


@pytest.mark.parametrize(
    "pattern",
    [
        "*.md",
        "docs/",
        "/README.md",
        "a/**/b",
        "foo/**/",
        "**",
        "!build/",
        "\\#a",
        "\\!a",
        "[[:digit:]]*",
        "a.md ",
        "a\\ ",
        ".github/",
        "src/*.py",
        "é.md",
        "a/..b",
        "[!a]?",
    ],
)
def test_pattern_problem_accepts_normal_globs(pattern: str) -> None:
    assert pattern_problem(pattern) is None


def test_scope_refuses_an_invalid_pattern() -> None:
    with pytest.raises(ScopeError) as caught:
        Scope(["docs/", "../x"])
    assert caught.value.code == "bad_scope"
    assert caught.value.message == (
        "scope pattern '../x': contains a '..' component; scopes are relative to the repository root"
    )


# Compat: the same answers as `git check-ignore --no-index` (core.ignorecase=false).


def git_ignores(tmp_path: Path, patterns: list[str], path: str) -> bool:
    """Whether git, with ``patterns`` as the root .gitignore, ignores the file ``path``."""
    root = tmp_path / "compat"
    if not (root / ".git").exists():
        subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / ".gitignore").write_text("".join(f"{p}\n" for p in patterns), encoding="utf-8")
    proc = subprocess.run(
        ["git", "-c", "core.ignorecase=false", "check-ignore", "--no-index", "-q", "--", path],
        cwd=root,
        capture_output=True,
        check=False,
    )
    assert proc.returncode in (0, 1), proc.stderr
    return proc.returncode == 0


COMPAT = [([p], path, expected) for p, path, expected in BR16 + WILDMATCH] + LISTS


@pytest.mark.parametrize(("scope", "path", "expected"), COMPAT, ids=[f"{' '.join(s)} @ {p}" for s, p, _ in COMPAT])
def test_matches_agrees_with_git_check_ignore(scope: list[str], path: str, expected: bool, tmp_path: Path) -> None:
    assert git_ignores(tmp_path, scope, path) is expected
    assert Scope(scope).matches(path) is expected
