"""The counts inside a function (stages/call_counts.local_counts).

On every function of a set of real modules, read from the tree the analysis reads
(tree.parse), they are those of its body counted on ``ast.parse``'s tree (SyntaxCounts.add),
or None where the body declares a name ``global`` or ``nonlocal``.
"""

from __future__ import annotations

import ast
import json
import os
import textwrap
import unittest

import pytest

from reshard_lint.stages.call_counts import SyntaxCounts, local_counts
from reshard_lint.analysis.tree import parse

from .conftest import FIXTURES

MODULES = [json.__file__, os.__file__, textwrap.__file__, unittest.case.__file__, ast.__file__,
           *sorted(str(p) for p in FIXTURES.glob("*.py"))]


def _functions(source: str) -> tuple[list[ast.FunctionDef], list[ast.FunctionDef]]:
    """The functions of ``source``: of ``ast.parse``'s tree, and of the tree the analysis
    reads (tree.parse), both in source order."""
    tree = ast.parse(source)
    py = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]
    py.sort(key=lambda n: n.lineno)
    out = [n for n in ast.walk(parse(source).tree) if isinstance(n, ast.FunctionDef)]
    out.sort(key=lambda n: (n.lineno, n.col_offset))
    return py, out


@pytest.mark.parametrize("path", MODULES, ids=os.path.basename)
def test_counts_agree_with_python(path: str) -> None:
    source = open(path, encoding="utf-8").read()
    py, lib = _functions(source)
    assert len(py) == len(lib)
    for a, c in zip(py, lib):
        assert a.name == c.name
        want = SyntaxCounts()
        for stmt in a.body:
            want.add(stmt)
        got = local_counts(c)
        if got is None:
            assert any(isinstance(n, (ast.Global, ast.Nonlocal)) for s in a.body for n in ast.walk(s))
            continue
        assert got.calls == want.calls, a.name
        assert got.wrapped == want.wrapped, a.name
        assert got.attr_calls == want.attr_calls, a.name
        assert got.refs == want.refs, a.name
        assert got.attr_refs == want.attr_refs, a.name


def test_a_local_function_handed_on_elsewhere_does_not_escape_here() -> None:
    source = textwrap.dedent("""
        def test_a():
            def f(x):
                return x
            return f(1)

        def test_b():
            def f(x):
                return x
            return apply(f)
    """)
    _, (a, _, b, _) = _functions(source)
    ca, cb = local_counts(a), local_counts(b)
    assert ca is not None and cb is not None
    assert not ca.name_escapes("f") and ca.calls["f"] == 1
    assert cb.name_escapes("f")


def test_a_global_declaration_gives_up() -> None:
    source = "def outer():\n    global f\n    def f():\n        pass\n"
    _, (outer, _) = _functions(source)
    assert local_counts(outer) is None
