"""Strings and numbers in libcst's shape: the literal's text, its value, and implicit
concatenation (``'a' f'{b}'``) as ConcatenatedString(left, right), piece by piece.
"""

from __future__ import annotations

import ast
from typing import Any

from . import nodes as n
from .placing import Placing


class Strings(Placing):
    def _constant(self, e: ast.Constant) -> n.CSTNode:
        v = e.value
        if v is None or v is True or v is False:
            return n.Name(str(v))
        if v is ...:
            return n.Ellipsis()
        text = self.source_of(e)
        if isinstance(v, (str, bytes)):
            return self._string(text, v, e)
        if isinstance(v, int):
            return n.Integer(text, v)
        if isinstance(v, float):
            return n.Float(text, v)
        return n.Imaginary(text, v)

    def _string(self, text: str, value: Any, e: ast.Constant) -> n.CSTNode:
        if _one_literal(text):
            return n.SimpleString(text, value)
        # Implicit concatenation: 'a' 'b' is ConcatenatedString(left, right) in libcst;
        # its pieces are read with Python's tokenizer, which the rest never needs.
        pieces = _literals(text)
        if len(pieces) < 2:
            return n.SimpleString(text, value)
        return self._concatenation(pieces, e)

    def _concatenation(self, pieces: list[tuple[int, int, int, int, str]], e: Any) -> n.CSTNode:
        line, col = e.lineno, self.col(e.lineno, e.col_offset)
        built: list[n.CSTNode] = []
        for (srow, scol, erow, ecol, piece) in pieces:
            r0 = line + srow - 1
            c0 = (col + scol) if srow == 1 else scol
            c1 = (col + ecol) if erow == 1 else ecol
            try:
                parsed = ast.parse(piece, mode="eval").body
            except (SyntaxError, ValueError):  # an f-string only Python 3.12 parses (newer_syntax.py)
                parsed = None
            if not isinstance(parsed, (ast.JoinedStr, ast.Constant)):
                built.append(self.spanned(n.FormattedString([]), r0, c0, line + erow - 1, c1))
            elif isinstance(parsed, ast.JoinedStr):
                for sub in ast.walk(parsed):  # placed within the piece, as Python 3.11 places f-strings
                    if hasattr(sub, "lineno"):
                        sub.lineno, sub.end_lineno = r0, r0  # type: ignore[attr-defined]
                        sub.col_offset, sub.end_col_offset = c0, c0  # type: ignore[attr-defined]
                built.append(self.spanned(self._joined(parsed), r0, c0, line + erow - 1, c1))
            else:
                built.append(self.spanned(n.SimpleString(piece, parsed.value), r0, c0, line + erow - 1, c1))
        node = built[-1]
        for left in reversed(built[:-1]):
            value = None
            if isinstance(left, n.SimpleString) and getattr(node, "evaluated_value", None) is not None \
                    and type(left.evaluated_value) is type(node.evaluated_value):
                value = left.evaluated_value + node.evaluated_value
            node = self.between(n.ConcatenatedString(left, node, value), left, node)
        return node

    def _joined_expr(self, e: ast.JoinedStr) -> n.CSTNode:
        """An f-string, or ``'a' f'{b}'``: a concatenation libcst keeps piece by piece."""
        text = self.source_of(e)
        if not _one_literal(text):
            pieces = _literals(text)
            if len(pieces) > 1:
                return self._concatenation(pieces, e)
        return self._joined(e)

    def _joined(self, e: ast.JoinedStr) -> n.CSTNode:
        parts = []
        for v in e.values:
            if type(v) is ast.Constant:
                parts.append(self.at(n.FormattedStringText(str(v.value)), v))
            else:
                parts.append(self.expr(v))
        return n.FormattedString(parts)

    def _formatted_value(self, e: ast.FormattedValue) -> n.CSTNode:
        conversion = chr(e.conversion) if e.conversion and e.conversion > 0 else None
        spec = self._joined(e.format_spec).parts if isinstance(e.format_spec, ast.JoinedStr) else None
        return n.FormattedStringExpression(self.expr(e.value), conversion, spec)


def _one_literal(text: str) -> bool:
    """``text`` is a single string literal (no implicit concatenation)."""
    start = 0
    while start < len(text) and text[start] in "rRbBuUfF":
        start += 1
    quote = text[start:start + 3]
    if quote not in ('"""', "'''"):
        quote = text[start:start + 1]
    if not quote or not text.endswith(quote) or len(text) < start + 2 * len(quote):
        return False
    inner = text[start + len(quote):len(text) - len(quote)]
    if quote in inner:
        return False  # an escaped quote, or a second literal: tokenized to tell
    return True


def _literals(text: str) -> list[tuple[int, int, int, int, str]]:
    import io
    import tokenize

    out = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO("(" + text + ")").readline):
            if tok.type == tokenize.STRING:
                (srow, scol), (erow, ecol) = tok.start, tok.end
                out.append((srow, scol - (1 if srow == 1 else 0), erow, ecol - (1 if erow == 1 else 0), tok.string))
    except (tokenize.TokenError, SyntaxError):
        return []
    return out
