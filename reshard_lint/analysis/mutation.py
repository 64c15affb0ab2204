"""Containers the program changes in place.

A list or dict literal is one ``SeqVal`` however many names, attributes or other
containers hold it, as the object is in Python. A statement that changes it (``d[k] =
v``, ``del d[k]``, ``d.update(...)``, ``arrs.append(x)``, ``arrs += [...]``) changes what
every holder sees; the analysis does not follow the change (a branch may make it or not,
a loop many times), so every element of the container becomes unknown for all of them.
An element read after the change is never the one from before it.
"""

from __future__ import annotations

from typing import Iterable

from .reasons import CONTAINER
from .values import ClassVal, SeqVal, Unknown, Value


def changed(v: Value) -> None:
    """``v`` was changed in place: its elements are unknown from now on, for every holder."""
    if isinstance(v, SeqVal) and v.kind in ("list", "dict") and not v.shared:
        # One unknown each: two elements are not known to be one object (values.Unknown).
        v.items = tuple(Unknown(CONTAINER) for _ in v.items)
        v.changed = True


def no_change(method: str, args: list[Value]) -> bool:
    """``d.update()`` or ``d.update(e)`` of a dict ``e`` known to be empty (the
    ``**kwargs`` of calls that pass no keyword): a change that changes nothing."""
    if method != "update" or len(args) > 1:
        return False
    return all(isinstance(a, SeqVal) and a.kind == "dict" and not a.items and not a.changed for a in args)


def share(values: Iterable[Value]) -> None:
    """Mark the containers a module summary's scope holds (in its names, in other
    containers, in its classes' attributes) as shared by its importers."""
    todo = list(values)
    seen: set[int] = set()
    while todo:
        v = todo.pop()
        if id(v) in seen:
            continue
        seen.add(id(v))
        if isinstance(v, SeqVal):
            v.shared = True
            todo.extend(v.items)
        elif isinstance(v, ClassVal):
            todo.extend(v.attrs.values())


def own_copy(v: Value) -> Value:
    """An importer's own copy of a container a summary holds (its elements shared), which
    its analysis may change in place without changing another importer's."""
    if isinstance(v, SeqVal) and v.shared:
        return SeqVal(tuple(own_copy(i) for i in v.items), v.kind, v.keys)
    return v
