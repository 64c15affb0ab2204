"""Which attributes an instance of a class of this file holds as its own.

``t = Trainer(train)`` runs the class's ``__init__`` with that call's arguments (quietly:
the method's own run, with what every construction passes joined, reports what happens
inside it), and the instance it gives holds what that run assigned to the attributes
that are the instance's own (classes.py): method calls on it (``t.init_params()``), its
properties and ``t.mesh`` read what this construction set, not the class's one abstract
instance. An attribute is the instance's own only where nothing but that ``__init__`` can
change it, so that the value assigned at the construction is the value on every later
read of the instance:

- the class has no base (but ``object``), no decorator and no metaclass (a base's methods
  may assign it, a decorator may replace the class), and does not define
  ``__getattr__``, ``__getattribute__``, ``__setattr__``, ``__delattr__``, ``__slots__``
  or ``__new__``;
- ``__init__`` is defined once, a plain ``def`` whose first parameter is ``self``, and
  assigns the attribute in one statement of its own body (not in a branch, a loop, a
  ``try`` or a nested function: ``with`` blocks count), the only statement of the
  class's methods that assigns it (``_attribute_sites``), and the class body binds no
  name of it;
- no statement of the file assigns or deletes an attribute of that name on anything but
  ``self`` in a class's method (``t.mesh = other``, ``obj.mesh = m`` in a helper), and
  the file's code (Python's tree, not its comments or strings) names none of ``setattr``,
  ``delattr``, ``vars``, ``exec``, ``eval``, reads no ``__dict__``, ``__class__``,
  ``__setattr__`` or ``__delattr__``, and reaches an ``__init__`` only through ``super()``.

Where the ``__init__`` run stopped before the assignment (``return``, ``raise``), Python
raises at the read; where the analysis did not run it (recursion, depth), the read falls
back to the class's abstract instance. Another module's code is not looked at: one that
assigns attributes of instances passed to it is not followed.
"""

from __future__ import annotations

import ast
from typing import Iterable, Optional, Sequence

from .scope import COMPOUND

_OPAQUE_MEMBERS = frozenset({"__getattr__", "__getattribute__", "__setattr__", "__delattr__", "__slots__",
                             "__new__"})
# Code that may change an attribute the statements do not spell: the file is not read so.
_OPAQUE_NAMES = frozenset({"setattr", "delattr", "vars", "exec", "eval"})
_OPAQUE_ATTRS = frozenset({"__dict__", "__class__", "__setattr__", "__delattr__"})


def _opaque(body: Sequence[ast.stmt]) -> bool:
    """Does the file name ``setattr``, ``delattr``, ``vars``, ``exec`` or ``eval``, read an
    object's ``__dict__``, ``__class__``, ``__setattr__`` or ``__delattr__``, or call an
    ``__init__`` but through ``super()``?"""
    for stmt in body:
        for node in ast.walk(stmt):
            t = type(node)
            if t is ast.Name and node.id in _OPAQUE_NAMES:  # type: ignore[attr-defined]
                return True
            if t is ast.Attribute:
                attr = node.attr  # type: ignore[attr-defined]
                if attr in _OPAQUE_ATTRS:
                    return True
                if attr == "__init__":
                    base = node.value  # type: ignore[attr-defined]
                    if not (type(base) is ast.Call and type(base.func) is ast.Name and base.func.id == "super"):
                        return True
    return False


def outside_assignments(body: Sequence[ast.stmt]) -> Optional[frozenset[str]]:
    """The names of the attributes the file assigns (or deletes) on anything but ``self``
    in a class's method; None where its code may change attributes the statements do not
    spell. A statement walk."""
    if _opaque(body):
        return None
    out: set[str] = set()

    def targets(t: ast.expr, in_class: bool) -> None:
        if type(t) is ast.Tuple or type(t) is ast.List:
            for el in t.elts:
                targets(el, in_class)
        elif type(t) is ast.Starred:
            targets(t.value, in_class)
        elif type(t) is ast.Attribute:
            if not (in_class and type(t.value) is ast.Name and t.value.id == "self"):
                out.add(t.attr)

    def walk(stmts: Iterable[ast.stmt], in_class: bool) -> None:
        for stmt in stmts:
            if isinstance(stmt, (ast.Assign, ast.Delete)):
                for target in stmt.targets:
                    targets(target, in_class)
            elif isinstance(stmt, (ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor)):
                targets(stmt.target, in_class)
            elif isinstance(stmt, (ast.With, ast.AsyncWith)):
                for item in stmt.items:
                    if item.optional_vars is not None:
                        targets(item.optional_vars, in_class)
            if not isinstance(stmt, COMPOUND):
                continue
            inner = in_class or type(stmt) is ast.ClassDef
            for attr in ("body", "orelse", "finalbody"):
                walk(getattr(stmt, attr, ()), inner)
            for h in getattr(stmt, "handlers", ()):
                walk(h.body, inner)
            for c in getattr(stmt, "cases", ()):
                walk(c.body, inner)

    walk(body, False)
    return frozenset(out)


def own_attributes(cls: ast.ClassDef, sites: dict[str, int], class_names: Iterable[str],
                   outside: Optional[frozenset[str]]) -> frozenset[str]:
    """The attributes an instance of ``cls`` holds as its own (the module's docstring)."""
    if outside is None or cls.decorator_list or cls.keywords \
            or any(not (type(b) is ast.Name and b.id == "object") for b in cls.bases):
        return frozenset()
    names = set(class_names)
    if names & _OPAQUE_MEMBERS:
        return frozenset()
    inits = [s for s in cls.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))
             and s.name == "__init__"]
    if len(inits) != 1 or type(inits[0]) is not ast.FunctionDef or inits[0].decorator_list:
        return frozenset()
    init = inits[0]
    params = [*init.args.posonlyargs, *init.args.args]
    if not params or params[0].arg != "self":
        return frozenset()
    found: set[str] = set()

    def top(stmts: Sequence[ast.stmt]) -> None:
        for stmt in stmts:
            if type(stmt) is ast.Assign:
                for target in stmt.targets:
                    assigned(target)
            elif type(stmt) is ast.AnnAssign and stmt.value is not None:
                assigned(stmt.target)
            elif type(stmt) is ast.With:
                top(stmt.body)

    def assigned(t: ast.expr) -> None:
        if type(t) is ast.Tuple or type(t) is ast.List:
            for el in t.elts:
                assigned(el)
        elif type(t) is ast.Attribute and type(t.value) is ast.Name and t.value.id == "self":
            found.add(t.attr)

    top(init.body)
    return frozenset(a for a in found if sites.get(a, 0) == 1 and a not in names and a not in outside
                     and not a.startswith("__"))
