"""Report-time positions (analysis/tree.py, positions.py) are libcst's, node for node.

Diagnostics keep the columns libcst gave: characters, not UTF-8 bytes; a parenthesised
tuple or generator expression placed inside its parentheses; and a node's code with its
own parentheses (not a call's). Each expression of Python's tree is checked against the
libcst node of the same kind that starts there.
"""

from __future__ import annotations

import ast
import textwrap

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from reshard_lint.analysis.tree import Module, call_args, parse, subscript_items
from reshard_lint.rules import all_rules

from .conftest import FIXTURES

# Python's expression types and libcst's for the same expression.
_KINDS: dict[type, tuple[type, ...]] = {
    ast.Name: (cst.Name,), ast.Attribute: (cst.Attribute,), ast.Call: (cst.Call,),
    ast.Subscript: (cst.Subscript,), ast.Tuple: (cst.Tuple,), ast.List: (cst.List,), ast.Dict: (cst.Dict,),
    ast.Set: (cst.Set,), ast.GeneratorExp: (cst.GeneratorExp,), ast.ListComp: (cst.ListComp,),
    ast.BinOp: (cst.BinaryOperation,), ast.UnaryOp: (cst.UnaryOperation,), ast.Compare: (cst.Comparison,),
    ast.IfExp: (cst.IfExp,), ast.Lambda: (cst.Lambda,), ast.Await: (cst.Await,), ast.Starred: (cst.StarredElement,
                                                                                                   cst.Arg),
}

SHAPES = {
    "parentheses": """
        x = (a)
        y = f((a), (b + c), ( d ))
        z = f(a)(b)[(c)]
        w = ((a, b), (c,), ())
        v = g(x for x in y)
        u = g((x for x in y), 1)
        t = (f)(x)
        s = [(a + b), (
            c)]
        r = x[a, (b)], x[(a, b)], x[(a), (b)]
    """,
    "non_ascii": """
        é = 'ü' + f(ü, 'ö', (ä))
        s = "日本"; t = g(s, ( 日本 ))
        u = ('ñ', n)
    """,
    "calls": """
        f(k=1, *rest)
        g(*a, **k)
        h(a, b=(c), *d)
        jax.device_put(x, NamedSharding(mesh, P('x')))
    """,
    "continuations": """
        x = f(
            (a),
            b)
        y = (a +
             b)
        z = [d for d in jax.devices()
             if d.id]
    """,
}


def _libcst_places(text: str) -> dict[tuple[str, int, int], set[tuple[int, int, int, int, str]]]:
    module = cst.parse_module(text)
    positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    out: dict[tuple[str, int, int], set[tuple[int, int, int, int, str]]] = {}
    for node, pos in positions.items():
        key = (type(node).__name__, pos.start.line, pos.start.column)
        try:
            code = module.code_for_node(node)
        except Exception:  # noqa: BLE001 - a part libcst spells only within its parent
            continue
        code = code.replace("\r\n", "\n").replace("\r", "\n")  # code_for_node joins lines with \n
        place = (pos.start.line, pos.start.column, pos.end.line, pos.end.column, code)
        out.setdefault(key, set()).add(place)
    return out


def _check(text: str) -> int:
    places = _libcst_places(text)
    module = parse(text)
    # Not libcst's: ``x[a, b]``'s tuple (libcst lists the elements), and the code of a
    # ``with`` item, whose parentheses libcst gives the statement (``with (a if b else c):``;
    # the item's code has them, as before).
    skip = {id(n.slice) for n in ast.walk(module.tree) if type(n) is ast.Subscript and len(subscript_items(n)) > 1}
    no_code = {id(i.context_expr) for n in ast.walk(module.tree) if isinstance(n, (ast.With, ast.AsyncWith))
               for i in n.items}
    checked = 0
    for node in ast.walk(module.tree):
        kinds = _KINDS.get(type(node))
        if kinds is None or id(node) in skip:
            continue
        line, col, end_line, end_col = module.span(node)
        mine = (line, col, end_line, end_col, module.code_for_node(node))
        theirs = set().union(*(places.get((k.__name__, line, col), set()) for k in kinds))
        # libcst's Arg or StarredElement have no code of their own; libcst re-indents the
        # lines after the first of a node's code (the text is kept as it is).
        if type(node) is ast.Starred or id(node) in no_code or line != end_line:
            mine = mine[:4]
            theirs = {t[:4] for t in theirs}
        assert mine in theirs, (type(node).__name__, mine, theirs)
        checked += 1
    return checked


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_shapes(name: str) -> None:
    text = textwrap.dedent(SHAPES[name]).lstrip("\n")
    assert _check(text) > 10


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_line_endings_and_tabs(newline: str) -> None:
    text = "if a:\n\tb = (1, 2)\n\tif c:\n\t\td(( b ))  # x\nx = [\n  1]\ny = 'ä' + z".replace("\n", newline)
    assert _check(text) > 8


def test_a_form_feed_counts_as_a_column_as_python_and_flake8_count_it() -> None:
    # libcst starts the line after the form feed (column 0); Python's tree, pyflakes and
    # so flake8 one column later. Diagnostics keep Python's columns, as every other
    # flake8 plugin reports them.
    text = "if a:\n\tb = 1\n\x0cx = [\n  1]\n"
    module = parse(text)
    stmt = module.body[1]
    assert module.span(stmt)[:2] == (3, 1) and module.span(stmt.targets[0]) == (3, 1, 3, 2)  # type: ignore[attr-defined]
    assert _check(text.replace("\x0c", "")) > 2


def test_fixtures_and_examples() -> None:
    texts = [p.read_text(encoding="utf-8") for p in sorted(FIXTURES.glob("*.py"))]
    texts += [ex.code for r in all_rules() for ex in r.examples]
    assert sum(_check(text) for text in texts) > 1000


def test_a_node_of_another_module_is_placed_and_spelled_by_its_own_text() -> None:
    first = parse("import jax\nmesh = make(jax.devices()[::-1])\n")
    second = parse("# ü\n\nx = f(( jax.devices()[::-1] ))\n")
    call = second.body[0].value  # type: ignore[attr-defined]
    inner = call_args(call)[0]
    assert first.code_for_node(inner) == "( jax.devices()[::-1] )"
    assert first.span(inner) == second.span(inner) == (3, 8, 3, 27)
    assert first.owner(inner) is second and second.owner(inner) is second


def test_subscript_elements_as_libcst_lists_them() -> None:
    module = parse("x[a, b]\nx[(a, b)]\nx[(a), (b)]\nx[a:b, ...]\n")
    counts = [len(subscript_items(stmt.value)) for stmt in module.body]  # type: ignore[attr-defined]
    assert counts == [2, 1, 2, 2]


def test_a_tree_given_as_is_needs_no_parse() -> None:
    text = "f((a), b)\n"
    module = Module(ast.parse(text), text)  # flake8 hands the plugin ast.parse's tree
    a = module.body[0].value.args[0]  # type: ignore[attr-defined]
    assert module.code_for_node(a) == "(a)" and module.span(a) == (1, 3, 1, 4)


class _NewerExpression(ast.expr):
    """An expression type this Python's ast does not have (a template string of 3.14)."""

    _fields = ("value",)


def test_an_expression_of_a_newer_python_is_opaque_and_keeps_what_it_reads() -> None:
    from reshard_lint.stages.call_counts import local_counts

    text = "import jax\ndef f():\n    x = g(jax.devices()[::-1])\n"
    tree = ast.parse(text)
    call = tree.body[1].body[0].value  # type: ignore[attr-defined]
    newer = _NewerExpression(value=call.args[0])
    ast.copy_location(newer, call)
    newer.end_lineno, newer.end_col_offset = call.end_lineno, call.end_col_offset
    tree.body[1].body[0].value = newer  # type: ignore[attr-defined]
    module = Module(tree, text)
    assert module.span(newer) == (3, 8, 3, 30)
    counts = local_counts(tree.body[1])  # type: ignore[arg-type]
    assert counts is not None and counts.attr_calls == {"devices": 1} and counts.refs.get("jax") == 1
