"""The nesting guard gives the same answer with Python's tree as from tokens alone.

Inside flake8 the guard sees the tree flake8 parsed and scans only statements long
enough to nest MAX_DEPTH deep; a deep expression in any place a statement can hold
one (header, decorator, except clause, case guard) must still be refused.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from reshard_lint.engine.engine import Engine
from reshard_lint.stages.nesting import too_deep

CHAIN = " and ".join(["a"] * 1500)
SHAPES = {
    "assignment": f"x = {CHAIN}\n",
    "multiline": "x = (a and\n" + " and\n".join(["b"] * 3000) + ")\n",
    "decorator": "@d(" + " + ".join(["a"] * 1500) + ")\ndef f():\n    pass\n",
    "default": "def f(x=" + " or ".join(["a"] * 1500) + "):\n    pass\n",
    "except": "try:\n    pass\nexcept (" + " or ".join(["E"] * 1500) + "):\n    pass\n",
    "case-guard": f"match x:\n    case [1] if {CHAIN}:\n        pass\n",
    "with": "with a(" + "+".join(["b"] * 1500) + ") as c:\n    pass\n",
    "class-body": "class C:\n    x = " + "lambda: " * 1200 + "1\n",
    "same-line-body": f"if x: y = {CHAIN}\n",
    "elif": f"if a:\n    pass\nelif {CHAIN}:\n    pass\n",
    "nested-def": f"def f():\n    def g():\n        return {CHAIN}\n",
}
LINE = {"assignment": 1, "multiline": 998, "decorator": 1, "default": 1, "except": 3, "case-guard": 2,
        "with": 1, "class-body": 2, "same-line-body": 1, "elif": 3, "nested-def": 3}


@pytest.mark.parametrize("shape", list(SHAPES))
def test_deep_expression_found_with_the_tree(shape: str) -> None:
    source = "import jax\nfrom jax.sharding import Mesh\n" + SHAPES[shape]
    tree = ast.parse(source)
    with_tree, tokens = too_deep(source, tree), too_deep(source)
    assert with_tree is not None and tokens is not None
    assert with_tree == tokens
    assert with_tree[0] == LINE[shape] + 2
    # The engine, given flake8's tree, reports it where the user wrote it.
    source += "m = Mesh(jax.devices()[::-1], ('x',))\n"
    result = Engine().lint_source(source, "deep.py", ast.parse(source), force=True)
    assert [(d.code, d.line) for d in result.diagnostics] == [("RSH001", LINE[shape] + 2)]


def test_long_statements_that_are_not_deep_pass() -> None:
    source = "x = [" + ", ".join(str(i) for i in range(3000)) + "]\n"
    source += "y = (1 +\n" + " +\n".join("2" * 400) + ")\n"
    assert too_deep(source, ast.parse(source)) is None
    assert too_deep(source) is None


def test_same_answer_on_every_fixture_and_module() -> None:
    root = Path(__file__).resolve().parents[1]
    files = sorted((root / "tests" / "fixtures").rglob("*.py"))
    files += sorted((root / "reshard_lint").rglob("*.py"))
    assert len(files) > 40
    for path in files:
        source = path.read_text(encoding="utf-8-sig", errors="replace")
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue  # Python 2 and other broken fixtures: the tree path never sees them
        assert too_deep(source, tree) == too_deep(source), path


def test_only_the_statements_a_slice_keeps_are_checked() -> None:
    """The worker that slices a file checks the statements it keeps (prepared.py): a deep
    statement left out does not stop the slice, one kept does."""
    source = "import jax\n\n\ndef kept():\n    return 1\n\n\ndef dropped():\n    return " + CHAIN + "\n"
    tree = ast.parse(source)
    assert too_deep(source, tree, only={1, 4, 5}) is None
    assert too_deep(source, tree, only={1, 8, 9}) is not None
    assert too_deep(source, tree) is not None
