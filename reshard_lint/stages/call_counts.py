"""How often each name and attribute is called, and referenced at all: in a whole file,
or inside one function.

The analysis (analysis/callsites.py) checks what it saw against these counts before it
lets a function's call sites decide its parameters. A module-level function's calls are
counted over the whole file (``SyntaxCounts.of``); a function defined inside another is
visible only in that function's body (Python's scoping), so its calls are counted there
(``local_counts``): in a test file hundreds of methods define a local ``def f(x)``, and
one of them handing its ``f`` to ``jax.grad`` must not make every other ``f`` look
escaped. Both are one walk (``SyntaxCounts.add``). Pure ``ast``: the counts are taken
where Python's tree of the file is, which may be a process without the engine
(prepared.py).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Optional

from . import newer_syntax
from .ast_walk import FIELDS, fields

# Callees whose first argument is a function they wrap (not an escape): calls of the
# wrapper are calls of the function (the analysis runs it there: analysis/calls.py,
# models/transforms.py). A tree map calls it on each leaf.
WRAPPERS = frozenset({"jit", "partial", "grad", "value_and_grad", "vmap", "checkpoint", "remat"})
TREE_MAPS = frozenset({"tree_map", "map"})
# Methods of a jitted function that trace it with the arguments given, as a call does:
# ``f.lower(x)`` calls ``f`` there (analysis/calls.py).
TRACES = frozenset({"lower", "trace", "eval_shape"})


@dataclass
class SyntaxCounts:
    """How often each name and attribute is called, and referenced at all."""

    calls: dict[str, int] = field(default_factory=dict)
    refs: dict[str, int] = field(default_factory=dict)
    attr_calls: dict[str, int] = field(default_factory=dict)
    attr_refs: dict[str, int] = field(default_factory=dict)
    wrapped: dict[str, int] = field(default_factory=dict)  # jit(f) / partial(f) positions
    declares: bool = False  # a ``global`` or ``nonlocal`` statement was counted in

    @classmethod
    def of(cls, source: str, tree: Optional[ast.Module] = None) -> "SyntaxCounts":
        out = cls()
        try:
            tree = tree or newer_syntax.parse(source)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return out
        out.add(tree)
        return out

    def add(self, tree: ast.AST, sign: int = 1) -> None:
        """Count ``tree`` in (``sign`` -1: out again)."""
        # One walk by hand, not ast.walk: annotations are skipped whole (they name
        # classes without calling them: not an escape), and the walk is most of the cost.
        stack: list[ast.AST] = [tree]
        pop, push, AST = stack.pop, stack.append, ast.AST
        Call, Name, Attribute, Load = ast.Call, ast.Name, ast.Attribute, ast.Load
        Global, Nonlocal = ast.Global, ast.Nonlocal
        known = FIELDS
        while stack:
            node = pop()
            # t is type(node), one lookup for the branches; mypy does not narrow the node by it,
            # hence the ignores below.
            t = type(node)
            keys = known.get(t)
            if keys is None:
                keys = fields(t)
            for key in keys:
                if key == "annotation" or key == "returns":
                    continue
                value = getattr(node, key, None)
                if type(value) is list:
                    for v in value:
                        if isinstance(v, AST):
                            push(v)
                elif isinstance(value, AST):
                    push(value)
            if t is Name:
                if type(node.ctx) is Load:  # type: ignore[attr-defined]
                    _add(self.refs, node.id, sign)  # type: ignore[attr-defined]
                continue
            if t is Attribute:
                if type(node.ctx) is Load:  # type: ignore[attr-defined]
                    _add(self.attr_refs, node.attr, sign)  # type: ignore[attr-defined]
                continue
            if t is Call:
                self.call(node, sign)  # type: ignore[arg-type]
            elif t is Global or t is Nonlocal:
                self.declares = True

    def call(self, node: ast.Call, sign: int = 1) -> None:
        """The counts of a call itself (its callee and what it wraps), not of its parts."""
        f = node.func
        if isinstance(f, ast.Name):
            _add(self.calls, f.id, sign)
            tail = f.id
        elif isinstance(f, ast.Attribute):
            _add(self.attr_calls, f.attr, sign)
            tail = f.attr
            if tail in TRACES and isinstance(f.value, ast.Name):
                _add(self.calls, f.value.id, sign)
        else:
            wrapped = _wrapped(f)
            if wrapped is not None:
                _add(self.calls, wrapped, sign)  # jax.jit(f)(x): the analysis calls f there
            return
        first = node.args[0] if node.args else None
        if isinstance(first, ast.Name):
            if tail in WRAPPERS:
                _add(self.wrapped, first.id, sign)
            elif tail in TREE_MAPS:
                _add(self.calls, first.id, sign)

    def name_escapes(self, name: str) -> bool:
        return self.refs.get(name, 0) > self.calls.get(name, 0) + self.wrapped.get(name, 0)

    def attr_escapes(self, name: str) -> bool:
        return self.attr_refs.get(name, 0) > self.attr_calls.get(name, 0)


def local_counts(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> Optional[SyntaxCounts]:
    """Calls and references of names in ``fn``'s body, for the functions defined in it;
    None when the body declares a name ``global`` or ``nonlocal``: what it defines may
    then be read from outside."""
    counts = SyntaxCounts()
    for stmt in fn.body:
        counts.add(stmt)
    return None if counts.declares else counts


def _wrapped(f: ast.expr) -> Optional[str]:
    """``f`` of a wrapper made and called at once: ``jax.jit(f)(x)``, ``partial(f, a)(b)``,
    ``jax.jit(jax.grad(f))(x)``."""
    while isinstance(f, ast.Call) and f.args:
        g = f.func
        tail = g.id if isinstance(g, ast.Name) else g.attr if isinstance(g, ast.Attribute) else ""
        if tail not in WRAPPERS:
            return None
        f = f.args[0]
        if isinstance(f, ast.Name):
            return f.id
    return None


def _add(d: dict[str, int], key: str, n: int = 1) -> None:
    d[key] = d.get(key, 0) + n
