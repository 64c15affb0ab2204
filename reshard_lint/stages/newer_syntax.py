"""Python's tree of code written for a newer Python than the one running reshard-lint.

On Python 3.11, ``ast.parse`` rejects PEP 695 type parameters (``def f[T](x)``,
``class C[T]:``, ``type X = ...``), which JAX itself uses, and PEP 701 f-strings
(``f"{x["k"]}"``). Without Python's tree a file cannot be gated, sliced or analysed
(the analysis reads Python's tree, analysis/tree.py). Type parameters hold
no device list, mesh or array, so the tree of the same text with them blanked out gives
the gate, the slicing, the call counts and the analysis what Python 3.12's own tree
gives them: every other character stays where it was. Such f-strings are blanked to
plain strings of the same length; what their fields read is not seen.
"""

from __future__ import annotations

import ast
import re
import sys


def parse(source: str) -> ast.Module:
    """``ast.parse(source)``, and on Python < 3.12 the tree without type parameters where
    only they stood in the way; raises the original SyntaxError otherwise."""
    try:
        return ast.parse(source)
    except SyntaxError as exc:
        if sys.version_info >= (3, 12):
            raise
        blanked = without_type_params(source)
        if blanked is not None:
            blanked = without_new_fstrings(blanked)
        if blanked is None or blanked == source:
            raise
        try:
            return ast.parse(blanked)
        except SyntaxError:
            raise exc from None


# A type parameter list opens right after the name of a def or class; a type alias
# statement starts with the soft keyword ``type`` and a name.
_OPENERS = re.compile(r"^[ \t]*(?:async[ \t]+)?(?:def|class)[ \t]+\w+[ \t]*(?P<params>\[)"
                      r"|^[ \t]*(?P<alias>type)[ \t]+\w+[ \t]*(?P<after>[=\[])",
                      re.MULTILINE)
_CLOSE = {"(": ")", "[": "]", "{": "}"}


def without_type_params(source: str) -> str | None:
    """``source`` with each type parameter list blanked (``def f[T](x)`` -> ``def f   (x)``)
    and ``type X = ...`` turned into ``_=0; X = ...``, every other character in place;
    None when a list does not close. A match inside a string or comment only changes that
    string or comment."""
    chars: list[str] | None = None
    for match in _OPENERS.finditer(source):
        if chars is None:
            chars = list(source)
        if match.group("alias"):
            chars[match.start("alias"):match.end("alias")] = "_=0;"  # four characters, like "type"
            opener = match.start("after") if match.group("after") == "[" else -1
        else:
            opener = match.start("params")
        if opener >= 0 and not _blank_brackets(source, opener, chars):
            return None
    return source if chars is None else "".join(chars)


def _blank_brackets(source: str, start: int, chars: list[str]) -> bool:
    """Blank from the bracket at ``start`` to the one that closes it; a list over several
    lines keeps them joined with a backslash before each line break. Strings and comments
    inside are skipped over; False when the list does not close."""
    stack: list[str] = []
    i, n = start, len(source)
    while i < n:
        c = source[i]
        if c in _CLOSE:
            stack.append(_CLOSE[c])
        elif c in ")]}":
            if not stack or stack.pop() != c:
                return False
            if not stack:
                break
        elif c == "#":
            end = source.find("\n", i)
            i = n if end < 0 else end
            continue
        elif c in "'\"":
            end = i + 1
            while end < n and source[end] != c and source[end] != "\n":
                end += 2 if source[end] == "\\" else 1
            if end >= n or source[end] != c:
                return False
            i = end
        i += 1
    else:
        return False
    for k in range(start, i + 1):
        if chars[k] == "\n":
            chars[k - 2 if chars[k - 1] == "\r" else k - 1] = "\\"
        elif chars[k] != "\r":
            chars[k] = " "
    return True


_PREFIX = frozenset("rRbBuUfF")


def without_new_fstrings(source: str) -> str | None:
    """``source`` with each f-string that only Python 3.12 parses (PEP 701: the outer
    quote, a backslash or a comment inside a replacement field) blanked to a plain
    string of the same length and lines; None when a string does not close. What the
    blanked fields read is not seen: only such files lose it."""
    chars: list[str] | None = None
    i, n = 0, len(source)
    while i < n:
        c = source[i]
        if c == "#":
            end = source.find("\n", i)
            i = n if end < 0 else end
            continue
        if c not in "'\"":
            i += 1
            continue
        start = _prefix_start(source, i)
        found = _string_end(source, i, "f" in source[start:i].lower())
        if found is None:
            return None
        end, newer = found
        if newer:
            if chars is None:
                chars = list(source)
            quote = source[i:i + 3] if source[i:i + 3] in ('"""', "'''") else source[i]
            for k in range(start, end):
                if chars[k] not in "\r\n":
                    chars[k] = " "
            q = '"""' if len(quote) == 3 else '"'
            chars[start:start + len(q)] = q
            chars[end - len(q):end] = q
        i = end
    return source if chars is None else "".join(chars)


def _prefix_start(source: str, quote: int) -> int:
    """Where the literal whose opening quote is at ``quote`` starts: its prefix (``rb``,
    ``f``) included, unless those letters end a name."""
    start = quote
    while start > 0 and source[start - 1] in _PREFIX and quote - start < 2:
        start -= 1
    if start > 0 and (source[start - 1].isalnum() or source[start - 1] == "_"):
        return quote
    return start


def _string_end(source: str, i: int, formatted: bool) -> tuple[int, bool] | None:
    """Where the string literal whose quote is at ``i`` ends, and whether it is an
    f-string only Python 3.12 parses."""
    quote = source[i:i + 3] if source[i:i + 3] in ('"""', "'''") else source[i]
    j, n, depth, newer = i + len(quote), len(source), 0, False
    while j < n:
        c = source[j]
        if depth == 0:
            if source.startswith(quote, j):
                return j + len(quote), newer
            if c == "\\":
                j += 2
                continue
            if c == "\n" and len(quote) == 1:
                return None
            if formatted and c == "{":
                if source.startswith("{{", j):
                    j += 2
                    continue
                depth = 1
            j += 1
            continue
        # inside a replacement field
        if c in "'\"":
            newer = newer or source.startswith(quote, j) or c == quote[0]
            inner = _string_end(source, j, "f" in source[_prefix_start(source, j):j].lower())
            if inner is None:
                return None
            # Python 3.11 takes no backslash anywhere in a field, nested strings included.
            newer = newer or inner[1] or "\\" in source[j:inner[0]]
            j = inner[0]
            continue
        if c == "\\" or c == "#":
            newer = True
        elif c in "{[(":
            depth += 1
        elif c in "}])":
            depth -= 1
        j += 1
    return None
