"""Python's own tree, as the analysis, the rules and the project layer read it.

A module's tree is ``ast.parse``'s (``newer_syntax.parse``), wrapped once in a ``Module``
that holds its text. Nothing is added to the nodes: positions in libcst's terms
(character columns, a tuple placed inside its parentheses, a node's code with its own
parentheses) are computed from the text only for the nodes a message or diagnostic names
(``Module.span``, ``Module.code_for_node``; the scans are positions.py's).

The shapes the tree does not give directly are read with the helpers below: a call's
arguments in source order, a subscript's elements and implicit string concatenation.
"""

from __future__ import annotations

import ast
import weakref
from typing import Optional, Union

from ..stages.ast_walk import walk
from .positions import Span, Text, literal_count, one_literal, parenthesized, split

# A call's argument: an expression, ``*x`` (ast.Starred) or ``k=v`` / ``**m`` (ast.keyword).
Arg = Union[ast.expr, ast.keyword]

# Every Module alive in this process: a node of another module (the project layer analyses
# functions of imported modules) is placed and spelled with its own module's text.
_LIVE: "weakref.WeakSet[Module]" = weakref.WeakSet()


class Module:
    """One parsed module: Python's tree, its text, and the text's lines."""

    __slots__ = ("tree", "code", "lines", "text", "_ids", "_call_args", "_stars", "__weakref__")

    def __init__(self, tree: ast.Module, code: str, lines: Optional[list[str]] = None) -> None:
        self.tree = tree
        self.code = code
        self.lines = lines if lines is not None else split(code)
        self.text = Text(code, self.lines)
        # Filled by one walk, the first time a node's owner or a call's argument is asked.
        self._ids: Optional[set[int]] = None
        self._call_args: dict[int, ast.Call] = {}  # a positional argument -> its call
        self._stars: dict[int, str] = {}
        _LIVE.add(self)

    @property
    def body(self) -> list[ast.stmt]:
        return self.tree.body

    # -- which module a node is of ------------------------------------------------------
    def _walk(self) -> set[int]:
        ids = self._ids
        if ids is None:
            ids = set()
            add = ids.add
            call_args, stars = self._call_args, self._stars
            # Every node of the module (the walk of stages/ast_walk.py: no expression
            # contexts or operators, whose owner no one asks). It is asked of every module a
            # summary runs (a string constant's concatenation test).
            Call, arguments = ast.Call, ast.arguments
            for node in walk(self.tree):
                add(id(node))
                # t is type(node), one lookup for the branches; mypy does not narrow node
                # by it, hence the ignores.
                t = type(node)
                if t is Call:
                    for a in node.args:  # type: ignore[attr-defined]
                        call_args[id(a)] = node  # type: ignore[assignment]
                elif t is arguments:
                    if node.vararg is not None:  # type: ignore[attr-defined]
                        stars[id(node.vararg)] = "*"  # type: ignore[attr-defined]
                    if node.kwarg is not None:  # type: ignore[attr-defined]
                        stars[id(node.kwarg)] = "**"  # type: ignore[attr-defined]
            self._ids = ids
        return ids

    def holds(self, node: ast.AST) -> bool:
        return id(node) in self._walk()

    def owner(self, node: ast.AST) -> "Module":
        """The module ``node`` is of: this one unless another live module holds it."""
        if len(_LIVE) == 1 or self.holds(node):
            return self
        # The module found last first (owner_of): a summary's run asks of one imported
        # module's nodes after another, and every live module asked is walked once.
        found = owner_of(node)
        return found if found is not None else self

    # -- positions and code, in libcst's terms --------------------------------------------
    def span(self, node: ast.AST) -> Span:
        """(line, column, end line, end column) of ``node`` as libcst placed it: columns in
        characters; a parenthesised tuple or generator expression inside its parentheses."""
        owner = self.owner(node)
        return owner._span(node) if owner is not self else self._span(node)

    def code_for_node(self, node: ast.AST) -> str:
        """The text of ``node`` with its own parentheses, as libcst generated it (read from
        the text of the node's own module)."""
        owner = self.owner(node)
        if owner is not self:
            return owner.code_for_node(node)
        return self.text.segment(*self._outer(node))

    def _python_span(self, node: ast.AST) -> Span:
        # (ast.AST declares no positions; the callers pass nodes that have them)
        col = self.text.col
        line, end_line = node.lineno, node.end_lineno  # type: ignore[attr-defined]
        if end_line is None:
            end_line = line
        end_col = node.end_col_offset  # type: ignore[attr-defined]
        return (line, col(line, node.col_offset), end_line,  # type: ignore[attr-defined]
                col(end_line, end_col if end_col is not None else node.col_offset))  # type: ignore[attr-defined]

    def _span(self, node: ast.AST) -> Span:
        if isinstance(node, (ast.Tuple, ast.GeneratorExp)):
            return self._inside(node)
        if hasattr(node, "lineno"):
            if isinstance(node, ast.arg):
                return self._param(node)
            return self._python_span(node)
        if isinstance(node, ast.Module):
            lines = self.lines
            return 1, 0, max(len(lines), 1), len(lines[-1]) if lines else 0
        if isinstance(node, ast.withitem):
            first = self._span(node.context_expr)
            vars_ = node.optional_vars
            last = self._span(vars_) if vars_ is not None else first
            return first[0], first[1], last[2], last[3]
        if isinstance(node, ast.comprehension):
            first = self._span(node.target)
            ifs = node.ifs
            last = self._span(ifs[-1] if ifs else node.iter)
            return first[0], first[1], last[2], last[3]
        if isinstance(node, ast.match_case):
            first = self._span(node.pattern)
            last = self._span(node.body[-1])
            return first[0], first[1], last[2], last[3]
        return 1, 0, 1, 0  # ast.arguments, operators: libcst placed neither anywhere useful

    def _param(self, node: ast.arg) -> Span:
        """libcst places a parameter at its name, with its stars."""
        self._walk()
        star = self._stars.get(id(node), "")
        col = self.text.col(node.lineno, node.col_offset)
        return node.lineno, col - len(star), node.lineno, col + len(node.arg)

    def _inside(self, node: ast.AST) -> Span:
        """libcst places a tuple or a generator expression inside its parentheses and the
        blanks there (a tuple's trailing comma included); Python around them."""
        span = self._python_span(node)
        t = self.text
        if not parenthesized(t.segment(*span)):
            return span
        line, col, end_line, end_col = span
        if type(node) is ast.Tuple:
            elts = node.elts
            if not elts:  # (): libcst places it between the two
                return line, col + 1, line, col + 1
            start = t.next_sig(line, col + 1) or (line, col + 1)
            last = elts[-1]
            last_span = self._python_span(last) if type(last) is ast.Starred else t.expand(*self._span(last))
            end = (last_span[2], last_span[3])
            after = t.next_sig(*end)
            if after is not None and t.char(after) == ",":
                end = (after[0], after[1] + 1)
            return start[0], start[1], end[0], end[1]
        start = t.next_sig(line, col + 1) or (line, col + 1)
        before = t.prev_sig(end_line, end_col - 1)
        end = (before[0], before[1] + 1) if before is not None else (end_line, end_col - 1)
        return start[0], start[1], end[0], end[1]

    def _outer(self, node: ast.AST) -> Span:
        """The span of ``node``'s code: with its own parentheses (not a call's)."""
        span = self._span(node)
        if not isinstance(node, ast.expr):
            return span
        t = type(node)
        outer: Optional[Span] = None
        if t is ast.Tuple or t is ast.GeneratorExp:
            python = self._python_span(node)
            if python != span:
                outer = python
        else:
            line, col = span[0], span[1]
            if col and self.lines[line - 1][col - 1] in "( \t":  # else no parenthesis of its own
                expanded = self.text.expand(*span)
                if expanded != span:
                    outer = expanded
        if outer is not None and self._is_call_arg(node):
            narrowed = self.text.expand(*span, self._floor_of(node))
            outer = None if narrowed == span else narrowed
        return outer or span

    def _is_call_arg(self, node: ast.AST) -> bool:
        self._walk()
        return id(node) in self._call_args

    def _floor_of(self, node: ast.AST) -> Optional[tuple[int, int]]:
        """The opening parenthesis of the call whose positional argument ``node`` is."""
        call = self._call_args[id(node)]
        t = self.text
        func = self._span(call.func)
        floor = t.next_sig(func[2], func[3])
        while floor is not None and t.char(floor) == ")":  # (f)(x)
            floor = t.next_sig(floor[0], floor[1] + 1)
        return floor

    # -- shapes read from the text --------------------------------------------------------
    def concatenation(self, node: ast.expr) -> bool:
        """A string literal (ast.Constant, ast.JoinedStr) written as several: ``'a' 'b'``,
        ``'a' f'{b}'``, which Python joins into one node; the analysis gives it no value."""
        owner = self.owner(node)
        text = owner.text.segment(*owner._python_span(node))
        return not one_literal(text) and literal_count(text) >= 2

    def parenthesized(self, node: ast.AST) -> bool:
        """Python's span of ``node`` is wrapped whole in parentheses (a tuple's own)."""
        return parenthesized(self.text.segment(*self._python_span(node)))


def parse(text: str) -> Module:
    """The module of ``text``; raises SyntaxError (and ValueError for a NUL byte) as
    Python's parser does."""
    from ..stages import newer_syntax

    return Module(newer_syntax.parse(text), text)


def owner_of(node: ast.AST) -> Optional[Module]:
    """The live module that holds ``node`` (a walk of each module, once; none when only
    one module is alive)."""
    global _last
    if len(_LIVE) == 1:
        for module in _LIVE:
            return module
    # The module asked last first: consecutive questions are mostly of one function's body.
    last = _last() if _last is not None else None
    if last is not None and last.holds(node):
        return last
    for module in list(_LIVE):
        if module is not last and module.holds(node):
            _last = weakref.ref(module)
            return module
    return None


_last: "Optional[weakref.ref[Module]]" = None


# -- a call's arguments -----------------------------------------------------------------
def call_args(call: ast.Call) -> list[Arg]:
    """The arguments as written: positional ones (ast.Starred for ``*x``) and keywords
    (ast.keyword, ``arg`` None for ``**m``) in source order."""
    args: list[Arg] = list(call.args)
    if not call.keywords:
        return args
    if not args:
        return list(call.keywords)
    args += call.keywords
    first_kw = call.keywords[0]
    last_pos = call.args[-1]
    if (first_kw.lineno, first_kw.col_offset) < (last_pos.lineno, last_pos.col_offset):
        args.sort(key=lambda a: (a.lineno, a.col_offset))  # f(k=1, *rest)
    return args


def arg_value(a: Arg) -> ast.expr:
    """The expression an argument passes (``x`` of ``*x``, ``v`` of ``k=v``)."""
    if isinstance(a, (ast.keyword, ast.Starred)):
        return a.value
    return a


def arg_keyword(a: Arg) -> Optional[str]:
    """The keyword of ``k=v``; None for a positional argument, ``*x`` and ``**m``."""
    return a.arg if type(a) is ast.keyword else None


def arg_star(a: Arg) -> str:
    """``"*"`` for ``*x``, ``"**"`` for ``**m``, else ``""``."""
    t = type(a)
    if t is ast.Starred:
        return "*"
    if isinstance(a, ast.keyword) and a.arg is None:
        return "**"
    return ""


# -- subscripts ---------------------------------------------------------------------------
def subscript_items(node: ast.Subscript) -> list[ast.expr]:
    """The elements between the brackets, as written: ``x[a, b]`` two,
    ``x[(a, b)]`` one (a tuple); each an expression, an ast.Slice or an ast.Starred."""
    s = node.slice
    if type(s) is not ast.Tuple or not s.elts:
        return [s]
    first, last = s.elts[0], s.elts[-1]
    if (s.lineno, s.col_offset) == (first.lineno, first.col_offset) or \
            (s.end_lineno, s.end_col_offset) == (last.end_lineno, last.end_col_offset):
        return list(s.elts)  # no parenthesis around the whole
    module = owner_of(s)  # x[(a), (b)] against x[(a, b)]: the text tells
    if module is not None and module.parenthesized(s):
        return [s]
    return list(s.elts)


# -- constants ---------------------------------------------------------------------------
def is_none(node: Optional[ast.AST]) -> bool:
    return type(node) is ast.Constant and node.value is None


def string_value(node: Optional[ast.AST]) -> Optional[str]:
    """The value of a ``str`` literal (implicit concatenation included), else None."""
    if type(node) is ast.Constant and type(node.value) is str:
        return node.value
    return None


def plain_string(node: Optional[ast.AST]) -> Optional[str]:
    """The value of a ``str`` literal written as one literal;
    None for anything else, ``'a' 'b'`` included (the text of the node's module tells)."""
    value = string_value(node)
    if value is None or not isinstance(node, ast.Constant):  # (a value: a Constant)
        return None
    module = owner_of(node)
    if module is not None and module.concatenation(node):
        return None
    return value
