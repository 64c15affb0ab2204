"""Python's tree of a project module's text, parsed once per content in a process, and
the code of a node as text: what the project layer's facts (module_scan.py, defs.py,
registries.py) and the summaries (module_text.py) read.

``tree_of(text)`` keeps the trees of the last texts asked for, by content digest (a gate
that asks several facts of one module parses it once; a summary made right after reads
the same tree); ``per_tree`` memoizes a fact computed from a tree by content digest, so a
fact outlives the tree it was read from. A text that does not parse (nor with
newer_syntax.py's help) has no tree: every fact of it is empty, as its summary is unknown.

``Code`` gives the text of a node's span with its string literals and comments blanked
out (f-strings stay: their fields are code), every character where it was: a word in a
docstring or a comment is not code. Standard library only: the gate runs where the
engine is not imported.
"""

from __future__ import annotations

import ast
import bisect
import re
import sys
from collections import OrderedDict
from typing import Callable, Iterator, TypeVar

from ..stages import newer_syntax
from .summaries import digest

T = TypeVar("T")

_TREES: OrderedDict[str, ast.Module | None] = OrderedDict()
_KEEP_TREES = 16  # trees are large: the gate asks a module's facts together, then moves on
_FACTS: OrderedDict[tuple[str, str], object] = OrderedDict()
_KEEP_FACTS = 20_000  # facts are small (sets of names)
_last: list[tuple[str, str]] = []
_last_code: list["Code"] = []  # (text, digest) of the text asked last: several facts in a row


def text_digest(text: str) -> str:
    if _last and _last[0][0] is text:
        return _last[0][1]
    d = digest(text)
    _last[:] = [(text, d)]
    return d


def tree_of(text: str) -> ast.Module | None:
    """Python's tree of ``text`` (newer_syntax.parse), None when it does not parse."""
    d = text_digest(text)
    if d in _TREES:
        _TREES.move_to_end(d)
        return _TREES[d]
    try:
        tree: ast.Module | None = newer_syntax.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        tree = None
    _TREES[d] = tree
    if len(_TREES) > _KEEP_TREES:
        _TREES.popitem(last=False)
    return tree


def remember(text: str, tree: ast.Module) -> None:
    """Keep ``tree``, already parsed from ``text`` (flake8's), as ``tree_of(text)``."""
    _TREES[text_digest(text)] = tree
    if len(_TREES) > _KEEP_TREES:
        _TREES.popitem(last=False)


def forget(text: str) -> None:
    """Keep ``tree_of(text)`` no longer: an analysis took it (a node belongs to the one
    module that holds it, analysis/tree.py ``owner_of``: two analyses share no tree)."""
    _TREES.pop(text_digest(text), None)


# The facts read together, from one tree, when a module is first asked for one: the gate
# asks them of a module at different times, and its tree would otherwise be parsed again.
_TOGETHER: list[Callable[[str], object]] = []
_reading: list[bool] = []  # reading the facts of one tree together


def per_tree(compute: Callable[[ast.Module, str], T], empty: T, together: bool = True) -> Callable[[str], T]:
    """``fact(text)``: ``compute(tree, text)`` once per content, ``empty`` for a text
    that does not parse (facts are read, never changed). ``together``: computed with
    the other such facts of the text when the first of them is asked."""
    name = compute.__name__

    def fact(text: str) -> T:
        key = (name, text_digest(text))
        if key in _FACTS:
            return _FACTS[key]  # type: ignore[return-value]  # (what compute returned under this key)
        tree = tree_of(text)
        found = compute(tree, text) if tree is not None else empty
        _FACTS[key] = found
        if len(_FACTS) > _KEEP_FACTS:
            _FACTS.popitem(last=False)
        if together and tree is not None and not _reading:
            _reading.append(True)
            try:
                for other in _TOGETHER:
                    other(text)
            finally:
                _reading.pop()
        return found

    if together:
        _TOGETHER.append(fact)

    fact.__name__ = name
    fact.__doc__ = compute.__doc__
    return fact


def statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Every statement of ``body``, at any depth (the bodies of compound statements,
    functions and classes; not expressions)."""
    todo = list(reversed(body))
    while todo:
        stmt = todo.pop()
        yield stmt
        inner: list[ast.stmt] = []
        for part in (getattr(stmt, "body", None), getattr(stmt, "orelse", None), getattr(stmt, "finalbody", None)):
            if type(part) is list:
                inner.extend(part)
        for h in getattr(stmt, "handlers", ()) or getattr(stmt, "cases", ()):
            inner.extend(h.body)
        todo.extend(reversed(inner))


# The facts of a text that does not parse (typed: ``per_tree`` takes its type from them).
NO_NAMES: frozenset[str] = frozenset()


_COMMENT = re.compile(r"#[^\n]*")


def code_of(text: str, tree: ast.Module) -> "Code":
    """``Code(text, tree)``, kept for the text asked last (its facts are read one after
    another)."""
    if _last_code and _last_code[0].text is text and _last_code[0].tree is tree:
        return _last_code[0]
    _last_code[:] = [Code(text, tree)]
    return _last_code[0]


def _inside(spans: list[tuple[int, int]], at: int) -> bool:
    i = bisect.bisect_right(spans, (at, sys.maxsize)) - 1
    return i >= 0 and spans[i][0] <= at < spans[i][1]


class Code:
    """Offsets into one text, and the code of a span of it (strings and comments blanked)."""

    def __init__(self, text: str, tree: ast.Module | None = None) -> None:
        self.text = text
        self.tree = tree  # for in_code: its string literals
        self._strings: list[tuple[int, int]] | None = None
        self._fstrings: list[tuple[int, int]] = []
        self.ascii = text.isascii()
        starts = [0]
        i = text.find("\n")
        while i >= 0:
            starts.append(i + 1)
            i = text.find("\n", i + 1)
        self.starts = starts

    def at(self, line: int, col: int) -> int:
        """The offset of a node position (``col`` counts UTF-8 bytes)."""
        start = self.starts[line - 1] if line - 1 < len(self.starts) else len(self.text)
        if self.ascii:
            return start + col
        end = self.text.find("\n", start)
        row = self.text[start: end if end >= 0 else len(self.text)]
        return start + len(row.encode("utf-8", "surrogatepass")[:col].decode("utf-8", "ignore"))

    def start(self, node: ast.AST) -> int:
        return self.at(node.lineno, node.col_offset)  # type: ignore[attr-defined]

    def end(self, node: ast.AST) -> int:
        return self.at(node.end_lineno or node.lineno, node.end_col_offset or 0)  # type: ignore[attr-defined]

    def span(self, start: int, end: int, within: ast.AST) -> str:
        """``text[start:end]`` with the string literals of ``within`` (the node whose
        span it is) and the comments blanked, every other character where it was."""
        seg = self.text[start:end]
        if "#" not in seg and "'" not in seg and '"' not in seg:
            return seg
        chars = list(seg)
        todo: list[ast.AST] = [within]
        while todo:
            node = todo.pop()
            if type(node) is ast.JoinedStr:
                # its literal parts are placed at the whole f-string before Python 3.12
                todo.extend(v.value for v in node.values if type(v) is ast.FormattedValue)
            else:
                todo.extend(ast.iter_child_nodes(node))
            if type(node) is ast.Constant and isinstance(node.value, (str, bytes)):
                a, b = max(self.start(node), start), min(self.end(node), end)
                for i in range(a - start, b - start):
                    if chars[i] != "\n":
                        chars[i] = " "
            elif type(node) is ast.JoinedStr:  # an f-string's fields are code; a '#' in it is no comment
                a, b = max(self.start(node), start), min(self.end(node), end)
                for i in range(a - start, b - start):
                    if chars[i] == "#":
                        chars[i] = " "
        return _COMMENT.sub(lambda m: " " * len(m.group(0)), "".join(chars))

    def says(self, start: int, end: int, words: tuple[str, ...]) -> bool:
        """Does the code of ``text[start:end]`` hold one of ``words`` (none holds a quote
        or ``#``: a word that begins in code is code)?"""
        text = self.text
        for w in words:
            i = text.find(w, start, end)
            while i >= 0:
                if self.in_code(i):
                    return True
                i = text.find(w, i + 1, end)
        return False

    def in_code(self, at: int) -> bool:
        """Is the character at ``at`` code: not in a string literal, nor after a comment's
        ``#`` on its line?"""
        if self._strings is None:
            self._strings, self._fstrings = self._literals()
        if _inside(self._strings, at):
            return False
        line = self.text.rfind("\n", 0, at) + 1
        q = self.text.find("#", line, at)
        while q >= 0:
            if not _inside(self._strings, q) and not _inside(self._fstrings, q):
                return False
            q = self.text.find("#", q + 1, at)
        return True

    def _literals(self) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
        """The spans of the module's string literals (not an f-string's parts) and of its
        f-strings, sorted."""
        strings: list[tuple[int, int]] = []
        fstrings: list[tuple[int, int]] = []
        if self.tree is not None:
            todo: list[ast.AST] = [self.tree]
            while todo:
                node = todo.pop()
                t = type(node)
                if t is ast.JoinedStr:
                    fstrings.append((self.start(node), self.end(node)))
                    todo.extend(v.value for v in node.values if type(v) is ast.FormattedValue)  # type: ignore[attr-defined]
                    continue
                if t is ast.Constant and isinstance(node.value, (str, bytes)):  # type: ignore[attr-defined]
                    strings.append((self.start(node), self.end(node)))
                    continue
                todo.extend(ast.iter_child_nodes(node))
        return sorted(strings), sorted(fstrings)

    def of(self, node: ast.AST) -> str:
        """The code of ``node``'s own span."""
        return self.span(self.start(node), self.end(node), node)
