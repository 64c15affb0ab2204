"""The calls other modules of the project make of a module's top-level function or class.

A function that no call in its own module feeds is called, in an application, from the
modules that import it: ``make_mesh(...)`` in ``train.py``, ``DecodeEngine(mesh)`` in
``serve.py``, ``build_meshes()`` through a package's re-export. The analysis then takes
its parameters from those calls (analysis/callsites.py). This finds them from Python's
trees: every project file whose text names the function, its imports resolved (absolute,
relative, re-exports through ``__init__.py`` and module aliases), and every use of the
bound name. A use that is not a call (a callback handed on, a name stored, a star import
of the module) means calls the trees do not show: no answer, and the parameters stay
unknown. Only the files under the import roots are read; code outside the project (an
installed package calling a library's public function) is not seen, as elsewhere in the
project layer.
"""

from __future__ import annotations

import ast
import os
from typing import TYPE_CHECKING, Optional

from .imports import STAR, imports_of
from .modules import ModuleFile, ModuleIndex

if TYPE_CHECKING:
    from .view import Project

_DEPTH = 4  # re-exports followed through at most this many modules
_MOST_FILES = 16  # other files naming the function that are parsed for its calls

# (the calling file, the call) of each use; None: some use is not a call, or a file that
# names the function does not parse
Found = Optional[list[tuple[str, ast.Call]]]


def calls_of(project: Project, path: str, name: str, deps: dict[str, str]) -> Found:
    """Every call of ``name``, defined at the top level of the module at ``path``, in the
    project's other files (each file read recorded in ``deps``)."""
    index = project.index
    dotted = index.module_name(path)
    if dotted is None:
        return None
    own = os.path.realpath(path)
    out: list[tuple[str, ast.Call]] = []
    files = project.files_naming(name, deps)
    if len(files) > _MOST_FILES:
        return None  # a name most of the project spells: not followed (cost)
    for other in files:
        if os.path.realpath(other) == own:
            continue
        found = project.text(other)
        if found is None:
            continue
        project.text_deps.add(other)  # its calls' arguments: no interface hash holds them
        tree = project.tree(found[0])
        if tree is None:
            return None
        importer = _module_file(index, other)
        calls = _calls_in(project, tree, importer, dotted, name)
        if calls is None:
            return None
        out.extend((other, call) for call in calls)
    return out


def _module_file(index: ModuleIndex, path: str) -> ModuleFile | None:
    dotted = index.module_name(path)
    return index.find(dotted) if dotted is not None else None


def _calls_in(project: Project, tree: ast.Module, importer: ModuleFile | None, module: str,
              name: str) -> list[ast.Call] | None:
    """The calls of ``module.name`` in one file; None where a use is not a call."""
    names: set[str] = set()  # local names bound to the function
    modules: set[str] = set()  # local names bound to its module
    for imp in imports_of(tree, importer, project.index):
        if imp.local == STAR:
            if _defines(project, imp.module, name, module, _DEPTH):
                return None  # bound by a star import: its uses are not told apart here
            continue
        if imp.name is None:
            if imp.module == module:
                modules.add(imp.local)
            elif module.startswith(imp.module + "."):
                return None if _attribute_path_used(tree, imp.local) else []
            continue
        if _defines(project, imp.module, imp.name, module, _DEPTH) and imp.name == name:
            names.add(imp.local)
    if not names and not modules:
        return []
    calls: list[ast.Call] = []
    callees: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            callees.add(id(node.func))
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in names or isinstance(node, ast.Attribute) \
                and node.attr == name and isinstance(node.value, ast.Name) and node.value.id in modules:
            if not isinstance(node.ctx, ast.Load) or id(node) not in callees:
                return None  # handed on, stored or rebound: calls not seen here
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name) and func.id in names or isinstance(func, ast.Attribute) \
                    and func.attr == name and isinstance(func.value, ast.Name) and func.value.id in modules:
                calls.append(node)
    return calls


def _attribute_path_used(tree: ast.Module, local: str) -> bool:
    """``import pkg`` then ``pkg.mod.f(...)``: read as a use the scan does not follow."""
    return any(isinstance(n, ast.Name) and n.id == local for n in ast.walk(tree))


def _defines(project: Project, module: str, name: str, target: str, depth: int) -> bool:
    """Is ``module.name`` the function ``target.name`` (itself, or re-exported from it)?"""
    if module == target:
        return True
    if depth == 0:
        return False
    mod = project.index.find(module)
    if mod is None or mod.path is None:
        return False
    found = project.text(mod.path)
    if found is None:
        return False
    tree = project.tree(found[0])
    if tree is None:
        return False
    for imp in imports_of(tree, mod, project.index):
        if imp.local == name and imp.name is not None:
            return _defines(project, imp.module, imp.name, target, depth - 1)
        if imp.local == STAR and _defines(project, imp.module, name, target, depth - 1):
            return True
    return False
