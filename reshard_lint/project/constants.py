"""Module-level containers of constants that the whole project only reads.

A configuration module's ``ROLE_DEVICES = {"learner": slice(0, 4), "actor": slice(4, 8)}``
is what its importers read only while no code changes it in place: an importer that
runs ``config.ROLE_DEVICES["actor"] = slice(0, 4)`` (or a function of the module that
does, which the module's summary does not run) changes it for every module that reads it
later. A list, dict or set a summary exports (summaries.exportable) is handed to an
importer only where Python's trees of its module and of every project file that spells
its name use it only to read it (registries.py's tests: ``d[k]``, ``d.get(k)``, ``in``,
``len``, iteration, an import); any other use (a store, ``update``, handing it to a
function) leaves it unknown. Tuples of constants need no such look: nothing changes them.
(Containers of meshes, shardings and arrays are read as the summary left them, each
importer changing its own copy: mutation.py; a registry's functions as registries.py says.)
``getattr(module, ...)``, ``globals()`` and code outside the project are not seen.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from . import registries

if TYPE_CHECKING:
    from ..analysis.values import Value
    from .view import Project

_MUTABLE = frozenset({"list", "dict", "set"})


def mutable(value: "Value") -> bool:
    """Is ``value`` a container of constants (not of device values, which an importer
    reads as the summary left them, its own copy: mutation.own_copy) that holds a list,
    dict or set (itself, or inside its tuples)?"""
    return _constants(value) and _holds_mutable(value)


def _holds_mutable(value: "Value") -> bool:
    from ..analysis.values import SeqVal

    return isinstance(value, SeqVal) and (value.kind in _MUTABLE
                                          or any(_holds_mutable(v) for v in value.items))


def _constants(value: "Value") -> bool:
    """Numbers, strings, flags, ranges and slices, in tuples, lists and dicts (not a
    registry's functions: registries.py says who files into those)."""
    from ..analysis.values import ConstVal, IntVal, RangeVal, SeqVal, SliceVal

    if isinstance(value, SeqVal):
        return all(_constants(v) for v in value.items)
    return isinstance(value, (ConstVal, IntVal, RangeVal, SliceVal))


def only_read(project: "Project", path: str, name: str, deps: dict[str, str]) -> bool:
    """Does every project file that spells ``name`` (the defining module at ``path``
    included) only read the module-level container it binds there? The files read go
    into ``deps``. The project's identifier index is built (``Project.words``)."""
    found = project.text(path)
    if found is None:
        return False
    deps[path] = found[1]
    own = project.tree(found[0])
    if own is None or registries.filers(own, name) != frozenset():
        return False  # changed by a function of its module, or otherwise than read
    own_key = os.path.realpath(path)
    for other in project.files_naming(name, deps):
        if os.path.realpath(other) == own_key:
            continue
        text = project.text(other)
        tree = project.tree(text[0]) if text is not None else None
        if tree is None or registries.named_elsewhere(tree, frozenset(), name):
            return False
    return True
