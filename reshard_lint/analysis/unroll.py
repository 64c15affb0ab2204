"""Loops and comprehensions the analysis runs once per element, as Python does.

A ``for`` statement or a list or dict comprehension over a sequence the analysis knows
exactly (a tuple, list or dict it holds and no statement changed in place, the items,
keys or values of such a dict, ``range`` of literal bounds, ``enumerate`` or ``zip`` of
such) with at most ``MAX_ELEMENTS`` elements runs its body for each element in order
(flow.py, comprehensions.py), when the body is one the analysis can follow exactly
(``plain_body``). Nested ones multiply: a loop runs so only while the product of the
element counts of the loops around it stays within ``MAX_WEIGHT``, and a file runs at
most ``MAX_RUNS`` such bodies in all; past that, the joined loop of flow.py.
"""

from __future__ import annotations

import ast
from typing import Optional, Sequence

from .interpreter_base import InterpreterBase
from .scope import Scope
from .valueops import NO_KEY
from .values import ConstVal, IntVal, QualVal, RangeVal, SeqVal, Value, is_unknown

MAX_ELEMENTS = 8
MAX_WEIGHT = 64  # the product of the element counts of nested loops run per element
MAX_RUNS = 1024  # bodies run per element in one file's analysis


def builtin(scope: Scope, name: str) -> bool:
    """``name`` is Python's own builtin here (not a name the file binds to something else)."""
    v = scope.lookup(name)
    return isinstance(v, QualVal) and v.qual == "builtins." + name or is_unknown(v)


def _call_of(node: ast.expr, name: str, scope: Scope) -> Optional[ast.Call]:
    """``node`` is a call of the builtin ``name`` with plain positional arguments only."""
    if type(node) is not ast.Call or type(node.func) is not ast.Name or node.func.id != name \
            or node.keywords or any(type(a) is ast.Starred for a in node.args) or not builtin(scope, name):
        return None
    return node


def _int(i: int) -> IntVal:
    return IntVal(lambda _m: i, literal=i)


def elements(an: InterpreterBase, iter_node: ast.expr, it: Value, scope: Scope) -> Optional[list[Value]]:
    """What iterating ``it`` (the value of ``iter_node``) gives, element by element,
    where the analysis knows every one and how many there are; None otherwise.
    A dict gives its keys (constants, each once, in the order first written);
    ``enumerate`` the indices as ints; a range of literal bounds its ints."""
    if isinstance(it, SeqVal):
        if it.changed or it.kind not in ("tuple", "list", "dict") or not _sized(an, iter_node, scope):
            return None
        if it.kind == "dict":
            return _keys(it)
        items = list(it.items)
        call = _call_of(iter_node, "enumerate", scope)
        if call is not None and len(call.args) == 1:
            # The model's index is host data standing for every index: here each is its int.
            pairs = [i.items if isinstance(i, SeqVal) and len(i.items) == 2 else None for i in items]
            if any(p is None for p in pairs):
                return None
            items = [SeqVal((_int(n), p[1])) for n, p in enumerate(pairs) if p is not None]
        return items
    if isinstance(it, RangeVal):
        # A range whose bounds are ints spelled out in the source (models/ranges.py).
        r = it.literal()
        if r is None or len(r) > MAX_ELEMENTS:
            return None
        return [_int(i) for i in r]
    if type(iter_node) is ast.Call and type(iter_node.func) is ast.Attribute and iter_node.func.attr == "keys" \
            and not iter_node.args and not iter_node.keywords and _pure(iter_node.func.value):
        recv = _reread(an, iter_node.func.value, scope)
        if isinstance(recv, SeqVal) and recv.kind == "dict" and not recv.changed:
            return _keys(recv)
    return None


def plan(an: InterpreterBase, iter_node: ast.expr, it: Value, scope: Scope) -> Optional[tuple[list[Value], int]]:
    """The elements a loop or comprehension clause over ``it`` runs once each, and the
    weight that run carries (the product of the element counts of the runs around it);
    None where it is not run so: the elements not all known, more than ``MAX_ELEMENTS``,
    or past ``MAX_WEIGHT`` or the file's ``MAX_RUNS``."""
    found = elements(an, iter_node, it, scope)
    if found is None:
        return None
    weight = budget(an, len(found))
    return (found, weight) if weight is not None else None


def budget(an: InterpreterBase, count: int) -> Optional[int]:
    """The weight ``count`` runs of one body carry here (the product of the element
    counts of the runs around them and ``count``); None past ``MAX_ELEMENTS``,
    ``MAX_WEIGHT`` or the file's ``MAX_RUNS`` (a ``jax.tree.map`` callback run once per
    leaf keeps to the same bounds: models/tree_map.py)."""
    if count > MAX_ELEMENTS:
        return None
    weight = an.unroll_weight * max(1, count)
    if weight > MAX_WEIGHT or an.unroll_runs + count > MAX_RUNS:
        return None
    return weight


def _sized(an: InterpreterBase, iter_node: ast.expr, scope: Scope) -> bool:
    """The ``.items()`` and ``.values()`` that ``iter_node`` iterates through are of dicts
    whose length the analysis knows: not one with keys it does not know, which may be
    one key (``{a: 1, b: 2}``), and not one it cannot read again."""
    for node in ast.walk(iter_node):
        if type(node) is ast.Call and type(node.func) is ast.Attribute and node.func.attr in ("items", "values"):
            if not _pure(node.func.value):
                return False
            d = _reread(an, node.func.value, scope)
            if isinstance(d, SeqVal) and d.kind == "dict" and NO_KEY in d.keys and len(d.items) > 1:
                return False
    return True


def _keys(d: SeqVal) -> Optional[list[Value]]:
    if NO_KEY in d.keys or len(d.keys) != len(d.items):
        return None
    return [ConstVal(k) for k in dict.fromkeys(d.keys)]


def _reread(an: InterpreterBase, node: ast.expr, scope: Scope) -> Value:
    """The value of ``node`` (``_pure``: a read with no effect), read again quietly."""
    an.quiet += 1
    try:
        return an.eval(node, scope)
    finally:
        an.quiet -= 1


def _pure(node: ast.expr) -> bool:
    """A name or an attribute chain of one, or a subscript of such by a constant: read
    again, it has the value it had (``self.meshes``, ``cfg['meshes']``)."""
    while type(node) is ast.Attribute or type(node) is ast.Subscript:
        if type(node) is ast.Subscript and type(node.slice) is not ast.Constant:
            return False
        node = node.value
    return type(node) is ast.Name


def sources(an: InterpreterBase, iter_node: ast.expr, it: Value, scope: Scope) -> list[tuple[SeqVal, tuple[Value, ...]]]:
    """The lists and dicts an iteration reads as it goes, with what they hold now: what
    is iterated (a list or dict, read again by its name or attribute chain), also
    through ``.items()``, ``.values()``, ``.keys()``, ``enumerate``, ``zip``. A body
    that changes one in place changes what the next steps give (Python's list iterator
    reads the list as it is then), so the per-element run stops there (``changed``)."""
    found: list[SeqVal] = [it] if isinstance(it, SeqVal) and it.kind in ("list", "dict") else []
    todo = [iter_node]
    an.quiet += 1
    try:
        while todo:
            node = todo.pop()
            if _pure(node):
                v = an.eval(node, scope)
                if isinstance(v, SeqVal) and v.kind in ("list", "dict") and all(v is not f for f in found):
                    found.append(v)
            elif type(node) is ast.Call:
                if type(node.func) is ast.Attribute:
                    todo.append(node.func.value)
                todo.extend(a for a in node.args if type(a) is not ast.Starred)
    finally:
        an.quiet -= 1
    return [(s, s.items) for s in found]


def changed(seen: list[tuple[SeqVal, tuple[Value, ...]]]) -> bool:
    """Has one of the containers ``sources`` saw been changed in place since?"""
    return any(s.changed or s.items is not items for s, items in seen)


def plain_body(stmts: Sequence[ast.stmt]) -> bool:
    """A loop body the analysis runs once per element exactly as Python does: no
    ``break`` or ``continue`` of this loop (they depend on values it may not know), no
    ``return``, ``raise``, ``try``, ``yield`` or ``await`` (a path that leaves the loop
    early or resumes later), no ``def``, ``class`` or lambda bound to a name (each run
    would make a function that runs once its calls are seen)."""
    return _plain(stmts, True)


def _plain(stmts: Sequence[ast.stmt], own: bool) -> bool:
    for stmt in stmts:
        t = type(stmt)
        if t in _REFUSED or (own and (t is ast.Break or t is ast.Continue)):
            return False
        if isinstance(stmt, ast.Assign) and type(stmt.value) is ast.Lambda:
            return False
        nested_loop = t is ast.For or t is ast.While or t is ast.AsyncFor
        for name in ("body", "orelse"):
            part = getattr(stmt, name, None)
            if part and not _plain(part, own and not nested_loop):
                return False
        for case in getattr(stmt, "cases", ()) or ():
            if not _plain(case.body, own):
                return False
        for field in _HEADERS:
            part = getattr(stmt, field, None)
            parts = part if isinstance(part, list) else [part] if part is not None else []
            if any(isinstance(n, _SUSPENDS) for p in parts for n in ast.walk(p)):
                return False
        if not isinstance(stmt, _COMPOUND) and any(isinstance(n, _SUSPENDS) for n in ast.walk(stmt)):
            return False
    return True


_REFUSED = (ast.Return, ast.Raise, ast.Try, getattr(ast, "TryStar", ast.Try), ast.FunctionDef,
            ast.AsyncFunctionDef, ast.ClassDef, ast.AsyncFor, ast.AsyncWith)
_SUSPENDS = (ast.Yield, ast.YieldFrom, ast.Await)
_COMPOUND = (ast.If, ast.For, ast.While, ast.With, ast.Match)
_HEADERS = ("test", "iter", "target", "items", "subject")
