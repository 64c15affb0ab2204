"""``reshard-lint coverage`` across the files of one run: a function other modules call.

Each file's analysis gives the sites inside its functions the values its own call sites
pass (analysis/callsites.py). A function that another module imports is called there too,
with arguments this file's analysis never saw, and so is every function of its module that
it reaches. Once every file of the run is analysed:

* a call from another file that the analysis ran through (interpreter.emit's relay: the
  call's own arguments) and that crosses makes the site a crossing, with that call named;
* a harmless verdict (``same_devices``, ``same_pieces``, ``host_data``) at a site of a
  function with parameters (or of a class) that another file of the run imports (directly,
  through re-exports, as a module), or that such a function reaches in its module, stands
  only when every importer's every use of the name is a call the analysis ran through and
  every such call finds the site harmless alike; otherwise the site is unresolved.

Only the files of the run are read: ``coverage`` of one module alone does not see its
importers.
"""

from __future__ import annotations

import ast
import builtins
import os
import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from ..analysis.verdicts import CALLER_FREE
from .coverage_relay import RelayFacts, judged, relay_facts, text_refs

SAFE = ("same_devices", "same_pieces", "host_data")
_IMPORT = re.compile(r"^[ \t]*import[ \t]+([\w. \t,]+)", re.MULTILINE)
CALLED_ELSEWHERE = "a parameter of a function other modules call too"

Import = tuple[str, str, str]  # (module file key, name or "*", local name)


@dataclass
class ModuleFacts:
    """What the pass needs of one file, plain data (coverage's workers pickle it)."""

    key: str = ""  # the file's realpath
    root: str = ""  # its project's root ("": none known, any file of the run may import it)
    # (line, 1-based column) of each site -> (top-level function or class, takes arguments)
    scopes: dict[tuple[int, int], tuple[str, bool]] = field(default_factory=dict)
    imports: list[Import] = field(default_factory=list)
    # (file key, line, 1-based column) of a site in another module, the verdict of a call
    # here that ran it (verdict, detail, culprit), and the local name the call is spelled with
    relayed: list[tuple[str, int, int, str, str, str, str]] = field(default_factory=list)
    # top-level function or class -> the top-level names its body reads (this module's)
    reads: dict[str, frozenset[str]] = field(default_factory=dict)
    # name bound by an import -> how often the code reads it, and how many distinct calls
    # spelled with it the analysis ran through (relayed)
    uses: dict[str, int] = field(default_factory=dict)
    relayed_calls: dict[str, int] = field(default_factory=dict)
    classes: frozenset[str] = frozenset()  # top-level classes: their methods are called on instances
    # sites whose moved value is built from module-level names alone (np.zeros(8)): host
    # data whoever calls the function
    fixed: frozenset[tuple[int, int]] = frozenset()
    own: frozenset[tuple[int, int]] = frozenset()  # sites whose target is the value's own sharding
    relay: RelayFacts = field(default_factory=RelayFacts)  # coverage_relay.py


def facts_of(ctx: Any, path: str, sites: Mapping[tuple[int, int], tuple[ast.AST | None, ast.AST | None]],
             relayed: Iterable[tuple[Any, str, str, str]]) -> ModuleFacts:
    """``sites``: this file's sites, (line, 1-based column) -> the value it moves and its
    target, as written; ``relayed``: (event, verdict, detail, culprit) of each transfer of
    another module's function run for a call in this file."""
    out = ModuleFacts(os.path.realpath(path))
    tree = ctx.module.tree
    module_names = _module_names(tree)
    out.fixed = frozenset(at for at, (value, _) in sites.items() if value is not None and all(
        n.id in module_names for n in ast.walk(value) if isinstance(n, ast.Name)))
    # ``device_put(x, x.sharding)``: the array's own devices whoever passes x.
    out.own = frozenset(at for at, (value, target) in sites.items()
                        if value is not None and isinstance(target, ast.Attribute) and target.attr == "sharding"
                        and ast.dump(target.value) == ast.dump(value))
    defs = [stmt for stmt in tree.body if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    for line, col in sites:
        scope = next((d for d in defs if d.lineno <= line <= (d.end_lineno or d.lineno)), None)
        if scope is not None:
            out.scopes[(line, col)] = (scope.name, _takes_arguments(scope))
    names = {stmt.name for stmt in defs}
    out.classes = frozenset(stmt.name for stmt in defs if isinstance(stmt, ast.ClassDef))
    for stmt in defs:
        out.reads[stmt.name] = frozenset(n.id for n in ast.walk(stmt)
                                         if isinstance(n, ast.Name) and n.id in names and n.id != stmt.name)
    view = ctx.project
    if view is not None:
        out.root = os.path.realpath(view.project.layout.root)
        out.imports = list(_imports(tree, view))
    locals_ = {local for _, _, local in out.imports}
    for n in ast.walk(tree):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id in locals_:
            out.uses[n.id] = out.uses.get(n.id, 0) + 1
    out.relay = relay_facts(ctx, tree, sites, out.key)
    calls: dict[str, set[int]] = {}
    for event, verdict, detail, culprit in relayed:
        where = ctx.locate(event.through)
        if where is None or where[0] is None:
            continue
        other, line, col = where
        func = getattr(event.node, "func", None)
        local = func.id if isinstance(func, ast.Name) else ""
        if local:
            calls.setdefault(local, set()).add(id(event.node))
        out.relayed.append((os.path.realpath(other), line, col + 1, verdict, detail, local, culprit))
    out.relayed_calls = {k: len(v) for k, v in calls.items()}
    return out


def text_facts(text: str, path: str, view: Any) -> ModuleFacts:
    """The imports of a file the analysis does not run (no transfer of its own, no call of
    an imported function that moves arrays), read from its import lines."""
    from ..project.module_scan import import_lines

    out = ModuleFacts(os.path.realpath(path), os.path.realpath(view.project.layout.root), relay=text_refs(text))
    froms, _ = import_lines(text)  # (its ``import a as b`` list: every ``import`` line is read below)
    for dots, module, names in froms:
        base = view.absolute(len(dots), module or None) if dots else module
        for part in names.strip("()").split(","):
            name, _, alias = part.strip().partition(" as ")
            if name.strip():
                out.imports.extend(_from_import(view, base, name.strip(), alias.strip() or name.strip()))
    for line in _IMPORT.findall(text):
        for part in line.split(","):
            module, _, alias = part.strip().partition(" as ")
            out.imports.extend(_import(view, module.strip(), alias.strip() or module.strip()))
    return out


def _from_import(view: Any, base: str | None, name: str, local: str) -> Iterable[Import]:
    """``from base import name as local`` of a project module: the name, or, when it is a
    submodule, any attribute of it."""
    index = view.project.index
    mod = index.find(base) if base else None
    if mod is None or mod.path is None:
        return
    sub = index.find(f"{base}.{name}") if name != "*" else None
    if sub is not None and sub.path is not None:
        yield sub.key, "*", local
    else:
        yield mod.key, name, local


def _import(view: Any, module: str, local: str) -> Iterable[Import]:
    """``import module as local`` of a project module: any attribute of it."""
    mod = view.project.index.find(module)
    if mod is not None and mod.path is not None:
        yield mod.key, "*", local


def _module_names(tree: ast.Module) -> frozenset[str]:
    """Names bound at module level (imports, assignments, defs) and Python's builtins."""
    names = set(dir(builtins))
    for stmt in tree.body:
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in stmt.names}
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(stmt.name)
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            names |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return frozenset(names)


def _takes_arguments(stmt: ast.stmt) -> bool:
    if isinstance(stmt, ast.ClassDef):
        return True  # its methods' arguments, and the instance's state, come from the callers
    a = stmt.args  # type: ignore[attr-defined]
    return bool(a.posonlyargs or a.args or a.kwonlyargs or a.vararg or a.kwarg)


def _imports(tree: ast.Module, view: Any) -> Iterable[Import]:
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = view.absolute(node.level, node.module) if node.level else node.module
            for alias in node.names:
                yield from _from_import(view, base, alias.name, alias.asname or alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                yield from _import(view, alias.name, alias.asname or alias.name)


def _importers(files: list[ModuleFacts]) -> dict[tuple[str, str], set[tuple[str, str]]]:
    """(module key, name or "*") -> each (file key, local name) of another file that
    imports it: directly, or through a module that re-exports it (to a fixpoint, by a
    worklist: each (name, importer) pair is added once)."""
    found: dict[tuple[str, str], set[tuple[str, str]]] = {}
    # (re-exporting file key, its local name) -> the (module key, name) it binds
    bound: dict[tuple[str, str], list[tuple[str, str]]] = {}
    work: list[tuple[tuple[str, str], tuple[str, str]]] = []
    for f in files:
        for key, name, local in f.imports:
            bound.setdefault((f.key, local), []).append((key, name))
            if key != f.key:
                work.append(((key, name), (f.key, local)))
    everything: dict[str, list[tuple[str, str]]] = {}  # module key -> all it imports
    for (module, _), origins in bound.items():
        everything.setdefault(module, []).extend(origins)
    while work:
        target, importer = work.pop()
        have = found.setdefault(target, set())
        if importer in have:
            continue
        have.add(importer)
        # Whoever imports the name from ``target``'s module imports what it re-exports.
        module, name = target
        for origin in bound.get((module, name), []) if name != "*" else everything.get(module, []):
            if origin[0] != importer[0]:
                work.append((origin, importer))
    return found


def _reach(f: ModuleFacts) -> dict[str, set[str]]:
    """Top-level name -> the top-level functions and classes of its module that reach it
    (itself included), through the names their bodies read."""
    out: dict[str, set[str]] = {name: {name} for name in f.reads}
    changed = True
    while changed:
        changed = False
        for caller, reads in f.reads.items():
            for callee in reads:
                for entry in list(out.get(caller, {caller})):
                    if callee in out and entry not in out[callee]:
                        out[callee].add(entry)
                        changed = True
    return out


def _complete(importer: ModuleFacts | None, local: str) -> bool:
    """Every read of ``local`` in ``importer`` is a call the analysis ran through."""
    return importer is not None and local != "*" and \
        importer.uses.get(local, 0) == importer.relayed_calls.get(local, 0)


def apply(files: list[tuple[ModuleFacts, list[Any]]], display: dict[str, str]) -> None:
    """Change the sites (coverage.Site, in place) of each (facts, sites) of the run."""
    facts = [f for f, _ in files]
    by_key = {f.key: f for f in facts}
    importers = _importers(facts)
    ran: dict[tuple[str, int, int], list[tuple[str, str, str, str]]] = {}
    for f in facts:
        for key, line, col, verdict, detail, _, culprit in f.relayed:
            ran.setdefault((key, line, col), []).append((verdict, detail, culprit, f.key))
    reaches = {f.key: _reach(f) for f in facts}
    # The files that may call into a module: its project's, any of no known project,
    # and those whose imports name it.
    linked: dict[str, set[str]] = {}
    for (module, _), found in importers.items():
        linked.setdefault(module, set()).update(g for g, _ in found)
    by_root: dict[str, dict[str, RelayFacts]] = {}
    for other in facts:
        by_root.setdefault(other.root, {})[other.key] = other.relay
    relay_of: dict[str, dict[str, RelayFacts]] = {}  # per module: the relay facts of those files
    for f, sites in files:
        reach = reaches[f.key]
        for site in sites:
            runs = ran.get((f.key, site.line, site.col), [])
            hit = next((r for r in runs if r[0] == "crossing"), None)
            if hit is not None and site.verdict != "crossing":
                site.verdict, site.detail, site.culprit = "crossing", \
                    f"called from {display.get(hit[3], hit[3])}: {hit[1]}", ""
                continue
            scope = f.scopes.get((site.line, site.col))
            if site.verdict == "unresolved" and scope is not None:
                # Reached only by other files' calls, each run with its arguments: their join.
                if f.key not in relay_of:
                    relay_of[f.key] = {**by_root.get("", {}), **by_root.get(f.root, {}), f.key: f.relay,
                                       **{k: by_key[k].relay for k in linked.get(f.key, ())}}
                got = judged(f.key, (site.line, site.col), scope[0], by_key, relay_of[f.key], reaches, runs, display)
                if got is not None:
                    site.verdict, site.detail, site.culprit = got
                    continue
            if site.verdict not in SAFE or scope is None or site.detail.startswith(CALLER_FREE) or \
                    site.verdict == "same_devices" and (site.line, site.col) in f.own or \
                    site.verdict == "host_data" and (site.line, site.col) in f.fixed:
                continue  # whoever calls: the array's own sharding, no target, literal data
            entries = [e for e in sorted(reach.get(scope[0], {scope[0]}))
                       if (f.key, e) in importers or (f.key, "*") in importers]
            if not entries or (entries == [scope[0]] and not scope[1]):
                continue  # no other module reaches it, or a function of no arguments
            # A method runs for calls on instances, which no use of the class's name counts.
            whole = entries == [scope[0]] and scope[0] not in f.classes and (f.key, "*") not in importers and \
                all(_complete(by_key.get(g), local) for g, local in importers[(f.key, scope[0])])
            if whole and all(r[0] == site.verdict for r in runs):
                continue  # every call from elsewhere ran through it, harmless alike
            # Name the importer whose uses were not all followed, where there is one.
            who = sorted(importers.get((f.key, entries[0])) or importers[(f.key, "*")])
            g = next((k for k, local in who if not _complete(by_key.get(k), local)), who[0][0])
            site.verdict, site.detail = "unresolved", CALLED_ELSEWHERE
            via = "" if entries[0] == scope[0] else f" (through {entries[0]})"
            site.culprit = f"{scope[0]}{via}, imported by {display.get(g, g)}"
