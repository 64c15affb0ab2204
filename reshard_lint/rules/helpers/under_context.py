"""Whether a call may run under a context mesh (``jax.set_mesh``, ``use_mesh``, jax's test
decorator ``with_explicit_mesh``), read from the syntax only, for the fixes.

Under a context mesh, multi-controller JAX reshards a ``device_put`` with a jitted
computation that the context checks: moving an array to another spec on its own mesh
raises "Received incompatible devices for jitted computation ... jit's context mesh" when
the context mesh is another mesh (another device set or order), where one process runs it
(observed with jax 0.10.2, 2 processes x 4 CPU devices; a put to the array's own sharding,
which moves nothing, runs). So a fix that rebuilds a target on the array's own mesh is
well-formed there only when it keeps the array's sharding (helpers/own_mesh.py).

The answer is conservative (True whenever it may): the call is inside a ``with`` of such a
context or a function so decorated; the module sets one as a statement (for everything that
follows); or the call is in a function some call of which, or a use other than a call (a
callback), may run under one. A module that names none of them says False: a context set
by another module's caller is not seen here, as everywhere in the analysis of one file.
"""

from __future__ import annotations

import ast
from typing import Optional

from ...analysis.context import FileContext
from ...core import vocabulary as api

# The names the context setters are called by, from the vocabulary's table.
_WORDS = frozenset(q.rsplit(".", 1)[1] for q, c in api.ALIASES.items()
                   if c in (api.SET_MESH, api.TEST_UTIL_WITH_EXPLICIT_MESH))
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


class _Index:
    """One walk of the module: parents, the context setters' calls, names' uses."""

    def __init__(self, tree: ast.Module) -> None:
        self.parents: dict[int, ast.AST] = {}
        self.setters: list[ast.Call] = []
        self.uses: dict[str, list[ast.expr]] = {}
        for node in ast.walk(tree):
            for child in ast.iter_child_nodes(node):
                self.parents[id(child)] = node
            if isinstance(node, ast.Call) and _last_name(node.func) in _WORDS:
                self.setters.append(node)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                self.uses.setdefault(node.id, []).append(node)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
                self.uses.setdefault(node.attr, []).append(node)
        self.setter_ids = {id(c) for c in self.setters}

    def ancestors(self, node: ast.AST) -> list[ast.AST]:
        out = []
        cur = self.parents.get(id(node))
        while cur is not None:
            out.append(cur)
            cur = self.parents.get(id(cur))
        return out


def _last_name(node: ast.AST) -> Optional[str]:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _index(ctx: FileContext) -> _Index:
    got = getattr(ctx, "_context_index", None)
    if got is None:
        got = _Index(ctx.module.tree)
        setattr(ctx, "_context_index", got)
    return got


def ancestors(ctx: FileContext, node: ast.AST) -> list[ast.AST]:
    """The nodes around ``node`` in this file's module, innermost first."""
    return _index(ctx).ancestors(node)


def _is_setter(idx: _Index, node: ast.AST) -> bool:
    return id(node) in idx.setter_ids


def _lexically_inside(idx: _Index, node: ast.AST) -> bool:
    """Inside ``with set_mesh(...)`` or a function decorated by a context setter."""
    for anc in idx.ancestors(node):
        if isinstance(anc, (ast.With, ast.AsyncWith)) and any(_is_setter(idx, i.context_expr) for i in anc.items):
            return True
        if isinstance(anc, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
                _is_setter(idx, d) for d in anc.decorator_list):
            return True
    return False


def _enclosing_function(idx: _Index, node: ast.AST) -> Optional[ast.AST]:
    return next((a for a in idx.ancestors(node) if isinstance(a, _FUNCTIONS)), None)


def may_run_under_context(ctx: FileContext, node: ast.AST) -> bool:
    idx = _index(ctx)
    if not idx.setters:
        return False
    for call in idx.setters:
        parent = idx.parents.get(id(call))
        decorates = isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)) and call in parent.decorator_list
        if not isinstance(parent, ast.withitem) and not decorates:
            return True  # jax.set_mesh(m) as a statement: the mesh of everything after it
    return _reached_under_context(idx, node, set())


def _reached_under_context(idx: _Index, node: ast.AST, seen: set[int]) -> bool:
    if _lexically_inside(idx, node):
        return True
    func = _enclosing_function(idx, node)
    if func is None or id(func) in seen:
        return False
    seen.add(id(func))
    if isinstance(func, ast.Lambda):
        # run by the call it is handed to (jax.tree.map(lambda a: ..., tree)), there;
        # bound to a name or stored, it may run anywhere
        parent = idx.parents.get(id(func))
        return not isinstance(parent, ast.Call) or func not in parent.args \
            or _reached_under_context(idx, parent, seen)
    name = func.name  # type: ignore[attr-defined]
    if name.startswith("__") and name.endswith("__"):
        # a special method runs where Python calls it: at uses of its class
        owner = idx.parents.get(id(func))
        if not isinstance(owner, ast.ClassDef):
            return True
        name = owner.name
    for use in idx.uses.get(name, []):
        parent = idx.parents.get(id(use))
        if not (isinstance(parent, ast.Call) and parent.func is use):
            return True  # handed on (a callback, a decorator, a value): may be called anywhere
        if _reached_under_context(idx, parent, seen):
            return True
    return False
