"""Module-level names bound inside a module-level ``if``, ``try`` or ``with`` block.

``if jax.device_count() >= 4:`` then ``ROLLOUT = Mesh(...)`` one level in: an importer
that gets ``ROLLOUT`` at all (``from mypkg.meshes import ROLLOUT`` raises ImportError
otherwise) gets the value of that one statement, which ran once, when the module was
imported. So a name with one binding site, a statement directly in such a block (not
on the header's line, not in a loop, a nested block or a function), is exported with
the value it was bound to there, though after the block the module's own code cannot
tell whether it is bound.

Both sides read the same shape: the gate from the text (``guarded_text``: the blocks'
lines, dedented one level, for imported.py's column-0 binding scan), the summary from
Python's tree (``guarded_names``). Standard library only: the gate runs without the engine.
"""

from __future__ import annotations

import ast
import re
from functools import lru_cache

# A header in column 0 that opens a block whose statements run at most once.
_HEADER = re.compile(r"(?m)^(?:if|elif|else|try|except|finally|with)\b")
_NEXT_TOP = re.compile(r"(?m)^[^\s#]")
_MAX_HEADER_LINES = 10


@lru_cache(maxsize=32)  # the gate asks for a module's bindings and its any-value test
def guarded_text(text: str) -> str:
    """The statements directly inside the module-level ``if``/``try``/``with`` blocks of
    ``text``, each block dedented by its first statement's indentation (so those
    statements are in column 0 and what nests deeper stays indented); "" when none."""
    if "\n " not in text and "\n\t" not in text:
        return ""
    parts: list[str] = []
    for m in _HEADER.finditer(text):
        start = _header_end(text, m.start())
        if start < 0:
            continue
        nxt = _NEXT_TOP.search(text, start)
        block = text[start: nxt.start() if nxt is not None else len(text)]
        indent = _first_indent(block)
        if not indent:
            continue
        parts.extend(line[len(indent):] if line.startswith(indent) else "" for line in block.split("\n"))
    return "\n".join(parts)


def _header_end(text: str, pos: int) -> int:
    """Where the block of the header at ``pos`` starts (after its line and any lines its
    brackets continue over), or -1 for a header with its body on its own line."""
    depth = 0
    for _ in range(_MAX_HEADER_LINES):
        end = text.find("\n", pos)
        line = text[pos: len(text) if end < 0 else end]
        code = line.split("#", 1)[0].rstrip()
        depth += code.count("(") + code.count("[") + code.count("{") \
            - code.count(")") - code.count("]") - code.count("}")
        if depth <= 0:
            if not code.endswith(":"):
                return -1  # `if x: Y = 1`: a one-line block, not read
            return end + 1 if end >= 0 else -1
        if end < 0:
            return -1
        pos = end + 1
    return -1


def _first_indent(block: str) -> str:
    for line in block.split("\n"):
        stripped = line.lstrip()
        if stripped and not stripped.startswith("#"):
            return line[: len(line) - len(stripped)]
    return ""


def guarded_names(tree: ast.Module, lines: list[str]) -> set[str]:
    """Names an assignment binds directly in a module-level ``if`` (and its ``elif`` and
    ``else``), ``try`` (its body, handlers, ``else`` and ``finally``) or ``with`` block,
    the statement on a line of its own (``lines``: the text's)."""
    out: set[str] = set()
    for stmt in tree.body:
        for body in _blocks(stmt):
            for child in body:
                line = lines[child.lineno - 1] if child.lineno <= len(lines) else ""
                if line[: child.col_offset].strip():
                    continue  # after a header or another statement on its line
                targets = child.targets if isinstance(child, ast.Assign) else \
                    [child.target] if isinstance(child, ast.AnnAssign) and child.value is not None else []
                for t in targets:
                    out.update(n.id for n in ast.walk(t) if isinstance(n, ast.Name))
    return out


def _blocks(stmt: ast.stmt) -> list[list[ast.stmt]]:
    """The blocks of a module-level compound statement whose statements run at most once."""
    if isinstance(stmt, ast.If):
        if len(stmt.orelse) == 1 and isinstance(stmt.orelse[0], ast.If) \
                and stmt.orelse[0].col_offset == stmt.col_offset:
            return [stmt.body, *_blocks(stmt.orelse[0])]  # elif
        return [stmt.body, stmt.orelse]
    tries: tuple[type[ast.Try] | type[ast.TryStar], ...] = (ast.Try, getattr(ast, "TryStar", ast.Try))
    if isinstance(stmt, tries):
        return [stmt.body, *(h.body for h in stmt.handlers), stmt.orelse, stmt.finalbody]
    if isinstance(stmt, ast.With):
        return [stmt.body]
    return []
