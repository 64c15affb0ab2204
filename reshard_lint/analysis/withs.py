"""``with`` blocks: the context mesh they set (``jax.set_mesh``, ``use_mesh``, the legacy
``with mesh:``) and blocks that expect an error (``pytest.raises``, ``assertRaises``),
whose first line's transfers are observed as the expected failure."""

from __future__ import annotations

import ast
from typing import Sequence

from .interpreter_base import InterpreterBase
from .scope import COMPOUND, Scope
from .valueops import expects_error
from .values import UNKNOWN, ConstVal, MeshContextVal, MeshVal, QualVal, Value


class WithBlocks(InterpreterBase):
    """The interpreter's ``with`` statements."""

    def exec_with(self, stmt: ast.With | ast.AsyncWith, scope: Scope) -> None:
        ctx_before = self.context_mesh
        in_context = self.mesh_context
        site_before = self.context_site
        # Code inside `with pytest.raises(...)` / `self.assertRaises(...)` is meant to fail.
        raising = any(expects_error(item.context_expr) for item in stmt.items)
        observed = raising and not self.quiet and self.expected_sink is not None
        if raising:
            self.quiet += 1
            self.inexact += 1
            if self.relay is not None:
                # A relayed run keeps none of the block's transfers (functions.relaying).
                self.relay_gaps.add(("", "<expected-error block>"))
        try:
            self._exec_with(stmt, scope, observed)
        finally:
            if raising:
                self.quiet -= 1
                self.inexact -= 1
            self.context_mesh = ctx_before
            self.mesh_context = in_context
            self.context_site = site_before

    def _exec_with(self, stmt: ast.With | ast.AsyncWith, scope: Scope, observed: bool = False) -> None:
        for item in stmt.items:
            val = self.eval(item.context_expr, scope)
            if isinstance(val, MeshVal):
                self.context_mesh = val
                # The legacy `with mesh:` is no context mesh for jit (jax 0.10.2: ops on
                # arrays committed elsewhere run there), so no set_mesh is in force.
                self.context_site = UNKNOWN
            elif isinstance(val, MeshContextVal):
                self.context_mesh = val.mesh
                self.context_site = val
            if isinstance(val, (MeshVal, MeshContextVal)) or _maybe_mesh_context(item.context_expr, val):
                self.mesh_context = True
                if not isinstance(val, (MeshVal, MeshContextVal)):
                    self.context_site = UNKNOWN  # a mesh context the analysis cannot see into
            if item.optional_vars is not None:
                bound = val.mesh if isinstance(val, MeshContextVal) else val
                self.bind(item.optional_vars, bound, scope)
        body = stmt.body
        if observed and body:
            first = _first_line(body)
            self.expecting = (self.quiet, len(self.inline_stack))
            try:
                for small in body[:first]:
                    self.exec_stmt(small, scope)
            finally:
                self.expecting = None
            body = body[first:]
        self.exec_block(body, scope)


def _first_line(body: Sequence[ast.stmt]) -> int:
    """How many statements of an indented block its first line holds (``a = f(); b = g()``):
    small statements that share a line run as one step."""
    first = body[0]
    if isinstance(first, COMPOUND):
        return 1
    n, last_end = 1, first.end_lineno or first.lineno
    while n < len(body) and not isinstance(body[n], COMPOUND) and body[n].lineno == last_end:
        last_end = body[n].end_lineno or body[n].lineno
        n += 1
    return n


def _maybe_mesh_context(expr: ast.expr, val: Value) -> bool:
    """``with mesh:`` / ``with self.mesh:`` / ``with jax.set_mesh(...)`` the analysis cannot see into."""
    t = type(expr)
    if t is ast.Name or t is ast.Attribute:
        return not isinstance(val, (QualVal, ConstVal))
    if isinstance(expr, ast.Call):
        f = expr.func
        name = f.attr if type(f) is ast.Attribute else f.id if type(f) is ast.Name else ""
        return "mesh" in name.lower() or "shard" in name.lower()
    return False
