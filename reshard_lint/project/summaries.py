"""What a project module exports to the files that import it: its module-level values.

A summary is the module analysed once (the same interpreter) for the values its
module body leaves bound: device lists, meshes, shardings, arrays placed on them, and
tuples of these; and, in the summary an importer asks for when it calls one, the
functions and classes whose bodies build device values (defs.py). A name bound at more
than one site, or rebound by a function (``global``), is not exported: its value at
import time is not known.

Summaries are kept per process, keyed by the module's file and content: flake8 workers
and the language server each analyse a module once however many files import it, and
again only when its text changes; ``reshard-lint check`` and ``coverage`` analyse the
files that import project modules in their main process (runner.py), so once per run. ``deps`` lists every project file
a summary read (its own, and those of what it imports), with their content hashes, so a
cached diagnostic can be checked against the files it was computed from.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from ..analysis.context import FileContext
    from ..analysis.values import ClassVal, Value


def digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


@dataclass
class Summary:
    module: str  # dotted name
    path: str  # the file, absolute
    display: str  # the file as messages name it: relative to the project root
    digest: str
    exports: dict[str, "Value"]
    ctx: "FileContext | None"  # positions of its nodes, for messages; None: nothing exported
    deps: dict[str, str] = field(default_factory=dict)  # path -> digest, this file's included
    # The contexts its exports' nodes are in: its own, and those of the modules it
    # re-exports from.
    contexts: list["FileContext"] = field(default_factory=list)
    full: bool = False  # exports the functions importers call, too (defs.py)


def exportable(value: "Value") -> bool:
    """A value another module can use as it is: placed data and what places it, and the
    integers, ranges, slices, strings and flags that size and name them (a configuration
    module's), and tuples, lists and dicts of these (``{"learner": slice(0, 4), ...}``:
    each importer gets its own copy, mutation.own_copy)."""
    from ..analysis.values import (
        ArrayVal, ConstVal, DevVal, IntVal, MeshVal, RangeVal, SeqVal, ShardingVal, SliceVal, SpecVal,
    )

    if isinstance(value, (ArrayVal, DevVal, MeshVal, ShardingVal, SpecVal, IntVal, RangeVal)):
        return True
    if isinstance(value, ConstVal):
        # A configuration's constant (a string, a flag); not None, a placeholder some
        # other code may set.
        return type(value.value) in (str, bool, float)
    if isinstance(value, SliceVal):
        # ``slice(None, 4)``: a bound left out is None, as Python has it.
        return all(b is None or (isinstance(b, ConstVal) and b.value is None) or exportable(b)
                   for b in value.bounds)
    return isinstance(value, SeqVal) and not value.changed and bool(value.items) \
        and all(exportable(v) for v in value.items)


def frozen_config(value: "Value", field_value: "Callable[[ClassVal, str], Value]") -> "Value | None":
    """An instance of a frozen dataclass of the module (``CONFIG = MeshConfig()``) as its
    importers read it: its fields' values, as the module's constructions give them
    (``field_value``), where they are values an importer can use as they are (``exportable``;
    the others unknown); no methods. None for any other value. Frozen: no importer can
    change a field in place."""
    import ast

    from ..analysis.reasons import ATTRIBUTE_ELSEWHERE
    from ..analysis.values import ClassVal, InstanceVal, unknown

    # (An instance of another module's class has its own class without fields: classes.py.)
    if not isinstance(value, InstanceVal) or value.cls.fields is None:
        return None
    cls = value.cls
    frozen = any(type(d) is ast.Call and any(k.arg == "frozen" and type(k.value) is ast.Constant
                                             and k.value.value is True for k in d.keywords)
                 for d in cls.node.decorator_list)
    if not frozen:
        return None
    attrs: dict[str, Value] = {}
    for name in cls.fields.names:  # type: ignore[union-attr]  # (not None: above)
        v = field_value(cls, name)
        attrs[name] = v if exportable(v) else unknown(ATTRIBUTE_ELSEWHERE, f"{cls.node.name}.{name}")
    own = ClassVal(cls.node, attrs)
    own.instance = InstanceVal(own)
    return own.instance


def callable_export(value: "Value", path: str) -> "Value | None":
    """A module-level function (or one under ``jax.jit``) or class another module may
    call, marked as the module's at ``path``: its body (a class's ``__init__`` and
    methods) runs in the caller's analysis, quietly (the findings inside it are the
    defining module's own to report), or None."""
    from ..analysis.values import ClassVal, FuncVal, JitVal

    if isinstance(value, ClassVal):
        value.home = path
        for v in value.attrs.values():
            method = v.func if isinstance(v, JitVal) else v
            if isinstance(method, FuncVal):
                method.home = path
        return value
    func = value.func if isinstance(value, JitVal) else value
    if not isinstance(func, FuncVal) or func.owner is not None or func.scope is None:
        return None
    func.home = path
    return value


def registry_export(value: "Value", path: str) -> "Value | None":
    """A dict the module body filed functions into (``MESHES["train"] = train_mesh`` by a
    decorator), unchanged otherwise: its functions marked as the module's (``callable_export``),
    or None."""
    from ..analysis.values import SeqVal

    if not isinstance(value, SeqVal) or value.kind != "dict" or value.changed or not value.items:
        return None
    if any(callable_export(item, path) is None for item in value.items):
        return None
    return value


def reexport(value: "Value") -> bool:
    """A name a module binds by importing it (``from .mesh import TRAIN``), followed only
    when an importer asks for it."""
    from ..analysis.values import QualVal

    return type(value) is QualVal


def made(module: str, path: str, display: str, text_digest: str, exports: dict[str, "Value"],
         ctx: "FileContext | None", deps: dict[str, str], contexts: list["FileContext"],
         full: bool = False) -> Summary:
    """A module's summary: ``exports`` (empty when it could not be analysed) from ``ctx``,
    having read the files of ``deps`` and the modules of ``contexts`` besides itself."""
    deps = {**deps, path: text_digest}
    if not exports or ctx is None:
        return Summary(module, path, display, text_digest, {}, None, deps, full=full)
    return Summary(module, path, display, text_digest, exports, ctx, deps,
                   [ctx, *(c for c in contexts if c is not ctx)], full)
