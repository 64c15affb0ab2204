"""Scopes and binding counts: which names a block binds, and how often.

A name bound at more than one site (or by a loop, a handler, ``global``) is never
stable, so a nested function reading it sees ``UNKNOWN``.

These are the interpreter's scopes. The slicing's (stages/scoping.py) answer another
question, a unit's free and bound names over its nested scopes, on the whole text.
"""

from __future__ import annotations

import ast
from typing import Iterator, Optional, Sequence

from .values import PATHS, UNKNOWN, QualVal, Value, unknown
from ..core.qualnames import BUILTINS


class Scope:
    def __init__(self, parent: Optional["Scope"], kind: str, bindings: dict[str, int],
                 node: Optional[ast.AST] = None) -> None:
        self.parent = parent
        self.kind = kind  # 'module' | 'function' | 'class' | 'comprehension'
        self.vars: dict[str, Value] = {}
        self.bindings = bindings  # name -> number of binding sites in this scope
        self.node = node  # the function whose body this is
        # Names a nested function rebinds (``global``, ``nonlocal``): a call may change
        # them under this scope's feet, so no read of them here is sure either.
        self.volatile: frozenset[str] = frozenset()

    def lookup(self, name: str) -> Value:
        if name in self.vars:
            if name in self.volatile:
                return unknown(PATHS, f"'{name}'")
            return self.vars[name]
        if self.kind != "module" and name in self.bindings:
            return unknown(PATHS, f"'{name}'")  # local but not (yet, or not surely) bound
        if self.kind == "comprehension" and self.parent is not None and self.parent.kind != "class":
            # A list or set comprehension runs where it stands: a name of the enclosing
            # scope has the value it has there at this point, however often it is bound,
            # unlike a nested function's, which runs later. (A class body's names are not
            # visible to it.)
            return self.parent.lookup(name)
        scope = self.parent
        while scope is not None:
            if scope.kind != "class" and name in scope.bindings:
                if scope.bindings[name] == 1 and name in scope.vars:
                    return scope.vars[name]
                return unknown(PATHS, f"'{name}'")
            scope = scope.parent
        if name in BUILTINS:
            return QualVal("builtins." + name)
        return UNKNOWN


def names_in_target(node: ast.expr) -> Iterator[str]:
    if type(node) is ast.Name:
        yield node.id
    elif isinstance(node, (ast.Tuple, ast.List)):
        for el in node.elts:
            yield from names_in_target(el)
    elif type(node) is ast.Starred:
        yield from names_in_target(node.value)


COMPOUND = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.If, ast.For, ast.AsyncFor, ast.While,
            ast.Try, ast.With, ast.AsyncWith, ast.Match, getattr(ast, "TryStar", ast.Try))


FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
# A try statement (TryStar: Python 3.11, with the same fields).
_TRIES: tuple[type[ast.Try] | type[ast.TryStar], ...] = (ast.Try, getattr(ast, "TryStar", ast.Try))


def count_bindings(stmts: Sequence[ast.stmt], out: dict[str, int] | None = None) -> dict[str, int]:
    """Binding sites per name in a block, not looking into nested scopes."""
    out = {} if out is None else out

    def add(name: str, n: int = 1) -> None:
        out[name] = out.get(name, 0) + n

    for stmt in stmts:
        if isinstance(stmt, ast.Assign):
            for target in stmt.targets:
                for n in names_in_target(target):
                    add(n)
        elif isinstance(stmt, (ast.AnnAssign, ast.AugAssign)):
            if type(stmt.target) is ast.Name and (
                not isinstance(stmt, ast.AnnAssign) or stmt.value is not None
            ):
                add(stmt.target.id)
        elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
            for alias in stmt.names:
                if alias.name == "*":
                    continue
                if alias.asname is not None:
                    add(alias.asname)
                else:
                    top = alias.name.split(".")[0]
                    # `import jax` and `import jax.numpy` bind `jax` to one module:
                    # one binding, however many submodules are imported.
                    if "\0import " + top not in out:
                        out["\0import " + top] = 1
                        add(top)
        elif isinstance(stmt, (ast.Global, ast.Nonlocal)):
            for name in stmt.names:
                add(name, 2)  # never stable
        elif isinstance(stmt, ast.Delete):
            for target in stmt.targets:
                for n in names_in_target(target):
                    add(n, 2)
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            add(stmt.name)
        elif isinstance(stmt, ast.If):
            count_bindings(stmt.body, out)
            count_bindings(stmt.orelse, out)
        elif isinstance(stmt, (ast.For, ast.AsyncFor, ast.While)):
            if not isinstance(stmt, ast.While):
                for n in names_in_target(stmt.target):
                    add(n, 2)
            count_bindings(stmt.body, out)
            count_bindings(stmt.orelse, out)
        elif isinstance(stmt, _TRIES):
            count_bindings(stmt.body, out)
            for h in stmt.handlers:
                if h.name is not None:
                    add(h.name, 2)
                count_bindings(h.body, out)
            count_bindings(stmt.orelse, out)
            count_bindings(stmt.finalbody, out)
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            for item in stmt.items:
                if item.optional_vars is not None:
                    for n in names_in_target(item.optional_vars):
                        add(n)
            count_bindings(stmt.body, out)
        elif isinstance(stmt, ast.Match):
            for case in stmt.cases:
                count_bindings(case.body, out)
    return out


def with_rebound(scope: "Scope", stmts: Sequence[ast.stmt]) -> "Scope":
    """``scope``, whose body is ``stmts``, with the names a function nested in them (at
    any depth) rebinds never stable, for nested functions (binding count) and for the
    scope itself (``volatile``): those declared ``global`` in a module, ``nonlocal`` in a
    function that binds them. ``def setup(): global MESH; MESH = half`` changes what
    every reader of ``MESH`` sees once it is called."""
    names = _rebound_from_inside(stmts, scope.bindings, scope.kind == "module")
    if names:
        for name in names:
            scope.bindings[name] = scope.bindings.get(name, 0) + 2
        scope.volatile = frozenset(names)
    return scope


def _rebound_from_inside(stmts: Sequence[ast.stmt], bindings: dict[str, int], module: bool) -> set[str]:
    keyword = ast.Global if module else ast.Nonlocal
    found: set[str] = set()
    todo: list[tuple[ast.stmt, bool]] = [(s, False) for s in stmts]
    while todo:
        stmt, nested = todo.pop()
        if not isinstance(stmt, COMPOUND):
            if nested and type(stmt) is keyword:
                found.update(n for n in stmt.names if module or n in bindings)
            continue
        inside = nested or isinstance(stmt, FUNCTIONS)
        for child in blocks(stmt):
            todo.extend((s, inside) for s in child)
    return found


def blocks(stmt: ast.stmt) -> list[Sequence[ast.stmt]]:
    """The statement lists a compound statement holds."""
    out: list[Sequence[ast.stmt]] = []
    for name in ("body", "orelse", "finalbody"):
        part = getattr(stmt, name, None)
        if part:
            out.append(part)
    for h in getattr(stmt, "handlers", ()) or ():
        out.append(h.body)
    for case in getattr(stmt, "cases", ()) or ():
        out.append(case.body)
    return out
