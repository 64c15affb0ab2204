"""The package's shape, as docs/architecture.md describes it: every module in one of the
declared folders, the folders in layers that import only downwards, no import cycles
between modules, no module importing another's private names, and one rule per module
of rules/ (its helpers in rules/helpers/).

The import graph is read from Python's ast, not by importing: module-level and
function-level imports both count (a function-level import is a cycle that only waits
for the call), relative imports are resolved against the importing module's package.
Imports under ``if TYPE_CHECKING:`` are left out of the cycle check: they never run.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "reshard_lint"

# The folders of docs/architecture.md's module list, top layer first: a module imports
# from its own layer or the ones below it, never from one above.
LAYERS = [
    "reshard_lint.frontends",  # what users run: the command, flake8, the language server
    "reshard_lint.engine",  # one file through stages, analysis and rules; many files
    "reshard_lint.rules",
    "reshard_lint.project",
    "reshard_lint.analysis",
    "reshard_lint.stages",  # before the analysis: prefilter, gate, slicing ...
    "reshard_lint.core",  # shared by all: diagnostic, config, noqa, fixes, cache ...
]
FOLDERS = {
    *LAYERS,
    "reshard_lint.frontends.explain",
    "reshard_lint.frontends.formats",
    "reshard_lint.analysis.models",
    "reshard_lint.rules.helpers",
    "reshard_lint.runtime",  # strict mode: imports none of the layers, none imports it
}
TOP_LEVEL = {"reshard_lint", "reshard_lint.__main__"}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _type_checking_only(tree: ast.AST) -> set[int]:
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and (
                (isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING")
                or (isinstance(node.test, ast.Attribute) and node.test.attr == "TYPE_CHECKING")):
            for stmt in node.body:
                skipped.update(id(n) for n in ast.walk(stmt))
    return skipped


def _owner(name: str) -> str:
    """The module of the package that defines ``name`` (a module, or a name in one)."""
    while name not in MODULES:
        name = name.rpartition(".")[0]
    return name


class _Imports:
    """One module's imports of the package: edges (for cycles) and private names."""

    def __init__(self, module: str) -> None:
        path = MODULES[module]
        tree = ast.parse(path.read_text(encoding="utf-8"))
        is_package = path.name == "__init__.py"
        type_only = _type_checking_only(tree)
        self.edges: dict[str, int] = {}  # imported module -> first line
        self.private: list[str] = []
        aliases: dict[str, str] = {}  # local name -> module of the package it is bound to
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name == "reshard_lint" or alias.name.startswith("reshard_lint."):
                        target = _owner(alias.name)
                        self._edge(target, node, type_only)
                        aliases[alias.asname or alias.name.split(".")[0]] = target if alias.asname else "reshard_lint"
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = module.split(".") if is_package else module.split(".")[:-1]
                    base = base[:len(base) - (node.level - 1)]
                    source = ".".join(base + ([node.module] if node.module else []))
                else:
                    source = node.module or ""
                if not (source == "reshard_lint" or source.startswith("reshard_lint.")):
                    continue
                for alias in node.names:
                    full = f"{source}.{alias.name}"
                    if full in MODULES:  # from package import submodule
                        self._edge(full, node, type_only)
                        aliases[alias.asname or alias.name] = full
                        continue
                    target = _owner(source)
                    self._edge(target, node, type_only)
                    if _private(alias.name) and target != module:
                        self.private.append(f"{module}:{node.lineno}: from {target} import {alias.name}")
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                    and node.value.id in aliases and _private(node.attr) and aliases[node.value.id] != module:
                self.private.append(f"{module}:{node.lineno}: {node.value.id}.{node.attr} "
                                    f"({aliases[node.value.id]})")

    def _edge(self, target: str, node: ast.stmt, type_only: set[int]) -> None:
        if id(node) not in type_only:
            self.edges.setdefault(target, node.lineno)


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


IMPORTS = {m: _Imports(m) for m in MODULES}


def _cycles() -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in IMPORTS[v].edges:
            if w == v:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(MODULES):
        if v not in index:
            visit(v)
    return found


def _describe(component: list[str]) -> str:
    inside = set(component)
    edges = [f"    {a} -> {b} (line {line})" for a in component
             for b, line in sorted(IMPORTS[a].edges.items()) if b in inside and b != a]
    return "\n".join([" <-> ".join(component), *edges])


def test_the_graph_sees_the_package() -> None:
    assert len(MODULES) > 100
    # A few edges every version has, one of them function-level (cli imports lsp when asked).
    assert "reshard_lint.core.diagnostic" in IMPORTS["reshard_lint.core.noqa"].edges
    assert "reshard_lint.frontends.lsp" in IMPORTS["reshard_lint.frontends.cli"].edges
    assert "reshard_lint.stages.newer_syntax" in IMPORTS["reshard_lint.engine.engine"].edges


def test_no_import_cycles() -> None:
    cycles = _cycles()
    assert not cycles, "import cycles:\n" + "\n".join(_describe(c) for c in cycles)


def test_no_module_imports_another_modules_private_names() -> None:
    found = [p for m, i in sorted(IMPORTS.items()) for p in i.private]
    assert not found, "private names imported from another module:\n" + "\n".join(found)


def test_every_module_lives_in_a_declared_folder() -> None:
    loose = []
    for module, path in MODULES.items():
        if module in TOP_LEVEL:
            continue
        folder = module if path.name == "__init__.py" else module.rpartition(".")[0]
        if folder not in FOLDERS:
            loose.append(f"{module} ({path.relative_to(PACKAGE.parent)})")
    assert not loose, "modules outside the folders docs/architecture.md lists:\n" + "\n".join(loose)
    # and the list names no folder that is gone
    assert {m for m, p in MODULES.items() if p.name == "__init__.py"} >= FOLDERS


def _in_runtime(module: str) -> bool:
    return module == "reshard_lint.runtime" or module.startswith("reshard_lint.runtime.")


def _layer(module: str) -> str | None:
    return next((layer for layer in LAYERS if module == layer or module.startswith(layer + ".")), None)


def test_layers_import_only_downwards() -> None:
    upward = []
    for module, imports in sorted(IMPORTS.items()):
        here = _layer(module)
        for target, line in sorted(imports.edges.items()):
            there = _layer(target)
            if here is not None and there is not None and LAYERS.index(there) < LAYERS.index(here):
                upward.append(f"{module}:{line} imports {target}")
            if (_in_runtime(module) and there is not None) or (_in_runtime(target) and here is not None):
                upward.append(f"{module}:{line} imports {target}: runtime/ stands apart")
    assert not upward, "imports against the layers of docs/architecture.md:\n" + "\n".join(upward)


def test_every_folder_is_in_the_architecture_doc() -> None:
    doc = (PACKAGE.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    missing = [f for f in FOLDERS if f.replace(".", "/") + "/" not in doc]
    assert not missing, f"docs/architecture.md does not name {missing}"


def test_one_rule_per_module_of_rules() -> None:
    """A module of rules/ named rshNNN_* holds the one rule of that code; what rules
    share, or a part of one rule, is a helper in rules/helpers/ (never taken for a rule)."""
    from reshard_lint.rules import all_rules

    by_module: dict[str, list[str]] = {}
    for rule in all_rules():
        by_module.setdefault(rule.__module__, []).append(rule.code)
    rule_modules = {m for m in MODULES if re.fullmatch(r"reshard_lint\.rules\.rsh\d{3}_\w+", m)}
    assert set(by_module) == rule_modules, "rshNNN modules of rules/ that hold no rule (helpers " \
        f"belong in rules/helpers/): {sorted(rule_modules - set(by_module))}"
    for module, codes in sorted(by_module.items()):
        assert len(codes) == 1, f"{module} holds {codes}: one rule per module"
        assert module.rpartition(".")[2].startswith(codes[0].lower() + "_"), f"{module} holds {codes[0]}"
    others = {m for m in MODULES if m.startswith("reshard_lint.rules.") and m.count(".") == 2} - rule_modules
    assert others <= {"reshard_lint.rules.base", "reshard_lint.rules.catalog", "reshard_lint.rules.docs",
                      "reshard_lint.rules.helpers"}, others
