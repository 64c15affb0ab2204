"""What the text says that Python's tree does not: character columns, and the
parentheses and blanks libcst counted into a node's position.

Python counts columns in UTF-8 bytes and leaves an expression's own parentheses out;
diagnostics give columns in characters, and a node's code (``code_for_node``) has its own
parentheses, as libcst places and generates them (tests/test_positions.py compares). The
scans here read just the characters around one node, when a diagnostic or a message names
it (tree.py asks).
"""

from __future__ import annotations

import re
from typing import Optional

Pos = tuple[int, int]  # line (from 1), column (characters)
Span = tuple[int, int, int, int]  # line, column, end line, end column

_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def split(text: str) -> list[str]:
    """The text's lines as Python numbers them (form feeds and other breaks
    ``str.splitlines`` knows are not line ends)."""
    lines = _LINE_BREAK.split(text)
    if lines and lines[-1] == "":
        lines.pop()
    return lines


class Text:
    """A module's lines, and the scans over them."""

    __slots__ = ("lines", "_ascii", "ascii")

    def __init__(self, text: str, lines: list[str]) -> None:
        self.lines = lines
        self._ascii: dict[int, bool] = {}
        # Most files are ASCII: then every byte offset is a column, and no line is asked.
        self.ascii = text.isascii()

    def col(self, line: int, offset: int) -> int:
        """Python's byte offset on ``line`` as a character column."""
        if self.ascii:
            return offset
        ascii_ = self._ascii.get(line)
        if ascii_ is None:
            ascii_ = self._ascii[line] = self.lines[line - 1].isascii() if 0 < line <= len(self.lines) else True
        if ascii_:
            return offset
        return len(self.lines[line - 1].encode("utf-8", errors="surrogatepass")[:offset]
                   .decode("utf-8", errors="replace"))

    def char(self, pos: Pos) -> str:
        line = self.lines[pos[0] - 1]
        return line[pos[1]] if pos[1] < len(line) else "\n"

    def next_sig(self, line: int, col: int) -> Optional[Pos]:
        """The first character at or after (line, col) that is not a blank, a line
        break, a comment or a line continuation."""
        lines = self.lines
        while line <= len(lines):
            text = lines[line - 1]
            while col < len(text):
                ch = text[col]
                if ch == "#":
                    break
                if ch == "\\" and col == len(text) - 1:
                    break
                if ch not in " \t\x0c":
                    return line, col
                col += 1
            line, col = line + 1, 0
        return None

    def prev_sig(self, line: int, col: int) -> Optional[Pos]:
        """The last character before (line, col) that is not a blank or a line break
        (comments: see ``_code_end``)."""
        lines = self.lines
        while line >= 1:
            text = lines[line - 1]
            col = min(col, len(text))
            while col > 0:
                ch = text[col - 1]
                if ch not in " \t\x0c\\":
                    return line, col - 1
                col -= 1
            line -= 1
            if line >= 1:
                col = _code_end(lines[line - 1])
        return None

    def expand(self, line: int, col: int, end_line: int, end_col: int,
               floor: Optional[Pos] = None) -> Span:
        """The span widened over the parentheses around it, not past ``floor`` (the
        opening parenthesis of a call, whose argument this is)."""
        while True:
            text = self.lines[line - 1]
            j = col - 1
            while j >= 0 and text[j] in " \t\x0c":
                j -= 1
            if j >= 0 and text[j] != "(":
                break  # the common case: something else before it on its line
            p = (line, j) if j >= 0 else self.prev_sig(line, 0)
            if p is None or self.char(p) != "(" or (floor is not None and p <= floor):
                break
            q = self.next_sig(end_line, end_col)
            if q is None or self.char(q) != ")":
                break
            line, col, end_line, end_col = p[0], p[1], q[0], q[1] + 1
        return line, col, end_line, end_col

    def segment(self, line: int, col: int, end_line: int, end_col: int) -> str:
        return segment(self.lines, line, col, end_line, end_col)


def segment(lines: list[str], line: int, col: int, end_line: int, end_col: int) -> str:
    """The text from (line, col) to (end line, end col), lines joined by ``\n``."""
    if line == end_line:
        return lines[line - 1][col:end_col]
    return "\n".join([lines[line - 1][col:], *lines[line:end_line - 1], lines[end_line - 1][:end_col]])


def parenthesized(text: str) -> bool:
    """``text`` (an expression's) is wrapped whole in one pair of parentheses."""
    if not (text.startswith("(") and text.endswith(")")):
        return False
    depth = 0
    for i, ch in enumerate(text):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth == 0 and i < len(text) - 1:
                return False
    return True


def _code_end(line: str) -> int:
    """Where the code of ``line`` ends: before a trailing comment. A ``#`` inside a
    string is told by counting quotes before it (enough for the lines between a node
    and a parenthesis around it)."""
    at = line.find("#")
    while at >= 0:
        before = line[:at]
        if before.count('"') % 2 == 0 and before.count("'") % 2 == 0:
            return at
        at = line.find("#", at + 1)
    return len(line)


def one_literal(text: str) -> bool:
    """``text`` is a single string literal (no implicit concatenation), as far as its
    quotes tell; False also when an escaped quote leaves it open (``literals`` tells)."""
    start = 0
    while start < len(text) and text[start] in "rRbBuUfF":
        start += 1
    quote = text[start:start + 3]
    if quote not in ('"""', "'''"):
        quote = text[start:start + 1]
    if not quote or not text.endswith(quote) or len(text) < start + 2 * len(quote):
        return False
    inner = text[start + len(quote):len(text) - len(quote)]
    return quote not in inner


def literal_count(text: str) -> int:
    """How many string literals ``text`` (a string expression's) is made of."""
    import io
    import tokenize

    count = 0
    try:
        for tok in tokenize.generate_tokens(io.StringIO("(" + text + ")").readline):
            if tok.type == tokenize.STRING:
                count += 1
    except (tokenize.TokenError, SyntaxError):
        return 0
    return count
