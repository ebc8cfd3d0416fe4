"""Import rules and house style, checked on the source (research/aesthetics.md habits 1, 2, 3, 6, 8)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.support.repos import PROJECT

PACKAGE = PROJECT / "git_memzoi"
MODULES = sorted(p for p in PACKAGE.rglob("*.py"))

# dependency → the only modules (package-relative prefixes) allowed to import it
OWNERS = {
    "click": ("cli/",),
    "pygit2": ("core/gitview_pygit2.py",),
    "ruamel": ("core/yamlio.py",),
    "yaml": ("core/yaml_fast.py",),
    "blake3": ("core/hashing.py",),
    "pathspec": ("core/globs.py",),
    "dulwich": ("core/gitignore_policy.py",),
    "subprocess": ("memkeep/checks.py",),
    "sqlite3": ("memzoi/recall/index/db.py",),
    "watchdog": ("core/fswatch.py",),
    "re2": ("core/secret_rules.py",),
    "detect_secrets": ("core/secret_scan.py",),
}
PURE = (
    "memkeep/staleness.py",
    "memkeep/entries.py",
    "memkeep/lint.py",
    "memkeep/index.py",
    "memkeep/refs.py",
    "integrations/claude_code.py",
    "core/gitview.py",
    "core/gitview_fake.py",
)
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


# ------------------------------------------------------------------------------------------------ the floor plan
# (issue 11: sub-packages by concept, one public face per model, no import cycle)

EDGES = ("cli/", "mcp/", "integrations/")
MODULE_NAMES = {
    ".".join(("git_memzoi", *p.relative_to(PACKAGE).with_suffix("").parts)).removesuffix(".__init__"): p
    for p in MODULES
}


def _type_checking(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def runtime_imports(path: Path, *, all_levels: bool = True) -> list[tuple[ast.ImportFrom | ast.Import, str]]:
    """Every import a module can execute (module level and inside functions; ``if TYPE_CHECKING:`` blocks are
    never executed and are left out), as ``(node, imported module)`` pairs; ``from pkg import sub`` names the
    submodule when ``sub`` is one."""
    found: list[tuple[ast.ImportFrom | ast.Import, str]] = []
    stack: list[ast.AST] = [ast.parse(path.read_text("utf-8"))]
    while stack:
        for child in ast.iter_child_nodes(stack.pop()):
            if _type_checking(child):
                continue
            if isinstance(child, ast.Import):
                found += [(child, a.name) for a in child.names]
            elif isinstance(child, ast.ImportFrom) and child.module and child.level == 0:
                for a in child.names:
                    full = f"{child.module}.{a.name}"
                    found.append((child, full if full in MODULE_NAMES else child.module))
            if all_levels:
                stack.append(child)
    return found


def all_imports(path: Path) -> list[ast.ImportFrom | ast.Import]:
    """Every import statement of a module, ``TYPE_CHECKING`` blocks included."""
    return [n for n in ast.walk(ast.parse(path.read_text("utf-8"))) if isinstance(n, (ast.Import, ast.ImportFrom))]


def import_graph() -> dict[str, set[str]]:
    """module → the package modules it can import at run time."""
    return {
        name: {target for _, target in runtime_imports(path) if target in MODULE_NAMES and target != name}
        for name, path in MODULE_NAMES.items()
    }


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module, or a module importing itself (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_cycle_finder_sees_a_cycle_through_a_function_level_import(tmp_path: Path) -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    module = tmp_path / "m.py"
    module.write_text("import os\nif TYPE_CHECKING:\n    import b\n\ndef f():\n    from git_memzoi import errors\n")
    assert [target for _, target in runtime_imports(module)] == ["os", "git_memzoi.errors"]


def test_no_import_cycle_anywhere_in_the_package() -> None:
    assert cycles(import_graph()) == []


def test_memzoi_keeps_at_most_eight_files_at_its_top() -> None:
    top = sorted(p.name for p in (PACKAGE / "memzoi").glob("*.py"))
    assert len(top) <= 8, top


def _face() -> list[str]:
    import git_memzoi.memzoi as face

    return list(face.__all__)


def test_every_public_name_of_the_face_loads() -> None:
    import importlib

    face = importlib.import_module("git_memzoi.memzoi")
    subpackages = {p.name for p in (PACKAGE / "memzoi").iterdir() if (p / "__init__.py").is_file()}
    for name in _face():
        assert name not in subpackages, f"{name} would be shadowed by the sub-package of that name"
        assert getattr(face, name) is not None
    with pytest.raises(AttributeError):
        face.no_such_name  # noqa: B018


@pytest.mark.parametrize("module", [m for m in MODULES if rel(m).startswith(EDGES)], ids=rel)
def test_edges_import_the_models_only_through_their_faces(module: Path) -> None:
    face = set(_face())
    for node in all_imports(module):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
        for name in names:
            if name.startswith("git_memzoi.memzoi"):
                assert isinstance(node, ast.ImportFrom) and name == "git_memzoi.memzoi", (
                    f"{rel(module)}:{node.lineno} imports {name}; import it from git_memzoi.memzoi"
                )
                unknown = {a.name for a in node.names} - face
                assert not unknown, f"{rel(module)}:{node.lineno}: {sorted(unknown)} are not on memzoi's face"
            if name.startswith("git_memzoi.memkeep"):
                ok = name == "git_memzoi.memkeep.api" or (
                    isinstance(node, ast.ImportFrom)
                    and name == "git_memzoi.memkeep"
                    and [a.name for a in node.names] == ["api"]
                )
                assert ok, f"{rel(module)}:{node.lineno} imports {name}; use git_memzoi.memkeep.api"


@pytest.mark.parametrize("module", [m for m in MODULES if rel(m).startswith("memzoi/")], ids=rel)
def test_memzoi_modules_import_each_other_by_real_path(module: Path) -> None:
    for node, target in runtime_imports(module):
        assert target != "git_memzoi.memzoi" or rel(module) == "memzoi/__init__.py", (
            f"{rel(module)}:{node.lineno} imports through the public face"
        )
        assert not target.startswith(("git_memzoi.cli", "git_memzoi.mcp", "git_memzoi.integrations")), (
            f"{rel(module)}:{node.lineno} imports the edge module {target}"
        )


def test_the_mcp_server_and_the_cli_share_no_code_but_the_faces() -> None:
    for node, target in runtime_imports(PACKAGE / "mcp" / "server.py"):
        assert not target.startswith("git_memzoi.cli"), f"mcp/server.py:{node.lineno} imports {target}"


def test_the_command_line_loads_its_command_modules_statically() -> None:
    source = (PACKAGE / "cli" / "memzoi.py").read_text("utf-8")
    assert "importlib" not in source and "import_module" not in source


# ------------------------------------------------------------------------------------------------ confined writes
# (issue 13: every write goes through git_memzoi/core/atomic.py, which refuses symlinks and paths outside the root)

WRITE_METHODS = {"write_text", "write_bytes", "mkdir", "unlink", "rmdir", "rename", "touch", "chmod", "symlink_to"}
OS_WRITES = {
    "makedirs",
    "mkdir",
    "unlink",
    "remove",
    "rename",
    "replace",
    "link",
    "symlink",
    "rmdir",
    "chmod",
    "mkfifo",
}
WRITE_FLAGS = {"O_WRONLY", "O_RDWR", "O_CREAT", "O_APPEND", "O_TRUNC"}
SHUTIL_WRITES = {"copy", "copy2", "copyfile", "copytree", "move", "rmtree"}
# module -> the raw writes it may make, and why they need no guard
RAW_WRITERS = {
    "core/atomic.py": None,  # the guarded writers themselves
    "core/scratch.py": None,  # temporary files in the git directory's own folder
    "cli/app.py": {"os.open for writing"},  # /dev/null over a closed stdout
    "cli/entry.py": {"os.open for writing"},  # the same, for the help answered before click loads
    "cli/memkeep.py": {"open(mode='a')"},  # $GITHUB_STEP_SUMMARY, a file the CI runner names
    "core/gitview_pygit2.py": {".chmod()", ".unlink()"},  # drop_object: a loose object of the eval's own repository
    "integrations/git_hooks.py": {".mkdir()", ".chmod()", ".unlink()", "os.replace"},  # the hooks folder git names
    # the index: checked_index() confines the file and sqlite's sidecars before sqlite opens or replaces them
    "memzoi/recall/index/db.py": {"sqlite3.connect", "os.replace", "os.unlink", "os.open for writing"},
}


def raw_writes(path: Path) -> set[str]:
    """The file-system writes a module makes without :mod:`git_memzoi.core.atomic`."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Attribute):
            base = func.value.id if isinstance(func.value, ast.Name) else None
            flags = {n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)}
            if base == "os" and func.attr in OS_WRITES:
                found.add(f"os.{func.attr}")
            elif base == "os" and func.attr == "open" and WRITE_FLAGS & flags:
                found.add("os.open for writing")
            elif (base == "shutil" and func.attr in SHUTIL_WRITES) or (base == "sqlite3" and func.attr == "connect"):
                found.add(f"{base}.{func.attr}")
            elif base not in ("os", "shutil") and func.attr in WRITE_METHODS:
                found.add(f".{func.attr}()")
        elif isinstance(func, ast.Name) and func.id == "open":
            mode = (
                node.args[1] if len(node.args) > 1 else next((k.value for k in node.keywords if k.arg == "mode"), None)
            )
            if isinstance(mode, ast.Constant) and isinstance(mode.value, str) and set(mode.value) & set("wax+"):
                found.add(f"open(mode={mode.value!r})")
    return found


def test_the_raw_write_finder_sees_each_kind(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        "import os, shutil\np.write_text('x')\nos.replace(a, b)\nos.open(p, os.O_WRONLY | os.O_CREAT)\n"
        "os.open(p, os.O_RDONLY)\nopen(p, 'a')\nopen(p)\nshutil.rmtree(p)\n'a'.replace('b', 'c')\n"
    )
    assert raw_writes(module) == {
        ".write_text()",
        "os.replace",
        "os.open for writing",
        "open(mode='a')",
        "shutil.rmtree",
    }


@pytest.mark.parametrize("module", MODULES, ids=rel)
def test_every_write_goes_through_the_confined_writers(module: Path) -> None:
    allowed = RAW_WRITERS.get(rel(module), set())
    if allowed is None:
        return
    unexpected = raw_writes(module) - allowed
    assert not unexpected, f"{rel(module)} writes without git_memzoi.core.atomic: {sorted(unexpected)}"


def module_level_compiles(module: Path) -> list[int]:
    """The lines where ``module`` compiles a regular expression at import (``X = re.compile(...)`` at the top
    level): each is paid by every command that imports it (issue 17, "Start-up"); use
    :func:`git_memzoi.core.patterns.lazy` instead."""
    tree = ast.parse(module.read_text("utf-8"))
    found = []
    for node in tree.body:
        value = node.value if isinstance(node, (ast.Assign, ast.AnnAssign)) else None
        func = value.func if isinstance(value, ast.Call) else None
        if (
            isinstance(func, ast.Attribute)
            and func.attr == "compile"
            and isinstance(func.value, ast.Name)
            and func.value.id == "re"
        ):
            found.append(node.lineno)
    return found


def test_the_module_level_compile_finder_sees_one(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        "import re\nA = re.compile('a')\nB: object = re.compile('b')\ndef f():\n    return re.compile('c')\n"
    )
    assert module_level_compiles(module) == [2, 3]


@pytest.mark.parametrize("module", MODULES, ids=rel)
def test_no_module_compiles_a_pattern_at_import(module: Path) -> None:
    assert module_level_compiles(module) == [], f"{rel(module)}: use git_memzoi.core.patterns.lazy"
