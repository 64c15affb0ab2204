"""A syntax node's child nodes (syntax/nodes.py), read from its fields.

The field names of a node type are read once, and what a field holds is told by a
table of types, not ``isinstance`` against the abstract classes: the local call counts
(localcounts.py) and the guards (analysis/guards.py) walk every node of the file.
"""

from __future__ import annotations

from typing import Iterator

from .syntax import nodes as cst


OTHER, NODE, SEQUENCE = 0, 1, 2
# type -> what a field of that type holds.
KINDS: dict[type, int] = {}
_FIELDS: dict[type, tuple[str, ...]] = {}


def kind(t: type) -> int:
    found = KINDS.get(t)
    if found is None:
        if issubclass(t, cst.CSTNode):
            found = NODE
        elif t is tuple or t is list:
            found = SEQUENCE
        else:
            found = OTHER
        KINDS[t] = found
    return found


def fields(t: type) -> tuple[str, ...]:
    """The names of a node type's fields."""
    names = _FIELDS.get(t)
    if names is None:
        names = _FIELDS[t] = t._fields  # type: ignore[attr-defined]
    return names


def children(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """The nodes ``node.children`` gives, whitespace left out, in field order."""
    kinds = KINDS
    for name in fields(type(node)):
        value = getattr(node, name)
        k = kinds.get(type(value))
        if k is None:
            k = kind(type(value))
        if k == NODE:
            yield value
        elif k == SEQUENCE:
            for item in value:
                k = kinds.get(type(item))
                if k is None:
                    k = kind(type(item))
                if k == NODE:
                    yield item
