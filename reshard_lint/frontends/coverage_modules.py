"""``reshard-lint coverage`` across the files of one run: a function other modules call.

Each file's analysis gives the sites inside its functions the values its own call sites
pass (analysis/callsites.py). A function that another module imports is called there too,
with arguments this file's analysis never saw, so a verdict that says a site is harmless
(``same_devices``, ``same_pieces``, ``host_data``) holds only for the calls it saw. Here,
once every file of the run is analysed:

* a call from another file that the analysis ran through (interpreter.emit's relay: the
  call's own arguments) and that crosses makes the site a crossing, with that call named;
* otherwise a harmless verdict at a site of a function with parameters (or of a class)
  that another file of the run imports, directly or through re-exports, becomes
  unresolved: the other module's calls are not all joined into it.

Only the files of the run are read: ``coverage`` of one module alone does not see its
importers.
"""

from __future__ import annotations

import ast
import os
import re
from dataclasses import dataclass, field
from typing import Any, Iterable

SAFE = ("same_devices", "same_pieces", "host_data")
_IMPORT = re.compile(r"^[ \t]*import[ \t]+([\w. \t,]+)", re.MULTILINE)
CALLED_ELSEWHERE = "a parameter of a function other modules call too"

Import = tuple[str, str, str]  # (module file key, name or "*", local name)


@dataclass
class ModuleFacts:
    """What the pass needs of one file, plain data (coverage's workers pickle it)."""

    key: str = ""  # the file's realpath
    # (line, 1-based column) of each site -> (top-level function or class, takes arguments)
    scopes: dict[tuple[int, int], tuple[str, bool]] = field(default_factory=dict)
    imports: list[Import] = field(default_factory=list)
    # (file key, line, 1-based column) of a site in another module, and the verdict of a
    # call here that ran it: (verdict, detail)
    relayed: list[tuple[str, int, int, str, str]] = field(default_factory=list)


def facts_of(ctx: Any, path: str, site_lines: Iterable[tuple[int, int]],
             relayed: Iterable[tuple[Any, str, str]]) -> ModuleFacts:
    """``site_lines``: this file's sites; ``relayed``: (event, verdict, detail) of each
    transfer of another module's function run for a call in this file."""
    out = ModuleFacts(os.path.realpath(path))
    tree = ctx.module.tree
    tops = [(stmt.lineno, stmt.end_lineno or stmt.lineno, stmt.name, _takes_arguments(stmt))
            for stmt in tree.body if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    for line, col in site_lines:
        for first, last, name, takes in tops:
            if first <= line <= last:
                out.scopes[(line, col)] = (name, takes)
                break
    view = ctx.project
    if view is not None:
        out.imports = list(_imports(tree, view))
    for event, verdict, detail in relayed:
        where = ctx.locate(event.through)
        if where is None or where[0] is None:
            continue
        other, line, col = where
        out.relayed.append((os.path.realpath(other), line, col + 1, verdict, detail))
    return out


def text_facts(text: str, path: str, view: Any) -> ModuleFacts:
    """The imports of a file the analysis does not run (no transfer of its own, no call of
    an imported function that moves arrays), read from its import lines."""
    from ..project.module_scan import import_lines

    out = ModuleFacts(os.path.realpath(path))
    index = view.project.index
    froms, imports = import_lines(text)
    for dots, module, names in froms:
        base = view.absolute(len(dots), module or None) if dots else module
        mod = index.find(base) if base else None
        if mod is None or mod.path is None:
            continue
        for part in names.strip("()").split(","):
            name, _, alias = part.strip().partition(" as ")
            name, alias = name.strip(), alias.strip()
            if not name:
                continue
            sub = index.find(f"{base}.{name}") if name != "*" else None
            if sub is not None and sub.path is not None:
                out.imports.append((sub.key, "*", alias or name))
            else:
                out.imports.append((mod.key, name, alias or name))
    del imports  # (``import a as b`` only: every ``import`` line is read below)
    for line in _IMPORT.findall(text):
        for part in line.split(","):
            module, _, alias = part.strip().partition(" as ")
            mod = index.find(module.strip())
            if mod is not None and mod.path is not None:
                out.imports.append((mod.key, "*", alias.strip() or module.strip()))
    return out


def _takes_arguments(stmt: ast.stmt) -> bool:
    if isinstance(stmt, ast.ClassDef):
        return True  # its methods' arguments, and the instance's state, come from the callers
    a = stmt.args  # type: ignore[attr-defined]
    return bool(a.posonlyargs or a.args or a.kwonlyargs or a.vararg or a.kwarg)


def _imports(tree: ast.Module, view: Any) -> Iterable[Import]:
    index = view.project.index
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = view.absolute(node.level, node.module) if node.level else node.module
            mod = index.find(base) if base else None
            if mod is None or mod.path is None:
                continue
            for alias in node.names:
                if alias.name == "*":
                    yield mod.key, "*", "*"
                    continue
                sub = index.find(f"{base}.{alias.name}")
                if sub is not None and sub.path is not None:
                    yield sub.key, "*", alias.asname or alias.name  # a module: any attribute
                else:
                    yield mod.key, alias.name, alias.asname or alias.name
        elif isinstance(node, ast.Import):
            for alias in node.names:
                mod = index.find(alias.name)
                if mod is not None and mod.path is not None:
                    yield mod.key, "*", alias.asname or alias.name


def _imported_elsewhere(files: list[ModuleFacts]) -> dict[tuple[str, str], str]:
    """(module key, name) -> the key of a file that imports it, other than the module's
    own: directly, or through a module that re-exports it (to a fixpoint)."""
    found: dict[tuple[str, str], str] = {}
    for f in files:
        for key, name, _ in f.imports:
            if key != f.key:
                found.setdefault((key, name), f.key)
    changed = True
    while changed:
        changed = False
        for f in files:
            for key, name, local in f.imports:
                via = found.get((f.key, local)) or found.get((f.key, "*"))
                if via is not None and via != key and (key, name) not in found:
                    found[(key, name)] = via
                    changed = True
    return found


def apply(files: list[tuple[ModuleFacts, list[Any]]], display: dict[str, str]) -> None:
    """Change the sites (coverage.Site, in place) of each (facts, sites) of the run."""
    facts = [f for f, _ in files]
    elsewhere = _imported_elsewhere(facts)
    crossing: dict[tuple[str, int, int], tuple[str, str]] = {}
    for f in facts:
        for key, line, col, verdict, detail in f.relayed:
            if verdict == "crossing":
                crossing.setdefault((key, line, col), (detail, f.key))
    for f, sites in files:
        for site in sites:
            hit = crossing.get((f.key, site.line, site.col))
            if hit is not None and site.verdict != "crossing":
                site.verdict, site.detail, site.culprit = "crossing", \
                    f"called from {display.get(hit[1], hit[1])}: {hit[0]}", ""
                continue
            scope = f.scopes.get((site.line, site.col))
            if site.verdict not in SAFE or scope is None or not scope[1]:
                continue
            via = elsewhere.get((f.key, scope[0])) or elsewhere.get((f.key, "*"))
            if via is not None:
                site.verdict, site.detail = "unresolved", CALLED_ELSEWHERE
                site.culprit = f"{scope[0]}, imported by {display.get(via, via)}"
