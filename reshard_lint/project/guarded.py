"""Module-level names bound inside a module-level ``if``, ``try`` or ``with`` block.

``if jax.device_count() >= 4:`` then ``ROLLOUT = Mesh(...)`` one level in: an importer
that gets ``ROLLOUT`` at all (``from mypkg.meshes import ROLLOUT`` raises ImportError
otherwise) gets the value of that one statement, which ran once, when the module was
imported. So a name with one binding site, a statement directly in such a block (not
on the header's line, not in a loop, a nested block or a function), is exported with
the value it was bound to there, though after the block the module's own code cannot
tell whether it is bound.

Both sides read the same statements from Python's tree (``guarded_statements``): the
gate's module-level bindings (module_scan.py) and the names a summary exports with the
value one of them bound (``guarded_names``). Standard library only: the gate runs without
the engine.
"""

from __future__ import annotations

import ast


def guarded_statements(tree: ast.Module, lines: list[str]) -> list[ast.stmt]:
    """The statements directly in a module-level ``if`` (and its ``elif`` and ``else``),
    ``try`` (its body, handlers, ``else`` and ``finally``) or ``with`` block, each on a
    line of its own (``lines``: the text's): not after a header or another statement."""
    out: list[ast.stmt] = []
    for stmt in tree.body:
        for body in _blocks(stmt):
            for child in body:
                line = lines[child.lineno - 1] if child.lineno <= len(lines) else ""
                if not line[: child.col_offset].strip():
                    out.append(child)
    return out


def guarded_names(tree: ast.Module, lines: list[str]) -> set[str]:
    """Names an assignment among ``guarded_statements`` binds."""
    out: set[str] = set()
    for child in guarded_statements(tree, lines):
        targets = child.targets if isinstance(child, ast.Assign) else \
            [child.target] if isinstance(child, ast.AnnAssign) and child.value is not None else []
        for t in targets:
            out.update(n.id for n in ast.walk(t) if isinstance(n, ast.Name))
    return out


def _blocks(stmt: ast.stmt) -> list[list[ast.stmt]]:
    """The blocks of a module-level compound statement whose statements run at most once."""
    if isinstance(stmt, ast.If):
        if len(stmt.orelse) == 1 and isinstance(stmt.orelse[0], ast.If) \
                and stmt.orelse[0].col_offset == stmt.col_offset:
            return [stmt.body, *_blocks(stmt.orelse[0])]  # elif
        return [stmt.body, stmt.orelse]
    tries: tuple[type[ast.Try] | type[ast.TryStar], ...] = (ast.Try, getattr(ast, "TryStar", ast.Try))
    if isinstance(stmt, tries):
        return [stmt.body, *(h.body for h in stmt.handlers), stmt.orelse, stmt.finalbody]
    if isinstance(stmt, ast.With):
        return [stmt.body]
    return []
