"""Positions found per statement are libcst's module-wide positions, node for node."""

from __future__ import annotations

import ast
import textwrap

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from reshard_lint.positions import NodePositions
from reshard_lint.rules import all_rules

from .conftest import FIXTURES

# Nodes no diagnostic names: a request for one is answered by the module-wide pass.
_NOT_ASKED = (cst.BaseParenthesizableWhitespace, cst.TrailingWhitespace, cst.EmptyLine, cst.Newline,
              cst.Comment, cst.Module, cst.IndentedBlock, cst.Else, cst.Finally)

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


def _check(text: str, exact_units: bool = True) -> int:
    module = cst.parse_module(text)
    whole = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    lazy = NodePositions(module, text, ast.parse(text))
    asked = 0
    for node, expected in whole.items():
        if isinstance(node, _NOT_ASKED):
            continue
        assert lazy[node] == expected, (type(node).__name__, expected, lazy[node])
        asked += 1
    if exact_units:
        assert lazy._whole is None, "a statement's own code did not match the file's text"
    return asked


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_statement_shapes(name: str) -> None:
    text = textwrap.dedent(SHAPES[name]).lstrip("\n")
    assert _check(text) > 20


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_line_endings_tabs_and_no_final_newline(newline: str) -> None:
    text = "if a:\n\tb = 1\n\tif c:\n\t\td(b)  # x\nx = [\n  1]\ny = 2".replace("\n", newline)
    assert _check(text) > 10


def test_form_feed_positions_are_still_right() -> None:
    # libcst keeps a form feed at the start of a line outside the statement after it:
    # that statement alone does not match the text, and the module-wide pass answers.
    assert _check("if a:\n\tb = 1\n\x0cx = [\n  1]\n", exact_units=False) > 5


def test_fixtures_and_examples() -> None:
    texts = [p.read_text(encoding="utf-8") for p in sorted(FIXTURES.glob("*.py"))]
    texts += [ex.code for r in all_rules() for ex in r.examples]
    for text in texts:
        _check(text)


def test_trees_that_do_not_line_up_fall_back_to_the_module_wide_pass() -> None:
    text = "x = f(1)\n"
    module = cst.parse_module(text)
    lazy = NodePositions(module, text, ast.parse("pass\npass\n"))
    call = module.body[0].body[0].value  # type: ignore[attr-defined]
    assert (lazy[call].start.line, lazy[call].start.column) == (1, 4)
    assert lazy._whole is not None
