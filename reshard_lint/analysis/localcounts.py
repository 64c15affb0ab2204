"""Call counts inside one function, for the functions defined in it.

The module-wide counts (call_counts.py) lump every ``f`` of a file together: in a test
file hundreds of methods define a local ``def f(x)``, and one of them handing its ``f``
to ``jax.grad`` makes every other ``f`` look escaped. A function defined in another
function is visible only inside that function's body (Python's scoping), so its calls
and references are counted there, unless the body declares the name ``global`` or
``nonlocal`` (then the def binds a name outside).

Names read in positions this walk does not know are counted as references, so an
unfamiliar construct can only make a function look escaped (unknown), never hide a use.
"""

from __future__ import annotations

import ast
from typing import Optional, Sequence

from ..stages.call_counts import TRACES, TREE_MAPS, WRAPPERS, SyntaxCounts
from .tree import arg_keyword, arg_star, arg_value, call_args


def local_counts(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> Optional[SyntaxCounts]:
    """Calls and references of names in ``fn``'s body; None when it declares a name
    ``global`` or ``nonlocal``: what it defines may then be read from outside."""
    walker = _Walker()
    walker.nodes(fn.body)
    return None if walker.declared else walker.counts


def _tail(func: ast.expr) -> str:
    if type(func) is ast.Name:
        return func.id  # type: ignore[attr-defined]
    if type(func) is ast.Attribute:
        return func.attr  # type: ignore[attr-defined]
    return ""


def _first_positional(call: ast.Call) -> Optional[ast.expr]:
    """The first argument as written, when it is a plain positional one."""
    args = call_args(call)
    if args and arg_keyword(args[0]) is None and not arg_star(args[0]):
        return arg_value(args[0])
    return None


def _wrapped(f: ast.expr) -> Optional[str]:
    """As call_counts._wrapped: ``f`` of ``jax.jit(f)(x)``, ``jax.jit(jax.grad(f))(x)``."""
    while type(f) is ast.Call and (first := _first_positional(f)) is not None:  # type: ignore[arg-type]
        if _tail(f.func) not in WRAPPERS:  # type: ignore[attr-defined]
            return None
        f = first
        if type(f) is ast.Name:
            return f.id  # type: ignore[attr-defined]
    return None


class _Walker:
    def __init__(self) -> None:
        self.counts = SyntaxCounts()
        self.declared = False

    def nodes(self, nodes: Sequence[ast.AST]) -> None:
        for node in nodes:
            self.node(node)

    def node(self, node: ast.AST) -> None:
        t = type(node)
        if t is ast.Name:
            _add(self.counts.refs, node.id)  # type: ignore[attr-defined]
            return
        handler = _HANDLERS.get(t)
        if handler is not None:
            handler(self, node)
            return
        for child in ast.iter_child_nodes(node):
            self.node(child)

    def store(self, target: ast.AST) -> None:
        """An assignment target: a bare name is bound, not read; ``a.b`` and ``a[i]`` read ``a``."""
        t = type(target)
        if t is ast.Name:
            return
        if t is ast.Tuple or t is ast.List:
            for el in target.elts:  # type: ignore[attr-defined]
                self.store(el)
            return
        if t is ast.Starred:
            self.store(target.value)  # type: ignore[attr-defined]
            return
        self.node(target)

    # -- nodes with names that are not reads -------------------------------------------
    def call(self, node: ast.Call) -> None:
        c = self.counts
        func = node.func
        if type(func) is ast.Name:
            _add(c.calls, func.id)
        elif type(func) is ast.Attribute:
            _add(c.attr_calls, func.attr)
            if func.attr in TRACES and type(func.value) is ast.Name:
                _add(c.calls, func.value.id)
        elif (wrapped := _wrapped(func)) is not None:
            _add(c.calls, wrapped)  # jax.jit(f)(x): the analysis calls f there
        tail = _tail(func)
        first = _first_positional(node)
        if type(first) is ast.Name:
            if tail in WRAPPERS:
                _add(c.wrapped, first.id)  # type: ignore[union-attr]
            elif tail in TREE_MAPS:
                _add(c.calls, first.id)  # type: ignore[union-attr]
        self.node(func)
        for a in node.args:
            self.node(arg_value(a))
        for k in node.keywords:
            self.node(k.value)

    def attribute(self, node: ast.Attribute) -> None:
        _add(self.counts.attr_refs, node.attr)
        self.node(node.value)

    def function(self, node: ast.FunctionDef) -> None:
        self.nodes(node.decorator_list)
        self.params(node.args)
        self.nodes(node.body)

    def lambda_(self, node: ast.Lambda) -> None:
        self.params(node.args)
        self.node(node.body)

    def params(self, params: ast.arguments) -> None:
        self.nodes(params.defaults)
        self.nodes([d for d in params.kw_defaults if d is not None])

    def class_(self, node: ast.ClassDef) -> None:
        self.nodes(node.decorator_list)
        self.nodes(node.bases)
        for k in node.keywords:
            self.node(k.value)
        self.nodes(node.body)

    def assign(self, node: ast.Assign) -> None:
        for t in node.targets:
            self.store(t)
        self.node(node.value)

    def ann_assign(self, node: ast.AnnAssign) -> None:
        self.store(node.target)
        if node.value is not None:
            self.node(node.value)

    def aug_assign(self, node: ast.AugAssign) -> None:
        self.store(node.target)
        self.node(node.value)

    def for_(self, node: ast.For) -> None:
        self.store(node.target)
        self.node(node.iter)
        self.nodes(node.body)
        self.nodes(node.orelse)

    def comp_for(self, node: ast.comprehension) -> None:
        self.store(node.target)
        self.node(node.iter)
        self.nodes(node.ifs)

    def with_item(self, node: ast.withitem) -> None:
        self.node(node.context_expr)
        if node.optional_vars is not None:
            self.store(node.optional_vars)

    def handler(self, node: ast.ExceptHandler) -> None:
        if node.type is not None:
            self.node(node.type)
        self.nodes(node.body)

    def try_star(self, node: ast.stmt) -> None:
        """``except* E as e`` counts ``e`` as a read (an unfamiliar construct: a read)."""
        self.nodes(node.body)  # type: ignore[attr-defined]
        for h in node.handlers:  # type: ignore[attr-defined]
            self.nodes(h.body)
            if h.type is not None:
                self.node(h.type)
            if h.name is not None:
                _add(self.counts.refs, h.name)
        self.nodes(node.orelse)  # type: ignore[attr-defined]
        self.nodes(node.finalbody)  # type: ignore[attr-defined]

    def match_case(self, node: ast.match_case) -> None:
        """A case's pattern is not read (the names it binds, the values it matches)."""
        self.nodes(node.body)
        if node.guard is not None:
            self.node(node.guard)

    def named_expr(self, node: ast.NamedExpr) -> None:
        self.store(node.target)
        self.node(node.value)

    def delete(self, node: ast.Delete) -> None:
        for t in node.targets:
            self.store(t)

    def declares(self, node: ast.AST) -> None:
        self.declared = True

    def skip(self, node: ast.AST) -> None:
        pass  # imports bind names


_HANDLERS = {
    ast.Call: _Walker.call, ast.Attribute: _Walker.attribute, ast.FunctionDef: _Walker.function,
    ast.AsyncFunctionDef: _Walker.function, ast.Lambda: _Walker.lambda_, ast.ClassDef: _Walker.class_,
    ast.Assign: _Walker.assign, ast.AnnAssign: _Walker.ann_assign, ast.AugAssign: _Walker.aug_assign,
    ast.For: _Walker.for_, ast.AsyncFor: _Walker.for_, ast.comprehension: _Walker.comp_for,
    ast.withitem: _Walker.with_item, ast.ExceptHandler: _Walker.handler, ast.match_case: _Walker.match_case,
    ast.NamedExpr: _Walker.named_expr, ast.Delete: _Walker.delete, ast.Global: _Walker.declares,
    ast.Nonlocal: _Walker.declares, ast.Import: _Walker.skip, ast.ImportFrom: _Walker.skip,
}
if hasattr(ast, "TryStar"):
    _HANDLERS[ast.TryStar] = _Walker.try_star
if hasattr(ast, "TypeAlias"):
    _HANDLERS[ast.TypeAlias] = _Walker.skip  # read as a ``pass``, as the analysis reads it


def _add(d: dict[str, int], key: str) -> None:
    d[key] = d.get(key, 0) + 1
