"""Which code of a module runs in the same program as a given line, for where a use of
multi-process APIs counts (docs/runtimes.md, "Multi-process signs").

A module's top-level functions and classes are its units; the rest of its top-level code
is one more, ``""``, which runs whenever the module is imported, so with every unit. A
unit reaches the units its code names (calls, callbacks handed on, decorators). Any unit
may be a program's entry point (a framework calls registered benchmarks and tests one at
a time), so a use of ``jax.process_index()`` in one unit says that the units reached from
any entry that also reaches the use run in a multi-process program; a benchmark that
calls ``multihost_utils`` says nothing of its sibling that does not. A use in the
module's own top-level code, or a call of ``jax.distributed.initialize`` (the caller
decides), says it of the whole file.

Standard library only: stages/runtime_facts.py reads it, and the warm run does without
the engine.
"""

from __future__ import annotations

import ast
from typing import Iterable

MODULE = ""


def unit_name(statement: ast.stmt) -> str:
    """The unit a top-level statement belongs to."""
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return statement.name
    return MODULE


def lines_apart(tree: ast.Module, units: Iterable[str]) -> tuple[tuple[int, int], ...]:
    """The line spans (first, last, decorators included) of the units that run in no
    program with one of ``units``."""
    using = set(units)
    if MODULE in using:
        return ()
    spans: dict[str, list[tuple[int, int]]] = {}
    names: dict[str, set[str]] = {}
    for statement in tree.body:
        unit = unit_name(statement)
        if unit == MODULE:
            continue
        first = min([statement.lineno] + [d.lineno for d in getattr(statement, "decorator_list", ())])
        spans.setdefault(unit, []).append((first, statement.end_lineno or statement.lineno))
        names.setdefault(unit, set()).update(
            n.id for n in ast.walk(statement) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load))
    # The module's own code names units too (``if __name__ == "__main__": main()``).
    names[MODULE] = {n.id for s in tree.body if unit_name(s) == MODULE
                     for n in ast.walk(s) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    edges = {u: {v for v in named if v in spans and v != u} for u, named in names.items()}
    reach = {u: _reach(u, edges) for u in edges}
    together: set[str] = set()
    for reached in reach.values():
        if reached & using:
            together |= reached
    return tuple(sorted(span for unit, found in spans.items() if unit not in together for span in found))


def _reach(start: str, edges: dict[str, set[str]]) -> set[str]:
    seen = {start}
    work = [start]
    while work:
        for nxt in edges.get(work.pop(), ()):
            if nxt not in seen:
                seen.add(nxt)
                work.append(nxt)
    return seen
