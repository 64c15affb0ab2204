"""Scopes and binding counts: which names a block binds, and how often.

A name bound at more than one site (or by a loop, a handler, ``global``) is never
stable, so a nested function reading it sees ``UNKNOWN``.
"""

from __future__ import annotations

from typing import Iterator, Optional, Sequence

from ..syntax import nodes as cst

from .values import PATHS, UNKNOWN, QualVal, Value, unknown
from ..qualnames import BUILTINS


class Scope:
    def __init__(self, parent: Optional["Scope"], kind: str, bindings: dict[str, int],
                 node: Optional[cst.CSTNode] = None) -> None:
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
                return unknown(PATHS)
            return self.vars[name]
        if self.kind != "module" and name in self.bindings:
            return unknown(PATHS)  # local but not (yet, or not surely) bound
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
                return unknown(PATHS)
            scope = scope.parent
        if name in BUILTINS:
            return QualVal("builtins." + name)
        return UNKNOWN


def names_in_target(node: cst.BaseExpression) -> Iterator[str]:
    if isinstance(node, cst.Name):
        yield node.value
    elif isinstance(node, (cst.Tuple, cst.List)):
        for el in node.elements:
            yield from names_in_target(el.value)
    elif isinstance(node, cst.StarredElement):
        yield from names_in_target(node.value)


def block(body: cst.BaseSuite) -> Sequence[cst.CSTNode]:
    return body.body  # IndentedBlock and SimpleStatementSuite both have .body


def count_bindings(stmts: Sequence[cst.CSTNode], out: dict[str, int] | None = None) -> dict[str, int]:
    """Binding sites per name in a block, not looking into nested scopes."""
    out = {} if out is None else out

    def add(name: str, n: int = 1) -> None:
        out[name] = out.get(name, 0) + n

    for stmt in stmts:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Assign):
                    for t in small.targets:
                        for n in names_in_target(t.target):
                            add(n)
                elif isinstance(small, (cst.AnnAssign, cst.AugAssign)):
                    if isinstance(small.target, cst.Name) and (
                        not isinstance(small, cst.AnnAssign) or small.value is not None
                    ):
                        add(small.target.value)
                elif isinstance(small, (cst.Import, cst.ImportFrom)):
                    names = small.names
                    if isinstance(names, cst.ImportStar):
                        continue
                    for alias in names:
                        if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                            add(alias.asname.name.value)
                        else:
                            top = alias.name
                            while isinstance(top, cst.Attribute):
                                top = top.value
                            # `import jax` and `import jax.numpy` bind `jax` to one module:
                            # one binding, however many submodules are imported.
                            if isinstance(top, cst.Name) and "\0import " + top.value not in out:
                                out["\0import " + top.value] = 1
                                add(top.value)
                elif isinstance(small, (cst.Global, cst.Nonlocal)):
                    for n in small.names:
                        add(n.name.value, 2)  # never stable
                elif isinstance(small, cst.Del):
                    for n in names_in_target(small.target):
                        add(n, 2)
        elif isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            add(stmt.name.value)
        elif isinstance(stmt, cst.If):
            count_bindings(block(stmt.body), out)
            orelse = stmt.orelse
            if isinstance(orelse, cst.If):
                count_bindings([orelse], out)
            elif isinstance(orelse, cst.Else):
                count_bindings(block(orelse.body), out)
        elif isinstance(stmt, (cst.For, cst.While)):
            if isinstance(stmt, cst.For):
                for n in names_in_target(stmt.target):
                    add(n, 2)
            count_bindings(block(stmt.body), out)
            if stmt.orelse is not None:
                count_bindings(block(stmt.orelse.body), out)
        elif isinstance(stmt, (cst.Try, cst.TryStar)):
            count_bindings(block(stmt.body), out)
            for h in stmt.handlers:
                if h.name is not None and isinstance(h.name.name, cst.Name):
                    add(h.name.name.value, 2)
                count_bindings(block(h.body), out)
            if stmt.orelse is not None:
                count_bindings(block(stmt.orelse.body), out)
            if stmt.finalbody is not None:
                count_bindings(block(stmt.finalbody.body), out)
        elif isinstance(stmt, cst.With):
            for item in stmt.items:
                if item.asname is not None:
                    for n in names_in_target(item.asname.name):  # type: ignore[arg-type]
                        add(n)
            count_bindings(block(stmt.body), out)
        elif isinstance(stmt, cst.Match):
            for case in stmt.cases:
                count_bindings(block(case.body), out)
    return out


def with_rebound(scope: "Scope", stmts: Sequence[cst.CSTNode]) -> "Scope":
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


def _rebound_from_inside(stmts: Sequence[cst.CSTNode], bindings: dict[str, int], module: bool) -> set[str]:
    keyword = cst.Global if module else cst.Nonlocal
    found: set[str] = set()
    todo: list[tuple[cst.CSTNode, bool]] = [(s, False) for s in stmts]
    while todo:
        stmt, nested = todo.pop()
        # A one-line body (``def f(): global X``) holds small statements themselves.
        smalls = stmt.body if isinstance(stmt, cst.SimpleStatementLine) else \
            [stmt] if isinstance(stmt, cst.BaseSmallStatement) else None
        if smalls is not None:
            if nested:
                for small in smalls:
                    if isinstance(small, keyword):
                        found.update(n.name.value for n in small.names
                                     if module or n.name.value in bindings)
            continue
        inside = nested or isinstance(stmt, cst.FunctionDef)
        for child in _blocks(stmt):
            todo.extend((s, inside) for s in child)
    return found


def _blocks(stmt: cst.CSTNode) -> list[Sequence[cst.CSTNode]]:
    """The statement lists a compound statement holds."""
    out: list[Sequence[cst.CSTNode]] = []
    for name in ("body", "orelse", "finalbody"):
        part = getattr(stmt, name, None)
        if isinstance(part, cst.If):
            out.append([part])
        elif part is not None:
            inner = getattr(part, "body", None)
            if isinstance(inner, (cst.IndentedBlock, cst.SimpleStatementSuite)):
                inner = inner.body  # an Else/Finally holds a suite
            if isinstance(inner, (list, tuple)):
                out.append(inner)
    for h in getattr(stmt, "handlers", ()) or ():
        out.append(block(h.body))
    for case in getattr(stmt, "cases", ()) or ():
        out.append(block(case.body))
    return out
