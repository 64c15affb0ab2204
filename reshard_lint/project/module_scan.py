"""What a module's text says, read with regular expressions rather than parsed: its import
lines and its module-level bindings. The gate's import following (imported.py), the
functions importers may call (defs.py) and the interface hashes (interface.py) read them.
"""

from __future__ import annotations

import re
from typing import Callable, TypeVar

from ..core.vocabulary import VALUE_PATTERN
from .guarded import guarded_text

T = TypeVar("T")
IDENT = re.compile(r"[A-Za-z_]\w*")

# Matched at the start of a line holding "import": str.find over the text, then these, is
# ten times faster than one multiline regex over every file.
_FROM = re.compile(r"[ \t]*from[ \t]+(\.*)([\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n#;]*)")


_IMPORT_AS = re.compile(r"[ \t]*import[ \t]+([\w.]+)[ \t]+as[ \t]+(\w+)")
# ``from m import *`` in column 0: at module level, run whenever the module is.
_STAR = re.compile(r"^from[ \t]+(\.*)([\w.]*)[ \t]+import[ \t]+\*[ \t]*(?:#.*)?$", re.MULTILINE)


def import_lines(text: str) -> tuple[list[tuple[str, str, str]], list[tuple[str, str]]]:
    """(from-imports as (dots, module, names), ``import a.b as m`` as (module, alias))."""
    froms: list[tuple[str, str, str]] = []
    imports: list[tuple[str, str]] = []
    seen = -1
    i = text.find("import")
    while i >= 0:
        start = text.rfind("\n", 0, i) + 1
        if start != seen:
            seen = start
            # (the patterns' groups: the tuples the lists hold)
            m = _FROM.match(text, start)
            if m is not None:
                froms.append(m.groups())  # type: ignore[arg-type]
            else:
                a = _IMPORT_AS.match(text, start)
                if a is not None:
                    imports.append(a.groups())  # type: ignore[arg-type]
        i = text.find("import", i + 6)
    return froms, imports


def star_imports(text: str) -> list[tuple[str, str]]:
    """The modules a module's top-level ``from m import *`` lines name, as (dots, module)."""
    return [(m.group(1), m.group(2)) for m in _STAR.finditer(text)] if "*" in text else []


def code_names(text: str) -> frozenset[str]:
    """Every name the module's code spells (not its comments or strings); empty when
    its text does not tokenize."""
    import io
    import tokenize

    try:
        return frozenset(t.string for t in tokenize.generate_tokens(io.StringIO(text).readline)
                         if t.type == tokenize.NAME)
    except (tokenize.TokenError, SyntaxError):
        return frozenset()


def per_content(memo: dict[tuple[object, ...], object], path: str | None, text_digest: str | None, text: str,
                compute: Callable[[str], T]) -> T:
    """``compute(text)`` of the project file at ``path``, once per file and content in
    a project's ``memo``."""
    key = (compute.__name__, path, text_digest)
    found = memo.get(key)
    if found is None:
        found = memo[key] = compute(text)
    return found  # type: ignore[return-value]  # (what compute returned under this key)


# A module-level assignment: a line in column 0, its target list, ``=`` (not ``==``).
_BINDING = re.compile(r"(?m)^([A-Za-z_(\[][\w ,()\[\].*]*?)(?::[^=\n]*)?=(?!=)")


_KEYWORDS = frozenset({"def", "class", "import", "from", "async", "if", "elif", "else", "for", "while", "with",
                       "return", "try", "except", "finally", "assert", "del", "lambda", "not", "and", "or", "in",
                       "is", "raise", "yield", "await", "global", "nonlocal", "pass", "print"})


def bindings(text: str) -> dict[str, list[str]]:
    """The module-level bindings of a text (imported.py memoizes them per module and content)."""
    out = _column_0(text)
    for name, values in _column_0(guarded_text(text)).items():
        out.setdefault(name, []).extend(values)
    return out


def any_value(text: str) -> bool:
    """May a module-level name of ``text`` be bound to a device value (``_ANY_VALUE``, in
    column 0 or one level into a guarded block)?"""
    return bool(_ANY_VALUE.search(text)) or bool(_ANY_VALUE.search(guarded_text(text)))


def _column_0(text: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for m in _BINDING.finditer(text):
        names = IDENT.findall(m.group(1))
        if not names or names[0] in _KEYWORDS:
            continue
        end = text.find("\n", m.end())
        rhs = text[m.end(): len(text) if end < 0 else end]
        depth, lines = _open(rhs), 0
        while depth > 0 and end >= 0 and lines < 30:  # the value goes on over lines
            nxt = text.find("\n", end + 1)
            more = text[end: len(text) if nxt < 0 else nxt]
            depth += _open(more)
            rhs, end, lines = rhs + more, nxt, lines + 1
        for name in names:
            out.setdefault(name, []).append(rhs)
    return out


def _open(text: str) -> int:
    """How many more brackets of any kind ``text`` opens than it closes (a dict literal
    goes on over lines as a call does)."""
    return (text.count("(") + text.count("[") + text.count("{")
            - text.count(")") - text.count("]") - text.count("}"))


# A module-level assignment (column 0) whose value names devices, meshes or shardings.
_ANY_VALUE = re.compile(
    r"(?m)^[A-Za-z_(\[][^#\n]*[^=!<>\n]=(?!=)[^\n]*(?:" + VALUE_PATTERN + ")")
