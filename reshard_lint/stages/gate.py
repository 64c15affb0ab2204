"""Cheap tests that decide which files need the engine at all.

Every finding needs a device list or a mesh built in the file, so a file whose text
names none of them cannot have one, and the text test (prefilter.py) asks for the words
each of the gate's paths needs. The ast pass then looks for the shapes that a
finding needs; it may say yes too often (the engine then finds nothing) but must
never say no to a file with a finding: the fixture suite, the rules' examples and the
benchmark's comparison of flake8 and standalone diagnostics check that.
"""

from __future__ import annotations

import ast

from . import newer_syntax
from .components import COMPONENT_MIN_LINES, gate_by_units
from .gate_facts import decide, gate_facts
from .prefilter import prefilter

# Files this long skip the ast gate and are sliced instead (slicing.py): on a generated
# giant the gate's walk costs seconds, while slicing keeps only what can matter.
_SLICE_FIRST = 50_000


def needs_engine(source: str, tree: ast.AST | None = None, imported: frozenset[str] = frozenset()) -> bool:
    """Prefilter and ast gate together, without the engine: may this file have a finding?
    ``imported``: names the file imports from its project that may hold device values
    (project/imported.py): the text need not name a device then, and the whole file's
    facts decide (components.py counts only what a file builds itself).

    A file Python cannot parse goes to the engine, which reports why (RSH001).
    """
    if imported:
        if tree is None:
            try:
                tree = newer_syntax.parse(source)
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                return True
        return decide(gate_facts(tree), imported)
    if not prefilter(source):
        return False
    if source.count("\n") >= _SLICE_FIRST:
        return True  # the engine slices such a file first, which is cheaper than this walk
    if tree is None:
        try:
            tree = newer_syntax.parse(source)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return True
    global _last
    _last = (source, tree)
    if may_have_findings(tree):
        return True
    # Not kept for an engine that will not run: alive, the tree would be rescanned by the
    # collections that follow (hundreds of thousands of objects in a test file).
    _last = None
    return False


# The last tree the gate parsed, for the engine that analyses the same text next in
# this process (a 200,000-line file takes seconds to parse).
_last: tuple[str, ast.AST] | None = None


def tree_for(source: str) -> ast.AST | None:
    """The gate's tree of ``source`` if it was the last file gated; used once, then let go."""
    global _last
    found = _last[1] if _last is not None and _last[0] is source else None
    _last = None
    return found


def may_have_findings(tree: ast.AST) -> bool:
    """False only when no rule can fire: see the module docstring."""
    if isinstance(tree, ast.Module) and tree.body and (tree.body[-1].end_lineno or 0) >= COMPONENT_MIN_LINES:
        return gate_by_units(tree)  # long enough to be sliced if it passes: the slicing reuses the facts
    return decide(gate_facts(tree))
