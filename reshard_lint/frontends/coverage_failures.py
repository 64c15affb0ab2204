"""``reshard-lint coverage``: what it could not do, as records shaped like findings.

A failure of the analysis in one function or top-level statement (a bug of the tool,
noted by the interpreter and the analysis goes on: ``FileContext.failures``), a file that
does not parse or cannot be read: each is a ``Failure`` with its place, the code ``check``
gives it and what failed, listed in every format, so that no site is lost silently.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

from ..engine.runner import INTERNAL_ERROR  # (not engine.engine: a warm run imports no engine)


@dataclass
class Failure:
    """What coverage could not do, shaped as a finding: where (1-based line and column),
    the code ``check`` gives it (RSH001 parse, RSH002 internal error, RSH003 unreadable),
    and what failed."""

    path: str
    line: int
    col: int
    code: str
    message: str


def failure(ctx: Any, path: str, node: ast.AST, message: str) -> Failure:
    """A failure at ``node``: in this file, or in the other module's file that holds it."""
    where = ctx.locate(node)
    if where is None:
        return Failure(path, 1, 1, INTERNAL_ERROR, message)
    other, line, col = where
    return Failure(other or path, line, col + 1, INTERNAL_ERROR, message)


def stopped(ctx: Any) -> list[tuple[int, int]]:
    """The lines of this file the analysis did not run because it failed: a function's
    whole body, and from a failed top-level statement to the end of the file (the module
    body stops there, and the functions defined after it never run)."""
    top = {id(stmt) for stmt in ctx.module.tree.body}
    out: list[tuple[int, int]] = []
    for node, _ in ctx.failures or ():
        where = ctx.locate(node)
        if where is None or where[0] is not None:
            continue
        first = where[1]
        last = len(ctx.source.splitlines()) + 1 if id(node) in top and not isinstance(
            node, (ast.FunctionDef, ast.AsyncFunctionDef)) else ctx.span(node)[2]
        out.append((first, last))
    return out


def what(node: ast.AST) -> str:
    """The function, or the statement, whose analysis failed, for a message."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return f"'{node.name}'"
    return "a lambda" if isinstance(node, ast.Lambda) else "this statement"
