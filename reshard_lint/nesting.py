"""A bound on how deeply a file's expressions nest, found from tokens before parsing.

libcst's native parser and the code that turns its result into Python objects
recurse on the C stack: a few thousand nested brackets, or a chain of a few thousand
``and``/``lambda``/``+``, overflow it and kill the whole process (a segfault, which no
``except`` catches, taking every other flake8 plugin down with it). Python's own
parser refuses more than 200 nested brackets, but flattens ``a and b and ...`` and
comparison chains, so ``ast.parse`` succeeding proves nothing. Hence a token scan
that overestimates the depth of every expression and refuses the file when it is
past what was measured to parse and analyse safely (see docs/robustness.md).
"""

from __future__ import annotations

import io
import tokenize

# Python itself refuses more than 200 nested brackets (tokenizer MAXLEVEL).
MAX_BRACKETS = 200
# libcst parsed chains of 4,000 `and` and 2,000 `lambda` on an 8 MiB stack and crashed at
# 10,000 and 4,000; the analyzer handled depth 1,000 of every shape tried.
MAX_DEPTH = 1000

_OPEN = {"(", "[", "{"}
_CLOSE = {")", "]", "}"}
# Tokens that never deepen an expression: separators and the ends of brackets.
_FLAT = {",", ";", ":", "=", ")", "]", "}"}
# Keywords that nest what follows (`not not x`, `lambda: lambda: x`, `a if b else c if ...`).
_NESTING_WORDS = {"and", "or", "not", "lambda", "if", "else", "await", "in", "is", "yield", "from"}


def too_deep(source: str) -> tuple[int, str] | None:
    """(line, why) when ``source`` nests too deeply to parse safely, else None.

    Depth is estimated per logical line as the open brackets plus, at each bracket
    level, the operators since the last comma at that level: an upper bound on how
    deeply the parsed expression can nest.
    """
    stack: list[int] = [0]  # operators since the last separator, per bracket level
    total = 0  # sum of stack, kept alongside so each token costs O(1)
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            kind, text = tok.type, tok.string
            if kind == tokenize.OP:
                if text in _OPEN:
                    # `f(...)` and `a[...]` are trailers: the call nests one level too.
                    stack[-1] += 1
                    total += 1
                    stack.append(0)
                    if len(stack) - 1 > MAX_BRACKETS:
                        return tok.start[0], f"brackets nested more than {MAX_BRACKETS} deep"
                elif text in _CLOSE:
                    if len(stack) > 1:
                        total -= stack.pop()
                elif text == ",":
                    total -= stack[-1]
                    stack[-1] = 0
                elif text not in _FLAT:
                    stack[-1] += 1
                    total += 1
            elif kind == tokenize.NAME and text in _NESTING_WORDS:
                stack[-1] += 1
                total += 1
            elif kind == tokenize.NEWLINE:
                stack = [0]
                total = 0
            if total + len(stack) > MAX_DEPTH:
                return tok.start[0], f"expression nested or chained more than {MAX_DEPTH} deep"
    except (tokenize.TokenError, SyntaxError):
        # Unterminated strings, brackets or bad dedents: the parser reports them.
        return None
    return None
