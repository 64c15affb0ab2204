"""Where a rebuilt node is: its span in libcst's terms, from Python's positions and the text.

Every node's ``_span`` is (line, column, end line, end column, Source): columns in
characters, the Source shared by the module's nodes (nodes.py). text.py reads the
characters around a node that Python's positions leave out.
"""

from __future__ import annotations

from typing import Any

from . import nodes as n
from .text import Text, segment


class Placing:
    """The position helpers the statement and expression builders share."""

    # The parts of the builder call each other through these (build.py's Builder has all).
    expr: Any  # expressions.py: an expression
    opt: Any  # statements.py: an optional expression
    keyword: Any  # expressions.py: a keyword argument (a class's too)
    parameters: Any  # statements.py: a def's or a lambda's parameters
    _joined: Any  # strings.py: an f-string's parts

    def __init__(self, text: str, lines: list[str], tag: n.Source) -> None:
        self.lines = lines  # the text's lines, without their line breaks
        self.tag = tag
        self.t = Text(text, lines)
        self.col = _same if self.t.ascii else self.t.col

    def at(self, node: n.CSTNode, src: Any) -> Any:
        if self.t.ascii:
            node._span = (src.lineno, src.col_offset, src.end_lineno, src.end_col_offset, self.tag)
            return node
        col = self.col
        node._span = (src.lineno, col(src.lineno, src.col_offset), src.end_lineno,
                      col(src.end_lineno, src.end_col_offset), self.tag)
        return node

    def between(self, node: n.CSTNode, first: n.CSTNode, last: n.CSTNode) -> Any:
        """``node`` from ``first`` to ``last``."""
        a, b = first._span, last._span
        node._span = (a[0], a[1], b[2], b[3], self.tag)
        return node

    def parts(self, node: n.CSTNode, first: n.CSTNode, last: n.CSTNode) -> Any:
        """An element of a list or dict, an index: from ``first`` to ``last`` with the
        parentheses around each."""
        t = self.t
        a = t.expand(*first._span[:4]) if first is not last else None
        b = t.expand(*last._span[:4])
        node._span = ((a or b)[0], (a or b)[1], b[2], b[3], self.tag)
        return node

    def wrap(self, node: n.CSTNode, value: n.CSTNode, floor: Any = None) -> Any:
        """An element, an argument: its value with the parentheses around it."""
        a = value._span
        node._span = (*self.t.expand(a[0], a[1], a[2], a[3], floor), self.tag)
        return node

    def spanned(self, node: n.CSTNode, line: int, col: int, end_line: int, end_col: int) -> Any:
        node._span = (line, col, end_line, end_col, self.tag)
        return node

    def source_of(self, e: Any) -> str:
        """The text of Python's node ``e``."""
        col = self.col
        return segment(self.lines, e.lineno, col(e.lineno, e.col_offset),
                       e.end_lineno, col(e.end_lineno, e.end_col_offset))

    def after(self, prev: n.CSTNode) -> tuple[int, int]:
        """Where a part that starts with a keyword starts for libcst: right after the
        node before it (and its closing parentheses), the blanks before the keyword
        included."""
        line, col = prev._span[2], prev._span[3]
        text = self.lines[line - 1]
        while col < len(text) and text[col] == ")":
            col += 1
        return line, col

    def as_name(self, target: n.CSTNode) -> n.CSTNode:
        """``as target``: libcst's AsName starts at the keyword."""
        line, col = target._span[0], target._span[1]
        at = self.lines[line - 1].rfind("as", 0, col)
        p = self.t.prev_sig(line, at) if at >= 0 else None
        if p is None:
            return self.spanned(n.AsName(target), line, col, target._span[2], target._span[3])
        return self.spanned(n.AsName(target), p[0], p[1] + 1, target._span[2], target._span[3])

    def word(self, name: str, line: int, col: int) -> n.Name:
        """A name the text spells at or after ``col`` of ``line`` (a def's, an alias's)."""
        text = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
        found = text.find(name, col)
        start = found if found >= 0 else col
        return self.spanned(n.Name(name), line, start, line, start + len(name))


def _same(line: int, offset: int) -> int:
    """An ASCII text's column: the byte offset itself."""
    return offset
