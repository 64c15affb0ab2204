"""Fixes that need a name the file does not import: whether the import can be added.

The import itself is made when the fix is applied (core/add_imports.py, with libcst);
here the analysis only refuses a fix whose import would take a name the file already
uses for something else (a local ``Mesh``, a parameter ``np``).
"""

from __future__ import annotations

from typing import Sequence

from ...analysis.context import FileContext
from ...core.add_imports import bound_names
from ...core.diagnostic import Import


def spelled(ctx: FileContext, qual: str) -> str | None:
    """How the file can write ``qual`` with the imports it has: ``NamedSharding``,
    ``shd.NamedSharding`` (``import jax.sharding as shd``), ``jax.sharding.NamedSharding``."""
    name = ctx.spell(qual)
    if name is not None:
        return name
    parts = qual.split(".")
    for i in range(len(parts) - 1, 0, -1):
        module = ctx.spell("module:" + ".".join(parts[:i]))
        if module is not None:
            return ".".join([module, *parts[i:]])
    return None


def can_import(ctx: FileContext, imports: Sequence[Import]) -> bool:
    if not imports:
        return True
    taken = getattr(ctx, "_bound_names", None)
    if taken is None:
        taken = bound_names(ctx.module.tree)
        setattr(ctx, "_bound_names", taken)
    return not any(imp.local in taken for imp in imports)


def import_note(imports: Sequence[Import]) -> str:
    """`` (adds `from jax.sharding import Mesh`)`` for a fix's title."""
    if not imports:
        return ""
    return " (adds " + ", ".join(f"`{statement(i)}`" for i in imports) + ")"


def statement(imp: Import) -> str:
    if imp.name is None:
        return f"import {imp.module}" + (f" as {imp.alias}" if imp.alias else "")
    return f"from {imp.module} import {imp.name}" + (f" as {imp.alias}" if imp.alias else "")
