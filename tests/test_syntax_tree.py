"""Positions found per statement are libcst's module-wide positions, node for node."""

from __future__ import annotations

import ast
import textwrap

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from reshard_lint.rules import all_rules
from reshard_lint.syntax import nodes as ours
from reshard_lint.syntax.build import build

from .conftest import FIXTURES

# Nodes no diagnostic names, whose positions are not kept: blocks, operators, a
# function's parameter list, and the parts libcst starts in the whitespace before their
# keyword, even on an earlier line (``if`` in a comprehension, ``== x``, ``case``).
_NOT_ASKED = (ours.Module, ours.IndentedBlock, ours.SimpleStatementSuite, ours.Else, ours.Finally,
              ours.BaseOperator, ours.Parameters, ours.ParamStar, ours.Asynchronous, ours.Dot,
              ours.ImportStar, ours.MatchPattern, ours.FormattedStringText, ours.Pass, ours.Break, ours.Continue,
              ours.CompIf, ours.ComparisonTarget, ours.MatchCase)

SHAPES = {
    "decorators": """
        import functools
        # a comment before the decorators

        @functools.partial(
            print,
            1)
        # between decorators
        @staticmethod

        async def f(a, *, b=jax.devices()[::-1]) -> "x":  # trailing
            '''doc'''
            x = 1; y = 2;
            return x
    """,
    "branches": """
        if a:  # c
            b = [d for d in jax.devices()
                 if d.id]
        elif c(
                1):
            pass
        elif e: f = 1
        else:
            g()
        for i in range(3):
            continue
        else:
            h()
        while x: y()
        else: z()
    """,
    "handlers": """
        try:
            a()
        except (ValueError,
                TypeError) as e:
            b(e)
        except Exception:
            pass
        else:
            c()
        finally:
            d()
        try: x()
        finally: y()
        class A(B, metaclass=M):
            x: int = 3
            def m(self):
                with open(f) as g, h() as i:
                    async with j: pass
        match p:
            case [1, *rest]:
                q(rest)
            case _:
                pass
    """,
    "continuations": """
        x = 1 + \\
            2
        if x and \\
                y:
            z = f(x,
                  y)  # 1
        s = '''a
        b'''; t = s
    """,
}


def _same(mine: object, theirs: object, positions: object, where: str) -> int:
    """``mine`` has libcst's shape of ``theirs``: node types, field values, positions."""
    assert type(mine).__name__ == type(theirs).__name__, (where, type(mine).__name__, type(theirs).__name__)
    checked = 0
    if not isinstance(mine, _NOT_ASKED) and not isinstance(theirs, cst.Pass):
        expected = positions[theirs]  # type: ignore[index]
        got = mine._span[:4]  # type: ignore[attr-defined]
        assert got == (expected.start.line, expected.start.column, expected.end.line, expected.end.column), \
            (where, type(mine).__name__, got, expected)
        checked += 1
    if isinstance(mine, ours.MatchCase):
        fields = ("body", "guard")  # a pattern is kept only as what it binds
    elif isinstance(mine, ours.FormattedString):
        return checked  # Python 3.11 places nothing inside an f-string
    else:
        fields = mine._fields  # type: ignore[attr-defined]
    for name in fields:
        a = getattr(mine, name)
        b = getattr(theirs, name)
        here = f"{where}.{name}"
        if isinstance(a, ours.CSTNode):
            checked += _same(a, b, positions, here)
        elif isinstance(a, list):
            assert len(a) == len(b), (here, a, b)
            for i, (x, y) in enumerate(zip(a, b)):
                checked += _same(x, y, positions, f"{here}[{i}]")
        elif a is None or a == "":
            assert b is None or isinstance(b, cst.MaybeSentinel) or b == "", (here, a, b)
        else:
            assert a == b, (here, a, b)
    return checked


def _check(text: str) -> int:
    module = cst.parse_module(text)
    positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    mine = build(ast.parse(text), text)
    return _same(mine, module, {k: v for k, v in positions.items()}, "module")


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_statement_shapes(name: str) -> None:
    text = textwrap.dedent(SHAPES[name]).lstrip("\n")
    assert _check(text) > 20


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_line_endings_tabs_and_no_final_newline(newline: str) -> None:
    text = "if a:\n\tb = 1\n\tif c:\n\t\td(b)  # x\nx = [\n  1]\ny = 2".replace("\n", newline)
    assert _check(text) > 10


def test_a_form_feed_counts_as_a_column_as_python_and_flake8_count_it() -> None:
    # libcst starts the line after the form feed (column 0); Python's tree, pyflakes and
    # so flake8 one column later. Diagnostics keep Python's columns, as every other
    # flake8 plugin reports them.
    text = "if a:\n\tb = 1\n\x0cx = [\n  1]\n"
    stmt = build(ast.parse(text), text).body[1]
    assert isinstance(stmt, ours.SimpleStatementLine)
    assert stmt._span[:2] == (3, 1) and stmt.body[0].targets[0].target._span[:4] == (3, 1, 3, 2)
    assert _check(text.replace("\x0c", "")) > 5


def test_fixtures_and_examples() -> None:
    texts = [p.read_text(encoding="utf-8") for p in sorted(FIXTURES.glob("*.py"))]
    texts += [ex.code for r in all_rules() for ex in r.examples]
    for text in texts:
        _check(text)


class _NewerExpression(ast.expr):
    """An expression type this Python's ast does not have (a template string of 3.14)."""

    _fields = ("value",)


def test_an_expression_of_a_newer_python_is_opaque_and_keeps_what_it_reads() -> None:
    text = "import jax\nx = f(jax.devices()[::-1])\n"
    tree = ast.parse(text)
    call = tree.body[1].value  # type: ignore[attr-defined]
    newer = _NewerExpression(value=call.args[0])
    ast.copy_location(newer, call)
    newer.end_lineno, newer.end_col_offset = call.end_lineno, call.end_col_offset
    tree.body[1].value = newer  # type: ignore[attr-defined]
    module = build(tree, text)
    value = module.body[1].body[0].value  # type: ignore[attr-defined]
    assert isinstance(value, ours.OtherExpression) and value._span[:4] == (2, 4, 2, 26)
    assert [type(p).__name__ for p in value.parts] == ["Subscript"]
