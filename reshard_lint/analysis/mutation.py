"""Containers the program changes in place.

A list or dict literal is one ``SeqVal`` however many names, attributes or other
containers hold it, as the object is in Python. A statement that changes it (``d[k] =
v``, ``del d[k]``, ``d.update(...)``, ``arrs.append(x)``, ``arrs += [...]``) changes what
every holder sees; the analysis does not follow the change (a branch may make it or not,
a loop many times), so every element of the container becomes unknown for all of them.
An element read after the change is never the one from before it.

One change it follows: ``d[k] = v`` with a constant key (an int index on a list) through
a name of the scope that runs, where the code runs once in order (flow.store_item). That
name holds a new container with the item (``stored``) from then on; the old one, which
every other holder keeps, is changed as above.
"""

from __future__ import annotations

from typing import Callable, Iterable, Iterator, Optional

from .library import HolderVal, changed as holder_changed
from .reasons import CONTAINER
from .valueops import NO_KEY, const_int
from .values import ClassVal, ConstVal, InstanceVal, SeqVal, Unknown, Value
from ..core.vocabulary import CHANGING_BUILTINS, UNCHANGING_CALL_PREFIXES


_MOST_ESCAPED = 256


def changed(v: Value) -> None:
    """``v`` was changed in place: its elements are unknown from now on, for every holder,
    for the containers a join linked it with (values.join: at run time it may be any of
    them), and for the newer values a store through one of its names made of it
    (``d2 = d; d["w"] = a; d2["w"] = b``: d's ``w`` is b)."""
    todo = [v]
    seen: set[int] = set()
    while todo:
        c = todo.pop()
        if id(c) in seen or not isinstance(c, SeqVal):
            continue
        seen.add(id(c))
        if c.kind in ("list", "dict") and not c.shared:
            # One unknown each: two elements are not known to be one object (values.Unknown).
            c.items = tuple(Unknown(CONTAINER) for _ in c.items)
            c.changed = True
        todo.extend(c.joined or ())
        todo.extend(c.later or ())
        c.later = None


def escape(value: Value, escaped: list[SeqVal]) -> None:
    """``value`` was stored as an attribute (``box.table = d``): a later change through an
    attribute the analysis cannot read back (``box.table["w"] = x``) may change its lists
    and dicts, which other names still hold. Kept in ``escaped`` (bounded: past it, they
    are changed now)."""
    for v in _reached((value,), lambda v: v.items if isinstance(v, SeqVal) else ()):
        if isinstance(v, SeqVal) and v.kind in ("list", "dict") and not v.shared:
            if len(escaped) >= _MOST_ESCAPED:
                changed(v)
            else:
                escaped.append(v)


def changed_somewhere(escaped: list[SeqVal]) -> None:
    """A list or dict the analysis cannot tell was changed in place (``obj.attr[k] = v`` of
    an attribute it does not follow): each one stored as an attribute may be it."""
    for v in escaped:
        changed(v)
    escaped.clear()


def follows(base: SeqVal, new: SeqVal) -> None:
    """``new`` is ``base`` after a store through one of its names (flow.store_item): a later
    change through another holder of ``base`` changes ``new`` too."""
    if base.later is None:
        base.later = []
    base.later.append(new)


def stored(base: Value, key: Value, value: Value) -> Optional[SeqVal]:
    """The container ``base`` after ``base[key] = value``, where the analysis knows it: a
    dict whose keys are all constants, with a constant key (a key it has takes the new
    value where it stands, another goes last, as Python's dicts keep them), or a list
    with an int index within it. None otherwise."""
    if not isinstance(base, SeqVal) or base.changed or base.shared:
        return None
    if base.kind == "dict" and isinstance(key, ConstVal) and NO_KEY not in base.keys \
            and len(base.keys) == len(base.items):
        k = key.value
        if not hashable(k):
            return None
        if any(type(old) is not type(k) and old == k for old in base.keys):
            return None  # 1 and True, 1.0 and 1: one key whose own type is the first one's
        if k in base.keys:
            items = tuple(value if old == k else v for old, v in zip(base.keys, base.items))
            return SeqVal(items, "dict", base.keys)
        return SeqVal((*base.items, value), "dict", (*base.keys, k))
    i = const_int(key)
    if base.kind == "list" and i is not None and -len(base.items) <= i < len(base.items):
        listed = list(base.items)
        listed[i] = value
        return SeqVal(tuple(listed), "list")
    return None


def handed_on(values: Iterable[Value], on_object: Callable[[Value], None]) -> None:
    """``values`` were handed to code the analysis does not run (a package's function, a
    method of an object it does not know): that code may change them in place. Lists and
    dicts among them, and in the tuples, lists and dicts among them, are changed; an
    instance or class among them has any of its attributes changed (``on_object``:
    Classes.assign_some_attribute), another package's object its fields (library.py)."""
    for v in _reached(values, lambda v: v.items if isinstance(v, SeqVal) else ()):
        if isinstance(v, SeqVal):
            if v.kind in ("list", "dict"):
                changed(v)
        elif isinstance(v, (InstanceVal, ClassVal)):
            on_object(v)
        elif isinstance(v, HolderVal):
            holder_changed(v)  # another package's object (library.py)


def unchanging(qual: str) -> bool:
    """A function of a module the models do not cover that changes none of its arguments."""
    return qual.startswith(UNCHANGING_CALL_PREFIXES) and qual not in CHANGING_BUILTINS


def hashable(k: object) -> bool:
    try:
        hash(k)
    except TypeError:
        return False
    return True


def no_change(method: str, args: list[Value]) -> bool:
    """``d.update()`` or ``d.update(e)`` of a dict ``e`` known to be empty (the
    ``**kwargs`` of calls that pass no keyword): a change that changes nothing."""
    if method != "update" or len(args) > 1:
        return False
    return all(isinstance(a, SeqVal) and a.kind == "dict" and not a.items and not a.changed for a in args)


def share(values: Iterable[Value]) -> None:
    """Mark the containers a module summary's scope holds (in its names, in other
    containers, in its classes' attributes) as shared by its importers."""
    def inside(v: Value) -> Iterable[Value]:
        return v.items if isinstance(v, SeqVal) else v.attrs.values() if isinstance(v, ClassVal) else ()

    for v in _reached(values, inside):
        if isinstance(v, (SeqVal, HolderVal)):
            v.shared = True


def own_copy(v: Value) -> Value:
    """An importer's own copy of a container a summary holds (its elements shared), which
    its analysis may change in place without changing another importer's."""
    if isinstance(v, SeqVal) and v.shared:
        return SeqVal(tuple(own_copy(i) for i in v.items), v.kind, v.keys)
    return v


def _reached(values: Iterable[Value], inside: Callable[[Value], Iterable[Value]]) -> Iterator[Value]:
    """Each value of ``values`` and what ``inside`` finds in them, once; what is inside a
    value is taken before the caller sees it (and may change it)."""
    todo = list(values)
    seen: set[int] = set()
    while todo:
        v = todo.pop()
        if id(v) in seen:
            continue
        seen.add(id(v))
        todo.extend(inside(v))
        yield v
