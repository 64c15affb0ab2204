"""What a module imports from the project: each binding an import statement makes.

``import a.b`` binds ``a`` (package ``a``), ``import a.b as m`` binds ``m`` to ``a.b``;
``from a import b`` binds ``b`` to the submodule ``a.b`` when the project has one, else to
the name ``b`` that ``a`` defines; ``from . import x`` and ``from ..p import y`` are
resolved against the importing module; ``from m import *`` is kept as a star. Imports of
anything the import roots do not hold (installed packages, the standard library) are
left out: they are not the project's. Imports anywhere in the module count, functions
included (a lazy import inside a function binds there; the analysis decides scopes).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from .modules import ModuleFile, ModuleIndex

STAR = "*"


@dataclass(frozen=True)
class Import:
    local: str  # the name bound in the importing module ("*" for a star import)
    module: str  # the project module it comes from
    name: str | None  # the name taken from that module; None: the module itself
    line: int


def imports_of(tree: ast.Module, importer: ModuleFile | None, index: ModuleIndex) -> list[Import]:
    """The project imports of ``tree``, in source order; ``importer`` is the module the tree
    is (None for a script outside the import roots: relative imports then resolve to nothing).
    Kept on the tree, per importer and index: the callers' scan asks it of one file for each
    function it follows (project/callers.py)."""
    memo: dict[tuple[int, str | None], tuple[ModuleIndex, list[Import]]] = \
        tree.__dict__.setdefault("_reshard_imports", {})
    key = (id(index), importer.name if importer is not None else None)
    found = memo.get(key)
    if found is None or found[0] is not index:  # (the index kept: its id is not reused)
        found = memo[key] = (index, _imports_of(tree, importer, index))
    return list(found[1])


def _imports_of(tree: ast.Module, importer: ModuleFile | None, index: ModuleIndex) -> list[Import]:
    out: list[Import] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    if index.find(alias.name) is not None:
                        out.append(Import(alias.asname, alias.name, None, node.lineno))
                else:
                    top = alias.name.split(".")[0]
                    if index.find(top) is not None:
                        out.append(Import(top, top, None, node.lineno))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                if importer is None:
                    continue
                base = index.resolve_relative(importer, node.level, node.module)
            else:
                base = node.module
            if base is None or index.find(base) is None:
                continue
            for alias in node.names:
                if alias.name == STAR:
                    out.append(Import(STAR, base, STAR, node.lineno))
                    continue
                local = alias.asname or alias.name
                sub = f"{base}.{alias.name}"
                if index.find(sub) is not None:
                    out.append(Import(local, sub, None, node.lineno))
                else:
                    out.append(Import(local, base, alias.name, node.lineno))
    out.sort(key=lambda i: i.line)
    return out
