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

from typing import Optional

from ..syntax import nodes as cst

from ..call_counts import TRACES, TREE_MAPS, WRAPPERS, SyntaxCounts
from ..syntax.nodes import iter_children as children


def local_counts(fn: cst.FunctionDef) -> Optional[SyntaxCounts]:
    """Calls and references of names in ``fn``'s body; None when it declares a name
    ``global`` or ``nonlocal``: what it defines may then be read from outside."""
    walker = _Walker()
    walker.node(fn.body)
    return None if walker.declared else walker.counts


def _tail(func: cst.BaseExpression) -> str:
    if isinstance(func, cst.Name):
        return func.value
    if isinstance(func, cst.Attribute):
        return func.attr.value
    return ""


def _wrapped(f: cst.BaseExpression) -> Optional[str]:
    """As call_counts._wrapped: ``f`` of ``jax.jit(f)(x)``, ``jax.jit(jax.grad(f))(x)``."""
    while isinstance(f, cst.Call) and f.args and f.args[0].keyword is None and not f.args[0].star:
        if _tail(f.func) not in WRAPPERS:
            return None
        f = f.args[0].value
        if isinstance(f, cst.Name):
            return f.value
    return None


class _Walker:
    def __init__(self) -> None:
        self.counts = SyntaxCounts()
        self.declared = False

    def node(self, node: cst.CSTNode) -> None:
        t = type(node)
        if t is cst.Name:
            _add(self.counts.refs, node.value)  # type: ignore[attr-defined]
            return
        handler = _HANDLERS.get(t)
        if handler is not None:
            handler(self, node)
            return
        for child in children(node):
            self.node(child)

    def store(self, target: cst.CSTNode) -> None:
        """An assignment target: a bare name is bound, not read; ``a.b`` and ``a[i]`` read ``a``."""
        if isinstance(target, cst.Name):
            return
        if isinstance(target, (cst.Tuple, cst.List)):
            for el in target.elements:
                self.store(el.value)
            return
        if isinstance(target, cst.StarredElement):
            self.store(target.value)
            return
        self.node(target)

    # -- nodes with names that are not reads -------------------------------------------
    def call(self, node: cst.Call) -> None:
        c = self.counts
        func = node.func
        if isinstance(func, cst.Name):
            _add(c.calls, func.value)
        elif isinstance(func, cst.Attribute):
            _add(c.attr_calls, func.attr.value)
            if func.attr.value in TRACES and isinstance(func.value, cst.Name):
                _add(c.calls, func.value.value)
        elif (wrapped := _wrapped(func)) is not None:
            _add(c.calls, wrapped)  # jax.jit(f)(x): the analysis calls f there
        tail = _tail(func)
        first = node.args[0].value if node.args and node.args[0].keyword is None and not node.args[0].star \
            else None
        if isinstance(first, cst.Name):
            if tail in WRAPPERS:
                _add(c.wrapped, first.value)
            elif tail in TREE_MAPS:
                _add(c.calls, first.value)
        self.node(func)
        for a in node.args:
            self.node(a.value)

    def attribute(self, node: cst.Attribute) -> None:
        _add(self.counts.attr_refs, node.attr.value)
        self.node(node.value)

    def function(self, node: cst.FunctionDef) -> None:
        for d in node.decorators:
            self.node(d.decorator)
        self.params(node.params)
        self.node(node.body)

    def lambda_(self, node: cst.Lambda) -> None:
        self.params(node.params)
        self.node(node.body)

    def params(self, params: cst.Parameters) -> None:
        for p in (*params.posonly_params, *params.params, *params.kwonly_params):
            if p.default is not None:
                self.node(p.default)

    def class_(self, node: cst.ClassDef) -> None:
        for d in node.decorators:
            self.node(d.decorator)
        for a in (*node.bases, *node.keywords):
            self.node(a.value)
        self.node(node.body)

    def assign(self, node: cst.Assign) -> None:
        for t in node.targets:
            self.store(t.target)
        self.node(node.value)

    def ann_assign(self, node: cst.AnnAssign) -> None:
        self.store(node.target)
        if node.value is not None:
            self.node(node.value)

    def aug_assign(self, node: cst.AugAssign) -> None:
        self.store(node.target)
        self.node(node.value)

    def for_(self, node: cst.For) -> None:
        self.store(node.target)
        self.node(node.iter)
        self.node(node.body)
        if node.orelse is not None:
            self.node(node.orelse)

    def comp_for(self, node: cst.CompFor) -> None:
        self.store(node.target)
        self.node(node.iter)
        for cond in node.ifs:
            self.node(cond.test)
        if node.inner_for_in is not None:
            self.node(node.inner_for_in)

    def with_item(self, node: cst.WithItem) -> None:
        self.node(node.item)
        if node.asname is not None:
            self.store(node.asname.name)

    def handler(self, node: cst.ExceptHandler) -> None:
        if node.type is not None:
            self.node(node.type)
        self.node(node.body)

    def named_expr(self, node: cst.NamedExpr) -> None:
        self.store(node.target)
        self.node(node.value)

    def delete(self, node: cst.Del) -> None:
        self.store(node.target)

    def declares(self, node: cst.CSTNode) -> None:
        self.declared = True

    def skip(self, node: cst.CSTNode) -> None:
        pass  # imports bind names; annotations name types without calling them


_HANDLERS = {
    cst.Call: _Walker.call, cst.Attribute: _Walker.attribute, cst.FunctionDef: _Walker.function,
    cst.Lambda: _Walker.lambda_, cst.ClassDef: _Walker.class_, cst.Assign: _Walker.assign,
    cst.AnnAssign: _Walker.ann_assign, cst.AugAssign: _Walker.aug_assign, cst.For: _Walker.for_,
    cst.CompFor: _Walker.comp_for, cst.WithItem: _Walker.with_item, cst.ExceptHandler: _Walker.handler,
    cst.NamedExpr: _Walker.named_expr, cst.Del: _Walker.delete, cst.Global: _Walker.declares,
    cst.Nonlocal: _Walker.declares, cst.Import: _Walker.skip, cst.ImportFrom: _Walker.skip,
    cst.Annotation: _Walker.skip,
}


def _add(d: dict[str, int], key: str) -> None:
    d[key] = d.get(key, 0) + 1
