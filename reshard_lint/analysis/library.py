"""Objects of other packages that keep the placement of what they are given.

A model of another package holds a parameter tree (``encoder.params`` of a transformers
Flax model, a flax ``TrainState``'s ``params``, the state ``nnx.update`` puts into an nnx
module), and a checkpointer restores a tree placed as the target it is handed. The
analysis does not read those packages; what they keep is data: ``core/vocabulary.py``'s
``LIBRARY_OBJECTS`` (the calls: what makes such an object, what reads or stores one of
its fields) and ``LIBRARY_KINDS`` (each kind: the fields it keeps, whether ``obj.f = v``
sets one, its methods), which a project extends in ``[tool.reshard-lint]``
(``library-objects``, ``library-kinds``: docs/library-objects.md).

Such an object is a ``HolderVal``: an unknown (everything about it but its kept fields is
what it was, for the same reason) that knows those fields. A field nobody gave is
unknown. An object changes only in ways followed here, each through a name of the scope
that runs, where the code runs once in order (as ``d[k] = v``: flow.store_item): that
name then holds a new object with the field, and the old one, which every other holder
(another name, a container, a function that runs later) keeps, is changed, its fields
unknown from then on. Anything else that may change it changes it the same way: a store
not followed (through an attribute, in a loop run as any number of iterations), a method
the table does not list, calling it, handing it to code the analysis does not run.
"""

from __future__ import annotations

import ast
import json
import re
from typing import TYPE_CHECKING, Callable, Iterable, Mapping, Optional

from ..core import vocabulary as api
from .arguments import Call
from .reasons import LIBRARY_CHANGED, UNKNOWN_OBJECT, named, outside_reason
from .scope import Scope
from .valueops import dotted
from .values import ArrayVal, ConstVal, SeqVal, ShardingVal, Unknown, Value, unknown

if TYPE_CHECKING:
    from .interpreter import Analyzer

ArgSpec = object  # an int (a position), a str (a keyword, "kw.field": a field of the object
#                   given there), or a list of both: one argument given either way

_MAX_DEPTH = 8  # how deep a tree is placed like its target
Hand = Callable[[Iterable[Value]], None]  # hands values to code that may change them (mutation.handed_on)


class HolderVal(Unknown):
    """An object of another package (unknown, for ``reason``) whose kept fields are known."""

    __slots__ = ("kind", "fields", "changed", "shared", "family")

    def __init__(self, reason: str, culprit: str, kind: str, fields: dict[str, Value],
                 family: Optional[list["HolderVal"]] = None) -> None:
        super().__init__(reason, culprit)
        self.kind = kind
        self.fields = fields
        self.changed = False  # may have been changed where the analysis does not follow it
        self.shared = False  # a module summary's, which every importer holds: never read
        # Every value that stands for the same object of the program, before and after the
        # stores the analysis followed: a change it does not follow, made through any of
        # them, changes them all.
        self.family = family if family is not None else []
        self.family.append(self)

    def field(self, name: str) -> Optional[Value]:
        if self.changed or self.shared:
            return None
        return self.fields.get(name)

    def with_fields(self, fields: Mapping[str, Value], same_object: bool) -> "HolderVal":
        """The object with ``fields`` set (``same_object``: after a store into it), or a
        copy of it with them replaced (a new object, ``state.replace(params=p)``)."""
        known = {} if self.changed or self.shared else dict(self.fields)
        known.update(fields)
        return HolderVal(self.reason, self.culprit, self.kind, known, self.family if same_object else None)


class Table:
    """The calls and kinds: the vocabulary's, with the project's entries over them."""

    def __init__(self, calls: Mapping[str, Mapping[str, object]],
                 kinds: Mapping[str, Mapping[str, object]]) -> None:
        # A project's entry replaces the vocabulary's of the same key; its patterns are
        # tried first.
        self.calls = [(_pattern(k), v) for k, v in calls.items()]
        self.kinds = dict(kinds)
        self._entries: dict[str, Optional[Mapping[str, object]]] = {}  # by qualified name, once

    def call(self, qual: str) -> Optional[Mapping[str, object]]:
        if qual not in self._entries:
            self._entries[qual] = next((entry for pattern, entry in self.calls if pattern.fullmatch(qual)),
                                       None)
        return self._entries[qual]

    def kind(self, name: str) -> Mapping[str, object]:
        found = self.kinds.get(name)
        return found if isinstance(found, Mapping) else {}

    def keeps(self, kind: str, field: str) -> bool:
        keeps = self.kind(kind).get("keeps")
        return isinstance(keeps, (list, tuple)) and field in keeps


def _pattern(key: str) -> re.Pattern[str]:
    """``*`` stands for any run of characters but a dot (within one name of the qualified
    name), ``[A-Z]`` for one of those characters, as in a glob."""
    out = []
    for part in re.split(r"(\*|\[[^\]]*\])", key):
        out.append("[^.]*" if part == "*" else part if part.startswith("[") and part.endswith("]")
                   else re.escape(part))
    return re.compile("".join(out))


_TABLES: dict[tuple[str, str], Table] = {}


def table(settings: Mapping[str, object]) -> Table:
    """The table for these settings (``library-objects``, ``library-kinds``: JSON text of
    the project's tables, core/config.py)."""
    key = (str(settings.get("library-objects") or "{}"), str(settings.get("library-kinds") or "{}"))
    found = _TABLES.get(key)
    if found is None:
        calls, kinds = json.loads(key[0]), json.loads(key[1])
        defaults = {k: v for k, v in api.LIBRARY_OBJECTS.items() if k not in calls}
        found = _TABLES[key] = Table({**calls, **defaults}, {**api.LIBRARY_KINDS, **kinds})
    return found


def _given(call: Call, spec: object) -> tuple[bool, Value]:
    """(whether the call gives the argument ``spec`` names, its value)."""
    alternatives = spec if isinstance(spec, list) else [spec]
    for one in alternatives:
        if isinstance(one, int) and not isinstance(one, bool) and call.given(one):
            return True, call.arg(one)
        if isinstance(one, str) and "." in one:
            keyword, field = one.split(".", 1)
            if call.given(-1, keyword):
                holder = call.arg(-1, keyword)
                value = holder.field(field) if isinstance(holder, HolderVal) else None
                return True, value if value is not None else unknown(UNKNOWN_OBJECT, one)
        elif isinstance(one, str) and call.given(-1, one):
            return True, call.arg(-1, one)
    return False, unknown(UNKNOWN_OBJECT)


def _arg_node(call: Call, spec: object) -> Optional[ast.expr]:
    for one in spec if isinstance(spec, list) else [spec]:
        if isinstance(one, int) and not isinstance(one, bool) and call.given(one):
            return call.arg_node(one)
        if isinstance(one, str) and "." not in one and call.given(-1, one):
            return call.arg_node(-1, one)
    return None


def called(an: "Analyzer", qual: str, call: Call, node: ast.Call, scope: Scope,
           hand: Hand) -> Optional[Value]:
    """A call of a qualified name the table lists (no JAX model has it): what it gives,
    None where the table does not say (the caller's unknown then)."""
    entry = table(an.ctx.settings).call(qual)
    if entry is None:
        return None
    reason, culprit = outside_reason(qual), named(qual, an.ctx.project)
    kind = entry.get("makes")
    if isinstance(kind, str):
        given = entry.get("given")
        fields: dict[str, Value] = {}
        for field, spec in (given.items() if isinstance(given, Mapping) else ()):
            present, value = _given(call, spec)
            if present:
                fields[field] = value
        hand(_rest(call.handed(), fields.values()))
        return HolderVal(reason, culprit, kind, fields)
    field = entry.get("reads")
    if isinstance(field, str):
        # (a read changes nothing it is handed: no hand-on, whatever it gives)
        found = _read(an, entry, field, call)
        if found is not None:
            return found
        _, obj = _given(call, entry.get("of"))
        if isinstance(obj, HolderVal) and obj.changed and not obj.shared:
            return unknown(LIBRARY_CHANGED, an.ctx.code(node, 40))
        return unknown(reason, culprit)
    field = entry.get("stores")
    if isinstance(field, str):
        present, value = _given(call, entry.get("value"))
        target = _arg_node(call, entry.get("into"))
        _, obj = _given(call, entry.get("into"))
        hand(_rest(call.handed(), (value, obj)))
        if not (present and isinstance(obj, HolderVal) and table(an.ctx.settings).keeps(obj.kind, field)
                and rebind(an, target, obj, {field: value}, scope)):
            changed(obj)
        return ConstVal(None)
    return None


def _read(an: "Analyzer", entry: Mapping[str, object], field: str, call: Call) -> Optional[Value]:
    """``nnx.state(model)``: the field of the object handed, where the call passes it alone
    (a filter picks part of the state, which the analysis does not follow)."""
    present, obj = _given(call, entry.get("of"))
    if not present or len(call.values()) != 1 or call.has_star:
        return None
    value = obj.field(field) if isinstance(obj, HolderVal) and table(an.ctx.settings).keeps(obj.kind, field) \
        else None
    if value is None:
        return None
    item = entry.get("item")
    if isinstance(item, list) and len(item) == 2 and all(isinstance(i, int) for i in item) \
            and 0 <= item[0] < item[1]:
        return SeqVal(tuple(value if i == item[0] else unknown(UNKNOWN_OBJECT) for i in range(item[1])))
    return value


def method(an: "Analyzer", recv: HolderVal, name: str, call: Call, node: ast.Call,
           hand: Hand) -> Optional[Value]:
    """A method of such an object: what the table says it gives; None (the object changed)
    for a method it does not list."""
    tab = table(an.ctx.settings)
    effect = tab.kind(recv.kind).get("methods", {})
    effect = effect.get(name) if isinstance(effect, Mapping) else None
    if effect == "copy":
        # state.replace(params=p): a new object, this one unchanged.
        if call.positional or call.has_star:
            return None
        hand(_rest(call.handed(), call.values()))
        return recv.with_fields({k: v for k, (v, _) in call.keywords.items() if tab.keeps(recv.kind, k)},
                                same_object=False)
    if isinstance(effect, Mapping) and "placed_like" in effect:
        present, target = _given(call, effect["placed_like"])
        hand(_rest(call.handed(), (target,)))
        return placed(target, node, tab) if present else None
    changed(recv)
    return None


def placed(tree: Value, node: ast.AST, tab: Table, depth: int = 0) -> Value:
    """A tree placed as ``tree`` is (an orbax restore's result for its target): an array
    where ``tree`` holds an array, or an abstract one whose kind names the field that
    places it ("placement": a ``jax.ShapeDtypeStruct``'s sharding), on that sharding;
    tuples, lists and dicts the same shape; anything else unknown."""
    if isinstance(tree, ArrayVal):
        return ArrayVal(tree.sharding, node, derived=tree.derived)
    if isinstance(tree, HolderVal):
        where = tab.kind(tree.kind).get("placement")
        sharding = tree.field(where) if isinstance(where, str) else None
        if isinstance(sharding, ShardingVal):
            return ArrayVal(sharding, node)
    if isinstance(tree, SeqVal) and not tree.changed and not tree.view and depth < _MAX_DEPTH:
        return SeqVal(tuple(placed(v, node, tab, depth + 1) for v in tree.items), tree.kind, tree.keys)
    return unknown(UNKNOWN_OBJECT, "a restored leaf")


def attribute(an: "Analyzer", base: HolderVal, attr: str, node: ast.Attribute) -> Optional[Value]:
    """``encoder.params``: the field where the object's kind keeps it and it is known;
    unknown for that reason after a change the analysis did not follow; None otherwise."""
    tab = table(an.ctx.settings)
    if not tab.keeps(base.kind, attr):
        if tab.kind(base.kind).get("shares") is True:
            # An nnx module's state lives in its attributes' variables: whoever holds one
            # may change it (model.linear.kernel.value = x).
            changed(base)
        return None
    if base.changed and not base.shared:
        return unknown(LIBRARY_CHANGED, dotted(node) or attr)
    return base.field(attr)


def store(an: "Analyzer", target: ast.Attribute, obj: HolderVal, value: Value, scope: Scope) -> None:
    """``encoder.params = tree``: followed where the kind takes it, through a name of the
    scope that runs; otherwise the object is changed."""
    tab = table(an.ctx.settings)
    if tab.kind(obj.kind).get("assign") is True and tab.keeps(obj.kind, target.attr) \
            and rebind(an, target.value, obj, {target.attr: value}, scope):
        return
    changed(obj)


def rebind(an: "Analyzer", target: Optional[ast.AST], old: HolderVal, fields: Mapping[str, Value],
           scope: Scope) -> bool:
    """The name ``target`` of the running scope, which holds ``old``, holds the object
    with ``fields`` set from now on, and ``old`` is changed for every other holder;
    functions that run later read the name as bound twice. False where the code does not
    run once in order, the name is not the scope's own (flow.store_item's conditions), or
    ``old`` is no longer what the object holds (then the store changes every value that
    stands for the object: the caller's ``changed``)."""
    if type(target) is not ast.Name or an.inexact or scope.vars.get(target.id) is not old \
            or target.id in scope.volatile or old.changed or old.shared:
        return False
    new = old.with_fields(fields, same_object=True)
    old.changed = True
    scope.vars[target.id] = new
    scope.bindings[target.id] = max(2, scope.bindings.get(target.id, 0))
    return True


def changed(v: Value) -> None:
    """``v`` may have been changed where the analysis does not follow it: so has the
    object it stands for, and every value that stands for it."""
    if isinstance(v, HolderVal) and not v.shared:
        for member in v.family:
            member.changed = True


def _rest(values: Iterable[Value], kept: Iterable[Value]) -> list[Value]:
    """What a call hands over but the values the table says it only reads or keeps."""
    spared = {id(v) for v in kept}
    return [v for v in values if id(v) not in spared]
