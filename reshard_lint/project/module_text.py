"""What a summary runs of a module's text: its module-level code, and the bodies importers
can reach through it, every other body blanked out.

Blanking keeps every line's number and every kept node's column (``pass``, then empty
lines), so messages point into the real file. Only module-level values, and the
functions and classes importers call (defs.py), are exported: a 2,000-line module of
helpers then costs the tree and the interpreter its module-level lines, and a
1,500-line class an importer constructs costs its ``__init__`` and the methods that
build device values.
"""

from __future__ import annotations

import ast
from typing import NamedTuple

from ..core.vocabulary import BUILD_WORDS
from ..stages.ast_walk import walk
from .guarded import guarded_names


class ModuleLevel(NamedTuple):
    """What a summary of a module's text runs."""

    shape: str  # hashes.summary_part of it
    tree: ast.Module | None  # Python's tree of the whole text; None: nothing runs (no parse, too deep)
    body: str  # the text with the bodies no importer reaches blanked out
    rebound: set[str]  # names a function declares ``global``: not exported
    called: frozenset[str]  # the functions kept for importers to call (a full summary)
    guarded: set[str]  # names bound once inside a module-level if/try/with block (guarded.py)


def module_level(text: str, full: bool) -> ModuleLevel:
    """What ``Projects._summarise`` runs of ``text``, and the summary part of its interface
    (the warm ``check`` asks for that alone, interface.py); ``full``: keeping the
    functions importers call (defs.py), its summary part marked ``F``."""
    from ..stages import newer_syntax
    from ..stages.nesting import too_deep
    from .defs import callable_names, config_classes, device_functions
    from .hashes import summary_part
    from .registries import candidates, decorated_by_own

    mark = "F" if full else ""
    try:
        tree = newer_syntax.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return ModuleLevel(mark + summary_part("\0unparsable", set()), None, text, set(), frozenset(), set())
    if too_deep(text, tree) is not None:
        return ModuleLevel(mark + summary_part("\0too deep", set()), None, text, set(), frozenset(), set())
    called = callable_names(text) | device_functions(text) | config_classes(text) if full else frozenset()
    if full and candidates(tree):
        called |= decorated_by_own(tree)  # what a registry's importer calls (registries.py)
    lines = text.split("\n")
    body = _module_level_text(text, lines, tree, called)
    rebound = _declared_global(text, tree)
    guarded = guarded_names(tree, lines) if "\n " in text or "\n\t" in text else set()
    return ModuleLevel(mark + summary_part(body, rebound), tree, body, rebound, called, guarded)


Method = ast.FunctionDef | ast.AsyncFunctionDef
# A blanked method's stand-in reads this name, which nothing binds: the analysis takes
# it as a value it does not know.
UNKNOWN_NAME = "__reshard_lint_unknown__"
# Methods a construction runs whatever they say.
_CONSTRUCTION = ("__init__", "__post_init__", "__new__", "setup")
# What a method that gives an importer a device value says: it builds devices, a mesh or
# a sharding, or moves an array (a method that only reads ``self.mesh`` to save a
# checkpoint gives nothing); a method this short is kept whatever it says (a property
# returning ``self._mesh``).
_BUILD_WORDS = BUILD_WORDS  # core/vocabulary.py
_SHORT_LINES = 4


def _module_level_text(text: str, text_lines: list[str], tree: ast.Module,
                       keep: frozenset[str] = frozenset()) -> str:
    """``text`` with the bodies of the functions its module-level code and the kept
    functions and classes (``keep``) cannot reach blanked out, and, in a class it keeps,
    the methods that build and move nothing replaced by a stand-in (``_stand_in``)."""
    defs: dict[str, list[ast.AST]] = {}
    roots: list[ast.AST] = []
    stand_ins: list[Method] = []
    for stmt in tree.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            defs.setdefault(stmt.name, []).append(stmt)
            roots.extend(stmt.decorator_list)
            roots.extend(stmt.args.defaults)
            if stmt.name in keep:
                roots.append(stmt)
        elif isinstance(stmt, ast.ClassDef):
            defs.setdefault(stmt.name, []).append(stmt)
            roots.extend([*stmt.bases, *stmt.decorator_list])
        else:
            roots.append(stmt)
    lines = list(text_lines)
    reached: set[str] = set(keep)
    # A class enters once: a kept one here, any other when its name is first reached.
    todo = roots + [c for name in keep for c in defs.get(name, ()) if isinstance(c, ast.ClassDef)]
    while todo:
        names: set[str] = set()
        for node in todo:
            if isinstance(node, ast.ClassDef):
                kept, replaced = _class_parts(lines, node)
                stand_ins.extend(replaced)
                names |= {n.id for part in kept for n in walk(part) if type(n) is ast.Name}
                continue
            names |= {n.id for n in walk(node) if type(n) is ast.Name}
        todo = [d for name in names - reached if name in defs for d in defs[name]]
        reached |= names
    blanked = False
    for name, nodes in defs.items():
        if name in reached:
            continue
        for node in nodes:
            blanked = _replace_body(lines, node, "pass") or blanked
    for method in stand_ins:
        blanked = _replace_body(lines, method, _stand_in(method)) or blanked
    return "\n".join(lines) if blanked else text


def _class_parts(lines: list[str], cls: ast.ClassDef) -> tuple[list[ast.AST], list[Method]]:
    """What of a reached class runs as written (its bases, decorators, statements, and
    the methods a construction runs, that build device values or move arrays, or that
    are a few lines long), and the methods replaced by stand-ins."""
    kept: list[ast.AST | None] = [*cls.bases, *cls.decorator_list]  # kw_defaults hold None
    replaced: list[Method] = []
    for stmt in cls.body:
        if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) or stmt.name in _CONSTRUCTION:
            kept.append(stmt)
            continue
        kept.extend([*stmt.decorator_list, *stmt.args.defaults, *stmt.args.kw_defaults])
        end = stmt.end_lineno or stmt.lineno
        source = "\n".join(lines[stmt.lineno - 1: end])
        if end - stmt.body[0].lineno < _SHORT_LINES \
                or any(w in source for w in _BUILD_WORDS):
            kept.append(stmt)
        else:
            replaced.append(stmt)
    return [k for k in kept if k is not None], replaced


def _stand_in(method: Method) -> str:
    """A body that assigns the same ``self`` attributes as the method's own (the class's
    analysis knows an attribute only when one statement assigns it: classes.py), each
    to a value the analysis does not know, and returns one."""
    sites: dict[str, int] = {}

    def count(target: ast.AST, n: int) -> None:
        if isinstance(target, (ast.Tuple, ast.List)):
            for el in target.elts:
                count(el, n)
        elif isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) \
                and target.value.id == "self":
            sites[target.attr] = sites.get(target.attr, 0) + n

    def walk(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                continue  # a nested class's `self` is another object
            if isinstance(child, ast.Assign):
                for t in child.targets:
                    count(t, 1)
            elif isinstance(child, ast.AugAssign):
                count(child.target, 2)
            elif isinstance(child, ast.AnnAssign) and child.value is not None:
                count(child.target, 1)
            walk(child)

    walk(method)
    stores = "".join(f"self.{a} = " * min(n, 2) for a, n in sorted(sites.items()))
    return f"{stores}{UNKNOWN_NAME}; return {UNKNOWN_NAME}" if stores else f"return {UNKNOWN_NAME}"


def _replace_body(lines: list[str], node: ast.AST, stand_in: str) -> bool:
    """Put ``stand_in`` on the first line of ``node``'s body and empty the rest; False
    for a body on the line of its ``def`` (nothing to save)."""
    body = node.body  # type: ignore[attr-defined]
    first_stmt = body[0]
    first = min([first_stmt.lineno, *(d.lineno for d in getattr(first_stmt, "decorator_list", ()))])
    last = node.end_lineno or body[-1].lineno  # type: ignore[attr-defined]
    if first <= node.lineno or first - 1 >= len(lines):  # type: ignore[attr-defined]
        return False
    indent = lines[first - 1][: len(lines[first - 1]) - len(lines[first - 1].lstrip())]
    lines[first - 1] = indent + stand_in
    for i in range(first, min(last, len(lines))):
        lines[i] = ""
    return True


def _declared_global(text: str, tree: ast.Module) -> set[str]:
    """Names a function or class body declares ``global``: it may rebind them, so their
    value at import time is not the one an importer sees."""
    if "global" not in text:
        return set()
    out: set[str] = set()
    # Statements only (a ``global`` is one): the bodies of compound statements, not
    # their expressions.
    todo: list[tuple[ast.stmt, bool]] = [(stmt, False) for stmt in tree.body]
    while todo:
        stmt, inside = todo.pop()
        t = type(stmt)
        if t is ast.Global:
            if inside:
                out.update(stmt.names)  # type: ignore[attr-defined]
            continue
        inside = inside or t is ast.FunctionDef or t is ast.AsyncFunctionDef or t is ast.ClassDef
        for part in (getattr(stmt, "body", None), getattr(stmt, "orelse", None),
                     getattr(stmt, "finalbody", None)):
            if type(part) is list:
                todo.extend((s, inside) for s in part)
        for h in getattr(stmt, "handlers", ()) or getattr(stmt, "cases", ()):
            todo.extend((s, inside) for s in h.body)
    return out
