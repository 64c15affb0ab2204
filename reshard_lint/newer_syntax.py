"""Python's tree of code written for a newer Python than the one running reshard-lint.

On Python 3.11, ``ast.parse`` rejects PEP 695 type parameters (``def f[T](x)``,
``class C[T]:``, ``type X = ...``), which JAX itself uses. libcst parses them, but
without Python's tree a file cannot be gated or sliced, so each such file went whole to
libcst (on the jax repository, core.py and pallas/mosaic/lowering.py: 10,000 lines and a
seventh of the engine's time, for no finding). Type parameters hold no device list,
mesh or array, so the tree of the same text with them blanked out gives the gate, the
slicing, the call counts and the positions what Python 3.12's own tree gives them:
every other character stays where it was.
"""

from __future__ import annotations

import ast
import io
import sys
import tokenize
from typing import Callable

_BREAKS = (tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT)
_QUIET = (tokenize.NL, tokenize.COMMENT)


def parse(source: str) -> ast.Module:
    """``ast.parse(source)``, and on Python < 3.12 the tree without type parameters where
    only they stood in the way; raises the original SyntaxError otherwise."""
    try:
        return ast.parse(source)
    except SyntaxError as exc:
        if sys.version_info >= (3, 12):
            raise
        blanked = without_type_params(source)
        if blanked is None or blanked == source:
            raise
        try:
            return ast.parse(blanked)
        except SyntaxError:
            raise exc from None


def without_type_params(source: str) -> str | None:
    """``source`` with each type parameter list blanked (``def f[T](x)`` -> ``def f   (x)``)
    and ``type X = ...`` turned into ``_=0; X = ...``, every other character in place;
    None when the text cannot be tokenized (PEP 701 f-strings, for one)."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError):
        return None
    starts = [0]
    for line in io.StringIO(source):
        starts.append(starts[-1] + len(line))
    chars = list(source)

    def offset(pos: tuple[int, int]) -> int:
        return starts[pos[0] - 1] + pos[1]

    statement_start = True
    for i, tok in enumerate(tokens):
        if tok.type in _BREAKS or (tok.type == tokenize.OP and tok.string == ";"):
            statement_start = True
            continue
        if tok.type in _QUIET:
            continue
        at_start, statement_start = statement_start, False
        if tok.type != tokenize.NAME or i + 2 >= len(tokens) or tokens[i + 1].type != tokenize.NAME:
            continue
        opener = tokens[i + 2]
        if opener.type != tokenize.OP:
            continue
        if tok.string in ("def", "class") and opener.string == "[":
            pass
        elif at_start and tok.string == "type" and opener.string in ("=", "["):
            chars[offset(tok.start):offset(tok.end)] = "_=0;"  # four characters, like "type"
            if opener.string != "[":
                continue
        else:
            continue
        _blank_brackets(tokens, i + 2, chars, offset)
    return "".join(chars)


def _blank_brackets(tokens: list[tokenize.TokenInfo], first: int, chars: list[str],
                    offset: Callable[[tuple[int, int]], int]) -> None:
    """Blank from ``tokens[first]`` (an opening bracket) to its closing one. A list over
    several lines keeps them joined with a backslash before each line break."""
    depth = 0
    for tok in tokens[first:]:
        if tok.type != tokenize.OP:
            continue
        if tok.string in "([{":
            depth += 1
        elif tok.string in ")]}":
            depth -= 1
            if depth == 0:
                start, end = offset(tokens[first].start), offset(tok.end)
                for k in range(start, end):
                    if chars[k] == "\n":
                        chars[k - 2 if chars[k - 1] == "\r" else k - 1] = "\\"
                    elif chars[k] != "\r":
                        chars[k] = " "
                return
