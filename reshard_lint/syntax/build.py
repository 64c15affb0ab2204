"""Python's tree, rebuilt in libcst's shape (nodes.py): the builder, and its entry.

What libcst's tree says that Python's does not is read from the text where needed
(text.py): the statements' part in statements.py, the expressions' in expressions.py,
literals in strings.py, positions in placing.py. Columns are characters, as libcst's
positions are; Python counts UTF-8 bytes.
"""

from __future__ import annotations

import ast
import re
from typing import Any, Callable

from . import nodes as n
from .expressions import Expressions
from .statements import Statements
from .strings import Strings


class Builder(Statements, Expressions, Strings):
    """One module's conversion; ``tag`` marks every node as this module's."""

    def __init__(self, text: str, lines: list[str], tag: n.Source) -> None:
        super().__init__(text, lines, tag)
        self._expr: dict[type, Callable[[Any], n.CSTNode]] = {
            ast.Name: self._name, ast.Attribute: self._attribute, ast.Call: self._call,
            ast.Constant: self._constant, ast.Subscript: self._subscript, ast.Tuple: self._tuple,
            ast.List: self._list, ast.Set: self._set, ast.Dict: self._dict, ast.BinOp: self._binop,
            ast.UnaryOp: self._unaryop, ast.BoolOp: self._boolop, ast.Compare: self._compare,
            ast.IfExp: self._ifexp, ast.Lambda: self._lambda, ast.NamedExpr: self._namedexpr,
            ast.Await: self._await, ast.Yield: self._yield, ast.YieldFrom: self._yield_from,
            ast.ListComp: self._comp, ast.SetComp: self._comp, ast.GeneratorExp: self._comp,
            ast.DictComp: self._dictcomp, ast.JoinedStr: self._joined_expr, ast.Starred: self._starred,
            ast.Slice: self._slice_expr, ast.FormattedValue: self._formatted_value,
        }

    def release(self) -> None:
        """The table of bound methods is a cycle through the builder: broken here, so
        that reference counting frees it."""
        self._expr.clear()


_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def split(text: str) -> list[str]:
    """The text's lines as Python numbers them (form feeds and other breaks
    ``str.splitlines`` knows are not line ends)."""
    lines = _LINE_BREAK.split(text)
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def build(tree: ast.Module, text: str, lines: list[str] | None = None) -> n.Module:
    """libcst's shape of ``tree``, Python's tree of ``text``."""
    if lines is None:
        lines = split(text)
    tag = n.Source(lines)  # every node's span ends with it: code_for_node reads the text there
    builder = Builder(text, lines, tag)
    module = n.Module(builder.statements(tree.body), text, lines, tag)
    builder.release()
    module._span = (1, 0, max(len(lines), 1), len(lines[-1]) if lines else 0, tag)
    return module
