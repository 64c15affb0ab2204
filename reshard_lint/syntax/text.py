"""What the text says that Python's tree does not: character columns, and the
parentheses, blanks and commas libcst counts into a node's position.

Python's positions exclude an expression's parentheses, as libcst's do, but libcst
counts them into the node around it (an element, an argument: ``[(a + b)]``), places a
tuple and a generator expression inside their own parentheses and blanks (Python around
them), and starts some parts at the blanks before their keyword (`` for x in y`` in a
comprehension, `` from e`` of a raise). The scans here read just the characters around
a node, from its position.
"""

from __future__ import annotations

from typing import Optional

Pos = tuple[int, int]  # line (from 1), column (characters)


class Text:
    __slots__ = ("lines", "_ascii", "ascii")

    def __init__(self, text: str, lines: list[str]) -> None:
        self.lines = lines
        self._ascii: dict[int, bool] = {}
        # Most files are ASCII: then every byte offset is a column, and no line is asked.
        self.ascii = text.isascii()

    def col(self, line: int, offset: int) -> int:
        """Python's byte offset on ``line`` as a character column."""
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
               floor: Optional[Pos] = None) -> tuple[int, int, int, int]:
        """The span widened over the parentheses around it, not past ``floor`` (the
        opening parenthesis of a call, whose first argument this is)."""
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


def segment(lines: list[str], line: int, col: int, end_line: int, end_col: int) -> str:
    """The text from (line, col) to (end line, end col), lines joined by ``\n``."""
    if line == end_line:
        return lines[line - 1][col:end_col]
    return "\n".join([lines[line - 1][col:], *lines[line:end_line - 1], lines[end_line - 1][:end_col]])


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
