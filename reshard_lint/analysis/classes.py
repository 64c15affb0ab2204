"""Classes: class bodies, the one abstract instance, ``__init__`` and dataclass fields.

Attributes live on the class (one abstract instance): ``self.attr`` is known in methods
when one statement assigns it, and ``__init__`` runs with what the constructor calls
pass (one that takes only ``self`` runs at the first construction, where Python runs
it). The methods' own runs see that instance. A construction gets an instance of its own
besides, its ``__init__`` run there with that call's arguments: for a class of this file
it holds the attributes no other code can change (instances.py), the others read from
the abstract instance; a class of another module's instance holds all of them. A dataclass (``@dataclasses.dataclass``, ``@flax.struct.dataclass``, subclasses
of ``flax.struct.PyTreeNode`` or ``flax.linen.Module``) has no ``__init__`` to run:
its fields take what every constructor call passes, or their defaults, with the same
rules as parameters (callsites.py).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Callable, Optional, Sequence

from ..core import vocabulary as api
from .arguments import Call
from . import library
from .callsites import UNSEEN_CALLS, bind_arguments
from .functions import UNMATCHED
from .instances import outside_assignments, own_attributes
from .reasons import ATTRIBUTE
from .interpreter_base import InterpreterBase
from .scope import COMPOUND, FUNCTIONS, Scope, count_bindings
from .values import (
    UNKNOWN, ArrayVal, ClassVal, ConstVal, FuncVal, InstanceVal, MeshVal, QualVal, ShardingVal, Value, func_name,
    unknown,
)

_DATACLASS_DECORATORS = api.DATACLASS_DECORATORS
_DATACLASS_BASES = api.DATACLASS_BASES
# Options of a dataclass decorator that leave its constructor taking the fields in order.
_PLAIN_OPTIONS = frozenset({"frozen", "eq", "order", "repr", "unsafe_hash", "slots", "match_args", "weakref_slot"})


@dataclass
class Fields:
    names: list[str]  # in declaration order: the constructor's positional order
    defaults: dict[str, Value]
    # Fields assigned after construction (in a method such as __post_init__, or from
    # outside): what the constructor calls pass is not what every reader sees.
    reassigned: set[str] = field(default_factory=set)


class Classes(InterpreterBase):
    """The interpreter's classes."""

    def exec_class(self, stmt: ast.ClassDef, scope: Scope) -> None:
        decorators = [self.eval(dec, scope) for dec in stmt.decorator_list]
        # ``@dataclasses.dataclass(frozen=True)``: a dataclass too; one whose constructor
        # is not the fields' (``init=False``, ``kw_only=True``) has fields it cannot bind.
        unbound_fields = False
        for i, dec in enumerate(stmt.decorator_list):
            if type(dec) is ast.Call and not isinstance(decorators[i], QualVal):
                called = self.eval(dec.func, scope)
                if isinstance(called, QualVal) and called.qual in _DATACLASS_DECORATORS:
                    decorators[i] = called
                    unbound_fields = unbound_fields or bool(dec.args) or any(
                        k.arg not in _PLAIN_OPTIONS for k in dec.keywords)
        bases = [self.eval(base, scope) for base in stmt.bases]
        cls = ClassVal(stmt, home=self.home_now)
        self.made.append(cls)
        body = stmt.body
        cscope = Scope(scope, "class", count_bindings(body))
        instance = cls.instance = InstanceVal(cls)
        # Methods see `self.attr` only when the attribute is assigned in one place.
        attr_sites = self._attribute_sites(stmt)
        first_method = len(self.pending)
        for s in body:
            if isinstance(s, FUNCTIONS):
                self.exec_def(s, cscope, instance)
            else:
                self.exec_stmt(s, cscope)
        for name, val in cscope.vars.items():
            if cscope.bindings.get(name) == 1 and attr_sites.get(name, 0) == 0:
                cls.attrs[name] = val
        if not self.outside:  # (once per file)
            self.outside.append(outside_assignments(self.ctx.module.body))
        cls.own = own_attributes(stmt, attr_sites, cscope.bindings, self.outside[0])
        cls.attrs["__sites__"] = ConstVal(attr_sites)
        if _is_dataclass(decorators, bases) and "__init__" not in cscope.vars:
            cls.fields = _fields(body, cscope, attr_sites)
            if unbound_fields:
                cls.fields.reassigned.update(cls.fields.names)
            for name in cls.fields.names:
                cls.attrs.pop(name, None)  # read from the constructor calls, not the default
        scope.vars[stmt.name] = cls
        for fn, _, _ in self.pending[first_method:]:
            if isinstance(fn.node, FUNCTIONS) and fn.node.name == "__init__":  # (defs only wait here)
                self.inits[id(cls)] = fn

    def assign_attribute(self, obj: Value, attr: str, value: Value, via_self: bool) -> None:
        """``obj.attr = value`` (or ``setattr(obj, 'attr', value)``); ``via_self``: written
        ``self.attr`` (a method of the class assigning its own attribute)."""
        library.changed(obj)  # another package's object: not followed here (library.store)
        # Only a function's own run assigns attributes: a quiet evaluation for one
        # caller's return value would leave that caller's values on the class. An
        # instance of another module's class has its own (_construct_imported).
        if isinstance(obj, InstanceVal) and obj.attrs is not None:
            if any(obj is b for b in self.building):
                # A construction's __init__: the instance's own attributes are this run's;
                # the others are the abstract instance's, which the methods' runs assign.
                if via_self and attr in obj.cls.own:
                    obj.attrs[attr] = value
                return
            if attr in obj.attrs:  # (instances.py: no statement of the file does it)
                obj.attrs[attr] = unknown(ATTRIBUTE, f"{obj.cls.node.name}.{attr}")
        if isinstance(obj, InstanceVal) and (not self.quiet or any(obj is b for b in self.building)):
            fields = obj.cls.fields
            if isinstance(fields, Fields) and attr in fields.names:
                fields.reassigned.add(attr)  # cfg.mesh = half on a dataclass
                return
            sites = obj.cls.attrs.get("__sites__")
            count = sites.value.get(attr, 0) \
                if isinstance(sites, ConstVal) and isinstance(sites.value, dict) else 0
            if count and obj.cls.home is None and not via_self:
                # t.mesh = half outside the class: one more place that assigns it. Its
                # methods run after the module body, not where they are called, so no one
                # value is what each of them sees.
                sites.value[attr] = count + 1  # type: ignore[union-attr]  # (count: sites holds a dict)
                obj.cls.attrs[attr] = unknown(ATTRIBUTE, f"{obj.cls.node.name}.{attr}")
            elif count == 1:
                if isinstance(value, (MeshVal, ShardingVal, ArrayVal)) and value.name is None:
                    value.name = f"self.{attr}"
                obj.cls.attrs[attr] = value
            elif not count and not via_self and attr in obj.cls.attrs:
                # A class variable shadowed on the instance, a field of another module's
                # dataclass instance: not what it was.
                obj.cls.attrs[attr] = unknown(ATTRIBUTE, f"{obj.cls.node.name}.{attr}")
        elif isinstance(obj, QualVal) and self.ctx.project is not None \
                and self.ctx.project.value(f"{obj.qual}.{attr}") is not None:
            # meshes.TRAIN = meshes.ROLLOUT: this file no longer reads the module's own. (Not
            # a JAX name: a saved original, _orig = jax.lax.with_sharding_constraint, is that
            # same name, and still JAX's.)
            self.ctx.project.forget(f"{obj.qual}.{attr}", unknown(ATTRIBUTE, f"{obj.qual}.{attr}"))
        elif isinstance(obj, ClassVal) and obj.home is None and attr in obj.attrs:
            # Cfg.mesh = other: the class body's value is not what every reader sees.
            # (Another module's class is every importer's: left as its summary has it.)
            obj.attrs[attr] = unknown(ATTRIBUTE, f"{obj.node.name}.{attr}")

    def assign_named_attribute(self, obj: Value, name: Value, value: Value) -> bool:
        """``setattr(obj, 'mesh', value)``, or pytest's ``monkeypatch.setattr``: an
        assignment when the name is a string the program spells; False otherwise."""
        if isinstance(name, ConstVal) and isinstance(name.value, str):
            self.assign_attribute(obj, name.value, value, False)
            return True
        return False

    def assign_some_attribute(self, obj: Value) -> None:
        """An attribute of ``obj`` the analysis cannot name is assigned (``setattr(self,
        name, value)`` in a loop over options, ``self.__dict__.update(options)``): any of
        its attributes may be the one, so none is known from here on."""
        library.changed(obj)
        if isinstance(obj, InstanceVal) and obj.cls.home is None:
            sites = obj.cls.attrs.get("__sites__")
            if isinstance(sites, ConstVal) and isinstance(sites.value, dict):
                for attr in list(sites.value):
                    self.assign_attribute(obj, attr, UNKNOWN, False)
        elif isinstance(obj, ClassVal) and obj.home is None:
            for attr in list(obj.attrs):
                if not attr.startswith("__"):
                    obj.attrs[attr] = unknown(ATTRIBUTE, f"{obj.node.name}.{attr}")

    def _attribute_sites(self, cls: ast.ClassDef) -> dict[str, int]:
        """How many statements assign each ``self.attr`` in the class's methods.

        A statement walk, not a visitor over every node: such a walk costs as much
        as the parse.
        """
        sites: dict[str, int] = {}

        def count(t: ast.expr, n: int = 1) -> None:
            if type(t) is ast.Tuple or type(t) is ast.List:
                for el in t.elts:
                    count(el.value if type(el) is ast.Starred else el, n)
            elif type(t) is ast.Attribute and type(t.value) is ast.Name and t.value.id == "self":
                sites[t.attr] = sites.get(t.attr, 0) + n

        def walk(stmts: Sequence[ast.stmt]) -> None:
            for stmt in stmts:
                t = type(stmt)
                if not isinstance(stmt, COMPOUND):
                    if isinstance(stmt, ast.Assign):
                        for target in stmt.targets:
                            count(target)
                    elif isinstance(stmt, ast.AugAssign):
                        count(stmt.target, 2)
                    elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
                        count(stmt.target)
                    continue
                if t is ast.ClassDef:
                    continue  # a nested class's `self` is another object
                for attr in ("body", "orelse", "finalbody"):
                    walk(getattr(stmt, attr, ()))
                for h in getattr(stmt, "handlers", ()):
                    walk(h.body)
                for c in getattr(stmt, "cases", ()):
                    walk(c.body)

        walk(cls.body)
        return sites

    def construct(self, cls: ClassVal, call: Call, node: ast.AST) -> Value:
        """``Cls(...)``: its ``__init__`` sees the arguments; the one abstract instance."""
        if cls.home is not None:
            return self._construct_imported(cls, call, node)
        if cls.instance is None:
            cls.instance = InstanceVal(cls)
        init = cls.attrs.get("__init__")
        if isinstance(init, FuncVal):
            self.observe_call(init, call, node, bound=cls.instance)
            self._init_now(init)
            if cls.own:
                # An instance of its own, its __init__ run here with this call's arguments.
                instance = InstanceVal(cls, {})
                self.made.append(instance)
                params = bind_arguments(init.node, call, init.defaults, instance)
                if params is not None:
                    self._build(instance, lambda: self.run_quietly(init, params))
                return instance
        elif cls.fields is not None and not self.quiet:
            self.callsites.observe_fields(cls, node, _bind_fields(cls.fields, call))
        return cls.instance

    def _init_now(self, init: FuncVal) -> None:
        """An ``__init__`` that takes no argument but ``self`` runs at the class's first
        construction in the analysis proper, where Python runs it, instead of after the
        module body: what its callers pass cannot change it, and the code after
        ``trainer = Trainer()`` reads the attributes it assigns (``trainer.params``), which
        were unknown there ("read before the method that assigns it ran")."""
        fn = init.node
        if self.quiet or self.settling or self.relay is not None or id(init) in self.ran \
                or not isinstance(fn, FUNCTIONS) or self._param_names(fn.args) != ["self"]:
            return
        waiting = next((k for k, p in enumerate(self.pending) if p[0] is init), None)
        if waiting is None:
            return
        func, parent, self_val = self.pending.pop(waiting)
        self.ran.add(id(init))  # before its run: a construction inside it does not start it again
        # It runs under the context mesh of the construction, as Python runs it, and
        # leaves the caller's as it was.
        saved = (self.context_mesh, self.mesh_context, self.context_site)
        try:
            self.run_function(func, parent, self_val)
        finally:
            self.context_mesh, self.mesh_context, self.context_site = saved

    def _construct_imported(self, cls: ClassVal, call: Call, node: ast.AST) -> Value:
        """A class of another module (project/defs.py): an instance of its own per
        construction, whose attributes are what this call's ``__init__`` (or, for a
        dataclass, its fields) gives them, run quietly: what happens inside is the
        defining module's to report. The class's call sites are in other files too, so
        the single abstract instance of a class of this file would be a guess here."""
        own = ClassVal(cls.node, dict(cls.attrs), home=cls.home)
        instance = own.instance = InstanceVal(own)
        fields = cls.fields
        if isinstance(fields, Fields):
            bound = _bind_fields(fields, call)
            for name in fields.names:
                own.attrs[name] = unknown(ATTRIBUTE, f"{cls.node.name}.{name}") if name in fields.reassigned \
                    else bound[name] if bound is not None else unknown(UNMATCHED, cls.node.name)
            return instance
        init = cls.attrs.get("__init__")
        if isinstance(init, FuncVal):
            self._build(instance, lambda: self.call_function(init, call, node, bound=instance))
        if not self.inline_stack:
            # Messages name this construction beside the other module's line
            # (render.describe_mesh): two instances' meshes come from one line there.
            for value in own.attrs.values():
                mesh = value.mesh if isinstance(value, ShardingVal) else value
                if isinstance(mesh, MeshVal):
                    self.ctx.made_by.setdefault(id(mesh), node)
        return instance

    def _build(self, instance: InstanceVal, run_init: Callable[[], Value]) -> None:
        """Run a construction's ``__init__`` (``run_init``): what it assigns to ``self``,
        and what the methods it calls do, are ``instance``'s (assign_attribute)."""
        self.building.append(instance)
        try:
            run_init()
        finally:
            self.building.pop()

    def read_property(self, getter: FuncVal, instance: InstanceVal, node: ast.AST) -> Value:
        """``obj.sharding`` where the class defines ``sharding`` under ``@property``: the
        getter's result for this instance, evaluated quietly as a helper's return value
        (memoized per instance). No call site is recorded: the getter's own run binds
        ``self`` as every method's does."""
        params = bind_arguments(getter.node, Call.of_values(node, []), getter.defaults, instance)
        if params is None:
            return unknown(UNMATCHED, func_name(getter))
        return self.inline(getter, params)

    def field_value(self, cls: ClassVal, name: str) -> Value:
        """A dataclass field: what every constructor call passes, once all were seen."""
        assert cls.fields is not None
        if name in cls.fields.reassigned:
            return unknown(ATTRIBUTE, f"{cls.node.name}.{name}")
        return self.callsites.fields(cls, cls.fields.names).get(
            name, unknown(UNSEEN_CALLS, f"field '{name}' of {cls.node.name}"))


def _is_dataclass(decorators: Sequence[Value], bases: Sequence[Value]) -> bool:
    for d in decorators:
        if isinstance(d, QualVal) and d.qual in _DATACLASS_DECORATORS:
            return True
    return any(isinstance(b, QualVal) and b.qual in _DATACLASS_BASES for b in bases)


def _fields(body: Sequence[ast.stmt], cscope: Scope, attr_sites: dict[str, int]) -> Fields:
    names: list[str] = []
    defaults: dict[str, Value] = {}
    for stmt in body:
        if type(stmt) is ast.AnnAssign and type(stmt.target) is ast.Name:
            ann = stmt.annotation
            text = ann.id if type(ann) is ast.Name else ann.attr if type(ann) is ast.Attribute else ""
            if text == "ClassVar" or (type(ann) is ast.Subscript and "ClassVar" in ast.dump(ann.value)):
                continue
            name = stmt.target.id
            names.append(name)
            if stmt.value is not None:
                # Evaluated once, where the class is defined, as Python does; a
                # `field(default_factory=...)` is a call the models leave unknown.
                defaults[name] = cscope.vars.get(name, UNKNOWN)
    # Assigned in a method too (self.mesh = ... in __post_init__): not the constructor's.
    return Fields(names, defaults, {n for n in names if attr_sites.get(n, 0)})


def _bind_fields(fields: Fields, call: Call) -> Optional[dict[str, Value]]:
    if call.has_star or len(call.positional) > len(fields.names):
        return None
    out = {n: v for n, (v, _) in zip(fields.names, call.positional)}
    for k, (v, _) in call.keywords.items():
        if k not in fields.names or k in out:
            return None
        out[k] = v
    for n in fields.names:
        if n not in out:
            out[n] = fields.defaults.get(n, UNKNOWN)
    return out
