"""Cheap tests that decide which files need the engine at all.

Every finding needs a device list or a mesh built in the file, so a file whose text
names none of them cannot have one, and the text test (prefilter.py) asks for the words
each of the gate's paths needs. The ast pass then looks for the shapes that a
finding needs; it may say yes too often (the engine then finds nothing) but must
never say no to a file with a finding: the fixture suite, the rules' examples and the
benchmark's comparison of flake8 and standalone diagnostics check that.

engine.check_source runs them in order, with the slicing after them.
"""

from __future__ import annotations

import ast

from .components import COMPONENT_MIN_LINES, gate_by_units
from .gate_facts import decide, gate_facts
from .prefilter import prefilter

# Files this long skip the ast gate and are sliced instead (slicing.py): on a generated
# giant the gate's walk costs seconds, while slicing keeps only what can matter.
SLICE_FIRST = 50_000


def may_have_findings(tree: ast.AST) -> bool:
    """False only when no rule can fire: see the module docstring."""
    if isinstance(tree, ast.Module) and tree.body and (tree.body[-1].end_lineno or 0) >= COMPONENT_MIN_LINES:
        return gate_by_units(tree)  # long enough to be sliced if it passes: the slicing reuses the facts
    return decide(gate_facts(tree))
