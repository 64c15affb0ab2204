"""The imports a fix needs that the file does not have, added by libcst.

A fix that wraps devices in ``Mesh(...)`` or rebuilds a target as ``NamedSharding(...)``
in a file without that name carries the imports it needs (``Fix.imports``). They are
added here with libcst's import codemod (``AddImportsVisitor``) on the file's module:
it merges ``Mesh`` into an existing ``from jax.sharding import ...`` or adds the
statement after the file's leading imports (after a docstring and ``from __future__``
imports), in the file's own line endings. ``fixes.edits_of`` turns the new text into
whole-line edits that go with the fix's own.

libcst is imported here only, inside the functions, and this module only by
``fixes.edits_of`` when a fix with imports is applied or shown with its edits: the
analysis, and so the flake8 plugin, never imports it (docs/architecture.md, "libcst").
"""

from __future__ import annotations

import ast
from typing import Any, Sequence

from .diagnostic import Import

# The last module parsed: the fixes of one file are resolved against the same text.
_last: tuple[str, Any] | None = None


def with_imports(source: str, imports: Sequence[Import]) -> str | None:
    """``source`` with ``imports`` added; None when they cannot be added (a name already
    bound to something else, or a text libcst cannot parse)."""
    global _last
    import libcst as cst
    from libcst.codemod import CodemodContext
    from libcst.codemod.visitors import AddImportsVisitor, ImportItem

    try:
        taken = bound_names(ast.parse(source))
    except (SyntaxError, ValueError):
        return None
    if any(imp.local in taken for imp in imports):
        return None  # the import would shadow (or be shadowed by) a name the file uses
    if _last is not None and _last[0] == source:
        module = _last[1]
    else:
        try:
            module = cst.parse_module(source)
        except Exception:  # noqa: BLE001 - libcst's parser errors: no fix rather than a wrong one
            return None
        _last = (source, module)
    items = [ImportItem(imp.module, imp.name, imp.alias) for imp in imports]
    return AddImportsVisitor(CodemodContext(), items).transform_module(module).code


def bound_names(module: ast.Module) -> set[str]:
    """Every name the file binds or reads, in any scope."""
    out: set[str] = set()
    for node in ast.walk(module):
        if isinstance(node, ast.Name):
            out.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, ast.arg):
            out.add(node.arg)
        elif isinstance(node, ast.alias):
            out.add(node.asname or node.name.split(".")[0])
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            out.update(node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            out.add(node.name)
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            out.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            out.add(node.rest)
    return out
