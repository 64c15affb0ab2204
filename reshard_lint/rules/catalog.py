"""The rules' codes, names and summaries, read from their modules' source.

Importing the rules imports the analysis, and `check` needs the table before it
starts worker processes that should not hold it before they need it: reading the
class attributes with Python's own parser costs about 30 ms. A rule whose metadata
is not plain literals (options, a computed summary) makes this give up, and the
caller imports the rules instead; a test holds the two tables equal.
"""

from __future__ import annotations

import ast
import os
from typing import Any

_FIELDS = ("code", "name", "summary", "fix_safety", "severity")
_DEFAULTS = {"fix_safety": "none", "severity": "error"}  # Rule's own (base.py)


def static_table() -> list[dict[str, Any]] | None:
    """The rule table as `runner.rule_table` gives it, or None when it cannot be read."""
    here = os.path.dirname(os.path.abspath(__file__))
    found: list[dict[str, Any]] = []
    try:
        names = sorted(n for n in os.listdir(here) if n.startswith("rsh") and n.endswith(".py"))
        for name in names:
            with open(os.path.join(here, name), encoding="utf-8") as fh:
                tree = ast.parse(fh.read())
            rules = [_rule(node) for node in tree.body if isinstance(node, ast.ClassDef)]
            rules = [r for r in rules if r is not False]
            if None in rules:
                return None
            found.extend(r for r in rules if isinstance(r, dict))
    except (OSError, SyntaxError, ValueError):
        return None
    found.sort(key=lambda r: r["code"])
    return found


def _rule(node: ast.ClassDef) -> dict[str, Any] | None | bool:
    """The class's metadata; False: not a rule; None: a rule this reader cannot read."""
    if not any(isinstance(b, ast.Name) and b.id == "Rule" for b in node.bases):
        return False
    values: dict[str, Any] = dict(_DEFAULTS)
    for stmt in node.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            target, value = stmt.targets[0].id, stmt.value
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
            target, value = stmt.target.id, stmt.value
        else:
            continue
        if target == "options":
            return None
        if target in _FIELDS:
            if not (isinstance(value, ast.Constant) and isinstance(value.value, str)):
                return None
            values[target] = value.value
    if not all(f in values for f in _FIELDS):
        return None
    return {**{f: values[f] for f in _FIELDS}, "options": []}
