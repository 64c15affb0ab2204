"""A bound on how deeply a file's expressions nest, found from tokens before parsing.

The analysis walks Python's tree recursively: a chain of a few thousand ``lambda``
or ``+`` exhausts Python's recursion long before it reaches any finding. Python's own
parser refuses more than 200 nested brackets, but
flattens ``a and b and ...`` and comparison chains, so ``ast.parse`` succeeding proves
nothing. Hence a token scan that overestimates the depth of every expression and
refuses the file when it is past what was measured to analyse safely (see
docs/robustness.md).
"""

from __future__ import annotations

import ast
import io
import tokenize

# Python itself refuses more than 200 nested brackets (tokenizer MAXLEVEL).
MAX_BRACKETS = 200
# The analyzer handles depth 1,000 of every shape tried within the
# engine's recursion limit (engine.py).
MAX_DEPTH = 1000

_OPEN = {"(", "[", "{"}
_CLOSE = {")", "]", "}"}
# Binding strength, loosest first. A chain of one operator nests one level per
# operator; an operator that binds more loosely than the ones before it starts a new
# operand, so those tighter chains end: in `a*b + c*d + ...` only the `+` accumulate.
_PRECEDENCE = {
    "lambda": 0, "if": 1, "else": 1, "or": 2, "and": 3, "not": 4,
    "in": 5, "is": 5, "<": 5, ">": 5, "==": 5, ">=": 5, "<=": 5, "!=": 5,
    "|": 6, "^": 7, "&": 8, "<<": 9, ">>": 9, "+": 10, "-": 10,
    "*": 11, "/": 11, "//": 11, "%": 11, "@": 11, "~": 12, "**": 13, "await": 14,
    ".": 15, "(": 15, "[": 15,
}
_CLASSES = 16
# Tokens that end an operand without nesting anything: separators and assignments
# (not ":", which also ends the head of a lambda whose body nests inside it).
_SEPARATORS = {",", ";", "=", ":=", "->", "+=", "-=", "*=", "/=", "//=", "%=", "@=", "&=", "|=",
               "^=", ">>=", "<<=", "**="}


class _Level:
    """Operators seen, per binding strength, since the last separator at one bracket level."""

    __slots__ = ("counts", "total")

    def __init__(self) -> None:
        self.counts = [0] * _CLASSES
        self.total = 0

    def add(self, cls: int) -> None:
        for tighter in range(cls + 1, _CLASSES):
            self.total -= self.counts[tighter]
            self.counts[tighter] = 0
        self.counts[cls] += 1
        self.total += 1

    def reset(self) -> None:
        self.counts = [0] * _CLASSES
        self.total = 0


def too_deep(source: str, tree: ast.Module | None = None,
             only: set[int] | None = None) -> tuple[int, str] | None:
    """(line, why) when ``source`` nests too deeply to parse safely, else None.

    Depth is estimated per logical line as the open brackets plus, at each bracket
    level, the operators since the last separator that can still enclose what follows
    (see _PRECEDENCE): an upper bound on how deeply the parsed expression nests.

    With ``tree``, Python's parse of ``source``, only the statements whose text is long
    enough to hold MAX_DEPTH tokens are scanned: nesting N deep takes at least N
    tokens, so a shorter statement cannot get there. On the files of the jax sources
    that reach the engine that leaves about a fifth of the text (long docstrings mostly,
    one token each) and a sixth of the time. ``only``: the statements that start on one
    of these lines (the slice the engine will read, prepared.py).
    """
    if tree is None:
        return _scan(source)[0]
    from ..core.fixes import line_starts, split_lines

    lines = split_lines(source)
    starts = line_starts(lines)
    # Only MAX_DEPTH is checked this way: more than MAX_BRACKETS brackets never get here,
    # Python's tokenizer refuses them before there is a tree.
    for first, last in _statement_spans(tree):
        if only is not None and first not in only:
            continue
        last = min(last, len(lines))
        if starts[last] - starts[first - 1] < MAX_DEPTH:
            continue
        found, clean = _scan("".join(lines[first - 1:last]))
        if not clean:
            return _scan(source)[0]  # a fragment the tokenizer rejects: scan it all
        if found is not None:
            return found[0] + first - 1, found[1]
    return None


def _statement_spans(tree: ast.Module) -> list[tuple[int, int]]:
    """(first line, last line) of every place an expression can be: each simple
    statement whole, and the header of every compound one, except clause or case."""
    spans: list[tuple[int, int]] = []
    work: list[ast.stmt | ast.excepthandler] = list(tree.body)
    while work:
        node = work.pop()
        first = node.lineno
        decorators = getattr(node, "decorator_list", None)
        if decorators:
            first = min(first, *(d.lineno for d in decorators))
        body = getattr(node, "body", None)
        if type(body) is list and body and isinstance(body[0], ast.stmt):
            spans.append((first, _header_end(first, body)))
            work.extend(body)
            for name in ("orelse", "finalbody"):
                work.extend(getattr(node, name, None) or ())
            work.extend(getattr(node, "handlers", None) or ())
            for case in getattr(node, "cases", None) or ():
                spans.append((case.pattern.lineno, _header_end(case.pattern.lineno, case.body)))
                work.extend(case.body)
        else:
            spans.append((first, node.end_lineno or first))
    return spans


def _header_end(first: int, body: list[ast.stmt]) -> int:
    # The header ends on the line before its body, or on the body's line in `if x: y`.
    start = body[0].lineno
    return start - 1 if start > first else start


def _scan(source: str) -> tuple[tuple[int, str] | None, bool]:
    """The token scan of too_deep, and whether the tokenizer took all of ``source``."""
    stack = [_Level()]
    outer = 0  # the totals of every level but the innermost
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            kind, text = tok.type, tok.string
            if kind == tokenize.OP:
                if text in _OPEN:
                    # `f(...)` and `a[...]` are trailers: the call nests one level too.
                    stack[-1].add(_PRECEDENCE[text] if text in _PRECEDENCE else 15)
                    outer += stack[-1].total
                    stack.append(_Level())
                    if len(stack) - 1 > MAX_BRACKETS:
                        return (tok.start[0], f"brackets nested more than {MAX_BRACKETS} deep"), True
                elif text in _CLOSE:
                    if len(stack) > 1:
                        stack.pop()
                        outer -= stack[-1].total
                elif text in _SEPARATORS:
                    stack[-1].reset()
                elif text in _PRECEDENCE:
                    stack[-1].add(_PRECEDENCE[text])
            elif kind == tokenize.NAME and text in _PRECEDENCE:
                stack[-1].add(_PRECEDENCE[text])
            elif kind == tokenize.NAME and text in ("yield", "from"):
                stack[-1].add(0)
            elif kind == tokenize.NEWLINE:
                stack = [_Level()]
                outer = 0
            if outer + stack[-1].total + len(stack) > MAX_DEPTH:
                return (tok.start[0], f"expression nested or chained more than {MAX_DEPTH} deep"), True
    except (tokenize.TokenError, SyntaxError):
        # Unterminated strings, brackets or bad dedents: the parser reports them.
        return None, False
    return None, True
