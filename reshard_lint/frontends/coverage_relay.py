"""``reshard-lint coverage``: a site that only other files' calls reach, judged by them.

A site in a function of one module that no code of its own module calls (its parameters
are unknown there) runs only for the calls other files make. The analysis of each of
those files runs the function with the call's arguments (analysis/functions.py
``relayed``) and keeps the verdict each run gives the site. Once every file of the run is
analysed, the site takes the join of those verdicts, as the runs of the program see them,
when every way the site runs is such a run:

* the site stands directly in the body of a top-level function ``F`` (not in a lambda,
  a nested ``def`` or class, whose calls may come later or from elsewhere), and ``F``
  and every top-level function of its module that reaches it (``R``: the names their
  bodies read, coverage_modules._reach) is a plain function: no decorator, no
  ``yield``, not async, no class among them (a method runs for calls on instances);
* the module's own code names no member of ``R`` but inside ``R``'s bodies, and there
  only as the function of a call outside any nested ``def`` or lambda (a function
  passed as a value, stored or decorated is called where the analysis does not see);
* in every other file of the run, each reference to a name of ``R`` (a name, an
  attribute, a string, an ``import ... as``) is a call the analysis ran through, every
  time it ran it, with every test on the way decided and every function of ``R`` it
  met run with its arguments (no memoized result, bound or recursion: ``unfollowed``),
  and no function of another module left unrun; that call stands in the file's
  module-level code, or directly in a plain top-level function of the file that no other
  file names (whose own run sees every call of it: analysis/callsites.py);
* no file of the run is one the analysis could not read.

The join: a crossing in one run makes the site a crossing (coverage_modules.py, before
this); an unresolved run leaves it unresolved, for that run's reason; otherwise the
widest harmless verdict (host data, then the same devices, then the same pieces: each
claim holds for the runs the narrower ones describe). Files outside the run are not
seen: ``coverage`` of part of a project judges with the calls of that part.
"""

from __future__ import annotations

import ast
import os
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Optional

from ..stages.ast_walk import own_scope

# The harmless verdicts, narrowest first: a run of a narrower one is a run the wider
# one describes (host data moves nothing; the same devices in the same order move
# nothing; the same pieces: no device receives a piece its own mesh would not give it).
WIDTH = {"host_data": 0, "same_devices": 1, "same_pieces": 2}
_WORDS = {"host_data": "host data", "same_devices": "the same devices", "same_pieces": "the same pieces"}

Key = tuple[int, int]  # (line, 1-based column)


@dataclass
class RelayFacts:
    """What the judgement needs of one file, plain data (coverage's workers pickle it)."""

    # name -> how often the file names it (names_in: not reads of its own def of that name)
    refs: dict[str, int] = field(default_factory=dict)
    # each call here that ran another module's function: (line, col) -> (the name it is
    # spelled with, where it stands: "" module level, a top-level function's name, or
    # "?" deeper; every run reported its transfers; the functions its runs did not run:
    # (file key, name))
    calls: dict[Key, tuple[str, str, bool, frozenset[tuple[str, str]]]] = field(default_factory=dict)
    outside: frozenset[str] = frozenset()  # top-level names named outside top-level functions
    # top-level function -> the top-level names it names other than as a call's function
    escapes: dict[str, frozenset[str]] = field(default_factory=dict)
    plain: frozenset[str] = frozenset()  # top-level functions: no decorator, async or yield
    direct: frozenset[Key] = frozenset()  # sites directly in a top-level function's body
    opaque: bool = False  # a file whose code the analysis could not read


def names_in(tree: ast.AST) -> dict[str, int]:
    """How often ``tree`` names each name: a name, an attribute, a string that could be
    one (``getattr(m, "place")``, but not in ``__all__``: an ``import *`` binds the name,
    and its importer names what it uses), the original of an ``import ... as``."""
    out: dict[str, int] = {}
    if isinstance(tree, ast.Module):
        for stmt in tree.body:
            if not _all_list(stmt):
                for found, count in names_in(stmt).items():
                    out[found] = out.get(found, 0) + count
        # A name the module binds to its own def or class alone reads that one: not
        # another module's function of the same name.
        for own, count in _own_reads(tree).items():
            out[own] -= count
        return out
    for n in ast.walk(tree):
        name = n.id if isinstance(n, ast.Name) else n.attr if isinstance(n, ast.Attribute) else \
            n.value if isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value.isidentifier() else \
            n.name if isinstance(n, ast.alias) and n.asname else None
        if name is not None:
            out[name] = out.get(name, 0) + 1
    return out


def _own_reads(tree: ast.Module) -> dict[str, int]:
    """name -> how often the module reads it, for each name its own top-level ``def`` or
    ``class`` binds and nothing else does: no assignment, ``global``, ``nonlocal`` or
    import of that name anywhere in it, and no ``import *``."""
    defs = {s.name for s in tree.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    reads: dict[str, int] = {}
    for n in ast.walk(tree):
        if isinstance(n, ast.Name) and n.id in defs:
            if isinstance(n.ctx, ast.Load):
                reads[n.id] = reads.get(n.id, 0) + 1
            else:
                defs.discard(n.id)
        elif isinstance(n, (ast.Global, ast.Nonlocal)):
            defs.difference_update(n.names)
        elif isinstance(n, ast.alias):
            if n.name == "*":
                return {}
            defs.discard(n.asname or n.name.split(".")[0])
    return {name: count for name, count in reads.items() if name in defs}


def text_refs(text: str) -> RelayFacts:
    """The references of a file the analysis does not run (none for one Python cannot
    parse, which never runs; opaque for one nested too deep to read)."""
    try:
        return RelayFacts(refs=names_in(ast.parse(text)))
    except (SyntaxError, ValueError):
        return RelayFacts()
    except (RecursionError, MemoryError):
        return RelayFacts(opaque=True)


def relay_facts(ctx: Any, tree: ast.Module, sites: Iterable[Key], key: str) -> RelayFacts:
    out = RelayFacts(refs=names_in(tree))
    want = set(sites)
    defs = {s.name: s for s in tree.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    homes = [d for d in defs.values() if type(d) is ast.FunctionDef
             and any(d.lineno <= line <= (d.end_lineno or d.lineno) for line, _ in want)]
    if homes:  # a site in a function: what its module does with its functions
        _home_facts(ctx, tree, defs, homes, want, out)
    if ctx.relay_runs:
        where = _where(tree, [node for node, _, _ in ctx.relay_runs])
        for node, decided, gaps in ctx.relay_runs:
            spelled = node.func.id if isinstance(getattr(node, "func", None), ast.Name) else \
                node.func.attr if isinstance(getattr(node, "func", None), ast.Attribute) else ""
            if not spelled or id(node) not in where:
                continue
            at = _at(ctx, node)
            files = frozenset((os.path.realpath(f) if f else key, name) for f, name in gaps)
            old = out.calls.get(at)
            if old is not None:
                decided, files = decided and old[2], files | old[3]
            out.calls[at] = (spelled, where[id(node)], decided, files)
    return out


def _home_facts(ctx: Any, tree: ast.Module, defs: Mapping[str, ast.stmt], homes: list[ast.FunctionDef],
                want: set[Key], out: RelayFacts) -> None:
    out.plain = frozenset(name for name, d in defs.items()
                          if type(d) is ast.FunctionDef and not d.decorator_list and not _yields(d))
    outside: set[str] = set()
    for stmt in tree.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            # its decorators, defaults and annotations run at module level
            for part in (*stmt.decorator_list, stmt.args, *([stmt.returns] if stmt.returns else [])):
                outside |= {n.id for n in ast.walk(part) if isinstance(n, ast.Name) and n.id in defs}
            out.escapes[stmt.name] = frozenset(_escaping(stmt.body, set(defs)))
        elif not _all_list(stmt):
            outside |= {name for name in names_in(stmt) if name in defs}
    out.outside = frozenset(outside)
    direct: set[Key] = set()
    for d in homes:
        if d.name in out.plain:
            for node in own_scope(d.body):
                if isinstance(node, ast.Call) and node.lineno in {line for line, _ in want} and _at(ctx, node) in want:
                    direct.add(_at(ctx, node))
    out.direct = frozenset(direct)


def _at(ctx: Any, node: ast.AST) -> Key:
    line, col, _, _ = ctx.span(node)
    return line, col + 1


def _yields(d: ast.FunctionDef) -> bool:
    return any(isinstance(n, (ast.Yield, ast.YieldFrom, ast.Await)) for n in own_scope(d.body))


def _all_list(stmt: ast.stmt) -> bool:
    """``__all__ = [...]`` (or ``+=``): names for ``import *``, whose importers name what
    they use."""
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target] if isinstance(stmt, ast.AugAssign) else []
    return len(targets) == 1 and isinstance(targets[0], ast.Name) and targets[0].id == "__all__"


def _escaping(body: list[ast.stmt], names: set[str]) -> set[str]:
    """The top-level names ``body`` names other than as the function of a call outside
    nested functions and lambdas."""
    called = {id(n.func) for n in own_scope(body) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
    out: set[str] = set()
    for stmt in body:
        for n in ast.walk(stmt):
            if isinstance(n, ast.Name) and n.id in names and id(n) not in called:
                out.add(n.id)
            elif isinstance(n, ast.Attribute) and n.attr in names:
                out.add(n.attr)
    return out


def _where(tree: ast.Module, calls: list[ast.AST]) -> dict[int, str]:
    """id(call) -> "" for a call of module-level code, a plain top-level function's name
    for one directly in its body, "?" for one deeper (a lambda, a nested def, a class) or
    in another function."""
    out: dict[int, str] = {}
    lines = {getattr(c, "lineno", 0) for c in calls}
    for stmt in tree.body:
        if not any(stmt.lineno <= line <= (stmt.end_lineno or stmt.lineno) for line in lines):
            continue
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            # (a decorated, async or generator function runs where its own run may not show)
            plain = type(stmt) is ast.FunctionDef and not stmt.decorator_list and not _yields(stmt)
            scope, body = stmt.name if plain else "?", stmt.body
        elif isinstance(stmt, ast.ClassDef):
            scope, body = "?", stmt.body
        else:
            scope, body = "", [stmt]
        shallow = {id(n) for n in own_scope(body)}
        for part in body:
            for n in ast.walk(part):
                if isinstance(n, ast.Call):
                    out[id(n)] = scope if id(n) in shallow else "?"
    return out


Run = tuple[str, str, str, str]  # a run of the site for a call: (verdict, detail, culprit, file key)


def judged(key: str, at: Key, scope: str, facts: Mapping[str, Any], relay_of: Mapping[str, RelayFacts],
           reach: Mapping[str, Mapping[str, set[str]]], runs: list[Run],
           display: Mapping[str, str]) -> Optional[tuple[str, str, str]]:
    """The verdict (verdict, detail, culprit) of the site at ``at`` of file ``key``, in
    its top-level function ``scope``, from ``runs`` of the calls of other files, when
    those are every way it runs (module docstring); None otherwise. ``reach``: per
    file, name -> the top-level names reaching it."""
    home = relay_of[key]
    if not runs or at not in home.direct or any(r.opaque for r in relay_of.values()):
        return None
    entries = reach[key].get(scope, {scope})
    if not entries <= home.plain or entries & home.outside or \
            any(home.escapes.get(e, frozenset()) & entries for e in entries):
        return None
    for other, relay in relay_of.items():
        if other == key:
            continue
        for name in entries:
            calls = [c for c in relay.calls.values() if c[0] == name]
            if relay.refs.get(name, 0) != len(calls) or not all(
                    decided and all(f == key and n not in entries for f, n in gaps)
                    and _seen_whole(other, where, relay_of, reach, facts)
                    for _, where, decided, gaps in calls):
                return None
    return _join(runs, display)


def _seen_whole(key: str, where: str, relay_of: Mapping[str, RelayFacts],
                reach: Mapping[str, Mapping[str, set[str]]], facts: Mapping[str, Any]) -> bool:
    """A call standing ``where`` in file ``key`` runs as often as the analysis ran it:
    module-level code, or a plain top-level function of the file no other file names and
    no class reaches (its own run sees every call of it)."""
    if where == "":
        return True
    if where == "?":
        return False
    entries = reach[key].get(where, {where})
    if entries & facts[key].classes:
        return False
    return not any(relay.refs.get(name, 0) for other, relay in relay_of.items() if other != key
                   for name in entries)


def _join(runs: list[Run], display: Mapping[str, str]) -> tuple[str, str, str]:
    files = sorted({display.get(f, f) for _, _, _, f in runs})
    for verdict, detail, culprit, f in runs:
        if verdict not in WIDTH:  # unresolved (a crossing was taken before)
            where = f"called from {display.get(f, f)}"
            return "unresolved", detail, f"{culprit}, {where}" if culprit else where
    top = max(runs, key=lambda r: WIDTH[r[0]])
    others = sorted({WIDTH[v] for v, _, _, _ in runs} - {WIDTH[top[0]]})
    mixed = "" if not others else "; " + " or ".join(_WORDS[v] for v in WIDTH if WIDTH[v] in others) + \
        " in the others"
    count = f"{len(runs)} run{'s' if len(runs) != 1 else ''}"
    return top[0], f"called from {', '.join(files)} ({count}{mixed}): {top[1]}", ""
