"""Import rules and house style, checked on the source (research/aesthetics.md habits 1, 2, 3, 6, 8)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "git_memzoi"
MODULES = sorted(p for p in PACKAGE.rglob("*.py"))

# dependency → the only modules (package-relative prefixes) allowed to import it
OWNERS = {
    "click": ("cli/",),
    "pygit2": ("core/gitview_pygit2.py",),
    "ruamel": ("core/yamlio.py",),
    "blake3": ("core/hashing.py",),
    "pathspec": ("core/globs.py",),
    "dulwich": ("core/gitignore_policy.py",),
    "subprocess": ("memkeep/checks.py",),
    "sqlite3": ("memzoi/recall/index/db.py",),
    "watchdog": ("core/fswatch.py",),
}
PURE = ("memkeep/staleness.py", "memkeep/entries.py", "memkeep/lint.py", "memkeep/index.py", "memkeep/refs.py",
        "integrations/claude_code.py", "core/gitview.py", "core/gitview_fake.py")  # fmt: skip
IO_MODULES = {"os", "subprocess", "sqlite3", "shutil", "tempfile", "socket", "pygit2", "click"}


def rel(path: Path) -> str:
    return path.relative_to(PACKAGE).as_posix()


def imported(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.Import):
            names.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


@pytest.mark.parametrize("module", MODULES, ids=rel)
def test_each_dependency_has_one_owner(module: Path) -> None:
    for dependency, owners in OWNERS.items():
        if dependency in imported(module):
            assert rel(module).startswith(owners), f"{rel(module)} imports {dependency}; only {owners} may"


@pytest.mark.parametrize("module", [PACKAGE / m for m in PURE], ids=str)
def test_pure_modules_do_no_io(module: Path) -> None:
    assert not imported(module) & IO_MODULES


@pytest.mark.parametrize("module", MODULES, ids=rel)
def test_time_and_exit_are_owned(module: Path) -> None:
    source = module.read_text("utf-8")
    if rel(module) != "core/clock.py":
        assert "datetime.now(" not in source and "date.today(" not in source and "time.time(" not in source
    if not rel(module).startswith("cli/"):
        assert "sys.exit" not in source and "SystemExit" not in source


@pytest.mark.parametrize("module", MODULES, ids=rel)
def test_modules_stay_small_and_documented(module: Path) -> None:
    source = module.read_text("utf-8")
    assert source.count("\n") <= 600
    tree = ast.parse(source)
    assert ast.get_docstring(tree), f"{rel(module)} has no module docstring"
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and not node.name.startswith("_"):
            assert ast.get_docstring(node), f"{rel(module)}: public {node.name} has no docstring"
