"""What Python's tree of a file gives the engine: the text the analysis reads (the
whole file, or the slice of it that can matter) with its line map, and the call counts
of the whole file when parts were left out.

Made where the tree is. In ``reshard-lint check`` that is the worker that gated the file,
which holds the tree and the gate's facts of its units already; the main process that
analyses the file then parses only the slice. Pure ``ast``: importing this module does
not import the engine.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from .call_counts import SyntaxCounts
from .runtime_facts import FileFacts, file_facts


@dataclass
class Prepared:
    text: str  # what the analysis reads (its tree: analysis/tree.py)
    line_map: list[int] | None  # line of ``text`` -> line of the file; None: the whole file
    counts: SyntaxCounts | None  # the whole file's, when units were left out
    # It reads device values from the project's modules: analysed in the process that
    # keeps the run's module summaries (runner.py), so that each is made once.
    imports_project: bool = False
    # Python's tree of ``text``, when the process that made this analyses it too: it is
    # not parsed twice (never sent to another process).
    tree: ast.Module | None = field(default=None, repr=False, compare=False)
    # For a slice: what the whole file says of where it runs (runtime_facts.py), read from
    # the whole file's tree here, so that the analysis of the slice need not parse it.
    where: FileFacts | None = None


def prepare(source: str, tree: ast.AST | None, min_lines: int | None = None,
            imported: frozenset[str] = frozenset()) -> Prepared:
    """``tree`` is Python's tree of ``source`` (None when it has none); ``min_lines``
    overrides when a file is long enough to slice; ``imported``: the names it imports
    from its project that may hold device values (project/imported.py)."""
    text, line_map, counts = sliced(source, tree, min_lines, imported)
    where = file_facts(tree, source) if line_map is not None and isinstance(tree, ast.Module) else None
    return Prepared(text, line_map, counts, bool(imported), where=where)


def sliced(source: str, tree: ast.AST | None, min_lines: int | None,
           imported: frozenset[str] = frozenset()) -> tuple[str, list[int] | None, SyntaxCounts | None]:
    """The text to parse, its line map, and the whole file's call counts when components
    were left out: units left out may call what was kept, so a function some of whose
    callers are gone has unknown parameters, never ones sharpened by the slice.

    A file that imports device values from its project is sliced by components, whose
    units reading those names are seeds; not by top-level statements (slicing.py seeds
    only what a file builds itself), and not at all after a star import of the project,
    whose names are not known here."""
    from .components import COMPONENT_MIN_LINES, slice_components
    from ..core.fixes import split_lines
    from .slicing import SLICE_MIN_LINES, keep_lines, slice_source

    if "*" in imported:
        return source, None, None
    by_component = COMPONENT_MIN_LINES if min_lines is None else min_lines
    limit = 10**9 if imported else (SLICE_MIN_LINES if min_lines is None else min_lines)
    length = source.count("\n")
    if length < min(limit, by_component) or not isinstance(tree, ast.Module):
        # No tree: Python cannot parse the file, and the engine reports what is wrong with it.
        return source, None, None
    if length >= by_component:
        # Test files: hundreds of methods sharing nothing but imports. The walk that
        # groups them counts the calls too.
        lines = split_lines(source)
        counts = SyntaxCounts()
        kept = slice_components(lines, tree, counts, imported)
        if kept is not None:
            return keep_lines(lines, kept), kept, counts
    if length >= limit:
        return (*slice_source(source, tree), None)
    return source, None, None


def long_enough(source: str) -> bool:
    """Whether ``prepare`` may slice ``source`` at the default thresholds."""
    from .components import COMPONENT_MIN_LINES
    from .slicing import SLICE_MIN_LINES

    return source.count("\n") >= min(COMPONENT_MIN_LINES, SLICE_MIN_LINES)
