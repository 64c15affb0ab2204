"""The one traversal: an abstract interpreter over a libcst module.

It walks statements in program order, binding names to the values of values.py, and
reports semantic events (events.py) to a sink. Precision rules:

* where two paths disagree (branches, loops, handlers) a name becomes UNKNOWN;
* function parameters are UNKNOWN, except when a same-module helper is evaluated
  for its return value (quietly: no events from inside it);
* a module-level name is visible inside functions only when it is bound once.
"""

from __future__ import annotations

import math
from typing import Callable, Iterable, Iterator, Optional, Sequence, TypeGuard

import libcst as cst

from . import devices as dv
from .context import FileContext
from .events import Event, MeshBuilt, ShardingBuilt, Transfer, TransferKind
from .qualnames import BUILTINS, canonical
from .values import (
    UNKNOWN, ArrayVal, ClassVal, ConstVal, DevVal, FuncVal, InstanceVal, IntVal, JitVal,
    MeshContextVal, MeshVal, PartialVal, QualVal, RngVal, SeqVal, ShardingVal, Shuffle,
    SpecVal, Value, join, undecidable,
)

Sink = Callable[[Event], None]
_NO_KEY = object()  # a dict key that is not a constant
_MAX_INLINE_DEPTH = 3

# sorted() keys that order devices physically: their order is platform-dependent,
# so the linter does not know it, and does not call it a reordering.
_PHYSICAL_KEYS = ("coords", "core_on_chip", "slice_index", "process_index", "host_id", "task_id")


# ------------------------------------------------------------------------------------
# scopes
# ------------------------------------------------------------------------------------
class Scope:
    def __init__(self, parent: Optional["Scope"], kind: str, bindings: dict[str, int]) -> None:
        self.parent = parent
        self.kind = kind  # 'module' | 'function' | 'class'
        self.vars: dict[str, Value] = {}
        self.bindings = bindings  # name -> number of binding sites in this scope

    def lookup(self, name: str) -> Value:
        if name in self.vars:
            return self.vars[name]
        if self.kind != "module" and name in self.bindings:
            return UNKNOWN  # local but not (yet, or not surely) bound
        scope = self.parent
        while scope is not None:
            if scope.kind != "class" and name in scope.bindings:
                if scope.bindings[name] == 1 and name in scope.vars:
                    return scope.vars[name]
                return UNKNOWN
            scope = scope.parent
        if name in BUILTINS:
            return QualVal("builtins." + name)
        return UNKNOWN


def _names_in_target(node: cst.BaseExpression) -> Iterator[str]:
    if isinstance(node, cst.Name):
        yield node.value
    elif isinstance(node, (cst.Tuple, cst.List)):
        for el in node.elements:
            yield from _names_in_target(el.value)
    elif isinstance(node, cst.StarredElement):
        yield from _names_in_target(node.value)


def _block(body: cst.BaseSuite) -> Sequence[cst.CSTNode]:
    return body.body  # IndentedBlock and SimpleStatementSuite both have .body


def count_bindings(stmts: Sequence[cst.CSTNode], out: dict[str, int] | None = None) -> dict[str, int]:
    """Binding sites per name in a block, not looking into nested scopes."""
    out = {} if out is None else out

    def add(name: str, n: int = 1) -> None:
        out[name] = out.get(name, 0) + n

    for stmt in stmts:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Assign):
                    for t in small.targets:
                        for n in _names_in_target(t.target):
                            add(n)
                elif isinstance(small, (cst.AnnAssign, cst.AugAssign)):
                    if isinstance(small.target, cst.Name) and (
                        not isinstance(small, cst.AnnAssign) or small.value is not None
                    ):
                        add(small.target.value)
                elif isinstance(small, (cst.Import, cst.ImportFrom)):
                    names = small.names
                    if isinstance(names, cst.ImportStar):
                        continue
                    for alias in names:
                        if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                            add(alias.asname.name.value)
                        else:
                            top = alias.name
                            while isinstance(top, cst.Attribute):
                                top = top.value
                            if isinstance(top, cst.Name):
                                add(top.value)
                elif isinstance(small, (cst.Global, cst.Nonlocal)):
                    for n in small.names:
                        add(n.name.value, 2)  # never stable
                elif isinstance(small, cst.Del):
                    for n in _names_in_target(small.target):
                        add(n, 2)
        elif isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            add(stmt.name.value)
        elif isinstance(stmt, cst.If):
            count_bindings(_block(stmt.body), out)
            orelse = stmt.orelse
            if isinstance(orelse, cst.If):
                count_bindings([orelse], out)
            elif isinstance(orelse, cst.Else):
                count_bindings(_block(orelse.body), out)
        elif isinstance(stmt, (cst.For, cst.While)):
            if isinstance(stmt, cst.For):
                for n in _names_in_target(stmt.target):
                    add(n, 2)
            count_bindings(_block(stmt.body), out)
            if stmt.orelse is not None:
                count_bindings(_block(stmt.orelse.body), out)
        elif isinstance(stmt, (cst.Try, cst.TryStar)):
            count_bindings(_block(stmt.body), out)
            for h in stmt.handlers:
                if h.name is not None and isinstance(h.name.name, cst.Name):
                    add(h.name.name.value, 2)
                count_bindings(_block(h.body), out)
            if stmt.orelse is not None:
                count_bindings(_block(stmt.orelse.body), out)
            if stmt.finalbody is not None:
                count_bindings(_block(stmt.finalbody.body), out)
        elif isinstance(stmt, cst.With):
            for item in stmt.items:
                if item.asname is not None:
                    for n in _names_in_target(item.asname.name):  # type: ignore[arg-type]
                        add(n)
            count_bindings(_block(stmt.body), out)
        elif isinstance(stmt, cst.Match):
            for case in stmt.cases:
                count_bindings(_block(case.body), out)
    return out


# ------------------------------------------------------------------------------------
# helpers on values
# ------------------------------------------------------------------------------------
def _const_int(v: Value) -> Optional[int]:
    if isinstance(v, IntVal) and v.literal is not None:
        return v.literal
    return None


def _int_fn(v: Value) -> Optional[Callable[[dv.Model], int]]:
    if isinstance(v, IntVal):
        return v.fn
    return None


def _shape_fns(v: Value) -> Optional[list[Callable[[dv.Model], int]]]:
    if isinstance(v, IntVal):
        return [v.fn]
    if isinstance(v, SeqVal):
        fns = [_int_fn(i) for i in v.items]
        if all(f is not None for f in fns):
            return fns  # type: ignore[return-value]
    return None


def _literal_sizes(v: Value) -> tuple[int, ...]:
    """The device count a fully literal shape spells out, e.g. (2, 4) -> (8,)."""
    items = [v] if isinstance(v, IntVal) else list(v.items) if isinstance(v, SeqVal) else []
    lits = [_const_int(i) for i in items]
    if items and all(x is not None for x in lits):
        return (math.prod(lits),)  # type: ignore[arg-type]
    return ()


def leaves(v: Value) -> list[Value]:
    if isinstance(v, SeqVal):
        out: list[Value] = []
        for item in v.items:
            out.extend(leaves(item))
        return out
    return [v]


def _ordered(v: Value) -> TypeGuard[DevVal]:
    """A device list or array with an order: not a single device, not a set of devices."""
    return isinstance(v, DevVal) and not v.single and not v.is_set


class Call:
    """A call's arguments, evaluated once."""

    def __init__(self, node: cst.Call, args: list[tuple[Optional[str], Value, cst.Arg]]) -> None:
        self.node = node
        self.positional = [(v, a) for k, v, a in args if k is None and a.star == ""]
        self.keywords = {k: (v, a) for k, v, a in args if k is not None}
        self.has_star = any(a.star for _, _, a in args)

    def arg(self, index: int, name: str | None = None) -> Value:
        if name is not None and name in self.keywords:
            return self.keywords[name][0]
        if index >= 0 and index < len(self.positional):
            return self.positional[index][0]
        return UNKNOWN

    def arg_node(self, index: int, name: str | None = None) -> Optional[cst.BaseExpression]:
        if name is not None and name in self.keywords:
            return self.keywords[name][1].value
        if index >= 0 and index < len(self.positional):
            return self.positional[index][1].value
        return None

    def given(self, index: int, name: str | None = None) -> bool:
        return self.arg_node(index, name) is not None


# ------------------------------------------------------------------------------------
# the interpreter
# ------------------------------------------------------------------------------------
class Analyzer:
    def __init__(self, ctx: FileContext, sink: Sink) -> None:
        self.ctx = ctx
        self.sink = sink
        self.quiet = 0  # > 0 while evaluating a helper for its return value
        self.inline_stack: list[cst.CSTNode] = []
        self.context_mesh: Value = UNKNOWN
        self.global_context: Value = UNKNOWN
        self.pending: list[tuple[cst.FunctionDef | cst.Lambda, Scope, Optional[InstanceVal]]] = []
        self.returns: list[list[Value]] = []
        self.rng_seeded: dict[str, Optional[bool]] = {"random": None, "numpy": None}
        self.token = 0
        self.current_name = ""  # canonical name of the function a handler is running for
        self.naming: tuple[cst.CSTNode, str] | None = None

    def name_for(self, node: cst.CSTNode) -> Optional[str]:
        if self.naming is not None and self.naming[0] is node:
            return self.naming[1]
        return None

    # -- driver ----------------------------------------------------------------------
    def run(self) -> None:
        module = self.ctx.module
        scope = Scope(None, "module", count_bindings(module.body))
        self.exec_block(module.body, scope)
        self.global_context = self.context_mesh
        # Functions run after the module body, with module names at their final values.
        done = 0
        while done < len(self.pending):
            fn, parent, self_val = self.pending[done]
            done += 1
            self.context_mesh = self.global_context
            if isinstance(fn, cst.FunctionDef):
                self.run_function(fn, parent, self_val)

    def emit(self, event: Event) -> None:
        if not self.quiet:
            self.sink(event)

    def new_token(self, node: cst.CSTNode) -> str:
        self.token += 1
        return f"{self.token}"

    # -- statements ------------------------------------------------------------------
    def exec_block(self, stmts: Sequence[cst.CSTNode], scope: Scope) -> None:
        for stmt in stmts:
            self.exec_stmt(stmt, scope)

    def exec_stmt(self, stmt: cst.CSTNode, scope: Scope) -> None:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                self.exec_small(small, scope)
        elif isinstance(stmt, cst.If):
            self.eval(stmt.test, scope)
            self.exec_branches(scope, [_block(stmt.body), self._else_block(stmt.orelse)])
        elif isinstance(stmt, (cst.For, cst.While)):
            self.exec_loop(stmt, scope)
        elif isinstance(stmt, (cst.Try, cst.TryStar)):
            self.exec_try(stmt, scope)
        elif isinstance(stmt, cst.With):
            self.exec_with(stmt, scope)
        elif isinstance(stmt, cst.FunctionDef):
            self.exec_def(stmt, scope)
        elif isinstance(stmt, cst.ClassDef):
            self.exec_class(stmt, scope)
        elif isinstance(stmt, cst.Match):
            self.eval(stmt.subject, scope)
            blocks = [_block(c.body) for c in stmt.cases] + [[]]
            self.exec_branches(scope, blocks)

    def _else_block(self, orelse: object) -> Sequence[cst.CSTNode]:
        if isinstance(orelse, cst.If):
            return [orelse]
        if isinstance(orelse, cst.Else):
            return _block(orelse.body)
        return []

    def exec_branches(self, scope: Scope, blocks: Sequence[Sequence[cst.CSTNode]]) -> None:
        before = dict(scope.vars)
        ctx_before = self.context_mesh
        results: list[dict[str, Value]] = []
        ctxs: list[Value] = []
        for block in blocks:
            scope.vars = dict(before)
            self.context_mesh = ctx_before
            self.exec_block(block, scope)
            results.append(scope.vars)
            ctxs.append(self.context_mesh)
        merged: dict[str, Value] = {}
        keys = set().union(*results) if results else set()
        for k in keys:
            vals = [r.get(k, UNKNOWN) for r in results]
            v = vals[0]
            for other in vals[1:]:
                v = join(v, other)
            merged[k] = v
        scope.vars = merged
        c = ctxs[0] if ctxs else ctx_before
        for other in ctxs[1:]:
            c = join(c, other)
        self.context_mesh = c

    def exec_loop(self, stmt: cst.For | cst.While, scope: Scope) -> None:
        assigned = count_bindings(_block(stmt.body))
        if stmt.orelse is not None:
            count_bindings(_block(stmt.orelse.body), assigned)
        for name in assigned:
            scope.vars[name] = UNKNOWN
        if isinstance(stmt, cst.For):
            it = self.eval(stmt.iter, scope)
            element: Value = UNKNOWN
            if _ordered(it):
                element = DevVal(fn=undecidable, desc=f"an element of {it.desc}", node=stmt.iter,
                                 single=True, any_device=True)
            elif isinstance(it, SeqVal) and it.items and all(i is it.items[0] for i in it.items):
                element = it.items[0]
            for n in _names_in_target(stmt.target):
                scope.vars[n] = UNKNOWN
            if isinstance(stmt.target, cst.Name):
                scope.vars[stmt.target.value] = element
        else:
            self.eval(stmt.test, scope)
        ctx_before = self.context_mesh
        self.exec_block(_block(stmt.body), scope)
        if stmt.orelse is not None:
            self.exec_block(_block(stmt.orelse.body), scope)
        for name in assigned:
            scope.vars[name] = UNKNOWN
        if isinstance(stmt, cst.For):
            for n in _names_in_target(stmt.target):
                scope.vars[n] = UNKNOWN
        self.context_mesh = join(ctx_before, self.context_mesh)

    def exec_try(self, stmt: cst.Try | cst.TryStar, scope: Scope) -> None:
        assigned = count_bindings(_block(stmt.body))
        before = dict(scope.vars)
        self.exec_block(_block(stmt.body), scope)
        if stmt.orelse is not None:
            self.exec_block(_block(stmt.orelse.body), scope)
        after_body = scope.vars
        results = [after_body]
        for handler in stmt.handlers:
            scope.vars = dict(before)
            for name in assigned:
                scope.vars[name] = UNKNOWN
            if handler.type is not None:
                self.eval(handler.type, scope)
            if handler.name is not None:
                for n in _names_in_target(handler.name.name):  # type: ignore[arg-type]
                    scope.vars[n] = UNKNOWN
            self.exec_block(_block(handler.body), scope)
            results.append(scope.vars)
        merged: dict[str, Value] = {}
        for k in set().union(*results):
            vals = [r.get(k, UNKNOWN) for r in results]
            v = vals[0]
            for other in vals[1:]:
                v = join(v, other)
            merged[k] = v
        scope.vars = merged
        if stmt.finalbody is not None:
            self.exec_block(_block(stmt.finalbody.body), scope)

    def exec_with(self, stmt: cst.With, scope: Scope) -> None:
        ctx_before = self.context_mesh
        # Code inside `with pytest.raises(...)` / `self.assertRaises(...)` is meant to fail.
        expects_error = any(_expects_error(item.item) for item in stmt.items)
        if expects_error:
            self.quiet += 1
        try:
            self._exec_with(stmt, scope)
        finally:
            if expects_error:
                self.quiet -= 1
            self.context_mesh = ctx_before

    def _exec_with(self, stmt: cst.With, scope: Scope) -> None:
        for item in stmt.items:
            val = self.eval(item.item, scope)
            if isinstance(val, MeshVal):
                self.context_mesh = val
            elif isinstance(val, MeshContextVal):
                self.context_mesh = val.mesh
            if item.asname is not None:
                bound = val.mesh if isinstance(val, MeshContextVal) else val
                self.bind(item.asname.name, bound, scope)  # type: ignore[arg-type]
        self.exec_block(_block(stmt.body), scope)

    def exec_def(self, stmt: cst.FunctionDef, scope: Scope, self_val: InstanceVal | None = None) -> None:
        func: Value = FuncVal(stmt, scope)
        for dec in reversed(stmt.decorators):
            d = self.eval(dec.decorator, scope)
            func = self.apply_decorator(d, func, dec.decorator)
        scope.vars[stmt.name.value] = func
        self.pending.append((stmt, scope, self_val))

    def apply_decorator(self, dec: Value, func: Value, node: cst.CSTNode) -> Value:
        if isinstance(dec, QualVal) and canonical(dec.qual) == "jax.jit":
            return JitVal(node)
        if isinstance(dec, PartialVal) and isinstance(dec.func, QualVal) \
                and canonical(dec.func.qual) == "jax.jit":
            return JitVal(node, dec.kwargs.get("in_shardings", UNKNOWN),
                          dec.kwargs.get("out_shardings", UNKNOWN))
        if isinstance(dec, JitVal):  # jax.jit(out_shardings=...) used as a decorator factory
            return dec
        return UNKNOWN

    def exec_class(self, stmt: cst.ClassDef, scope: Scope) -> None:
        for dec in stmt.decorators:
            self.eval(dec.decorator, scope)
        cls = ClassVal(stmt)
        body = _block(stmt.body)
        cscope = Scope(scope, "class", count_bindings(body))
        instance = InstanceVal(cls)
        # Methods see `self.attr` only when the attribute is assigned in one place.
        attr_sites = self._attribute_sites(stmt)
        first_method = len(self.pending)
        for s in body:
            if isinstance(s, cst.FunctionDef):
                self.exec_def(s, cscope, instance)
            else:
                self.exec_stmt(s, cscope)
        for name, val in cscope.vars.items():
            if cscope.bindings.get(name) == 1 and attr_sites.get(name, 0) == 0:
                cls.attrs[name] = val
        cls.attrs["__sites__"] = ConstVal(attr_sites)
        scope.vars[stmt.name.value] = cls
        # __init__ first, so other methods see what it assigns.
        mine = self.pending[first_method:]
        mine.sort(key=lambda p: not (p[2] is instance and p[0].name.value == "__init__"))
        self.pending[first_method:] = mine

    def _attribute_sites(self, cls: cst.ClassDef) -> dict[str, int]:
        """How many statements assign each ``self.attr`` in the class's methods.

        A statement walk, not a libcst visitor: visitors rebuild nodes and cost as much
        as the parse.
        """
        sites: dict[str, int] = {}

        def count(t: cst.BaseExpression, n: int = 1) -> None:
            if isinstance(t, (cst.Tuple, cst.List)):
                for el in t.elements:
                    count(el.value, n)
            elif isinstance(t, cst.Attribute) and isinstance(t.value, cst.Name) and t.value.value == "self":
                sites[t.attr.value] = sites.get(t.attr.value, 0) + n

        def walk(stmts: Sequence[cst.CSTNode]) -> None:
            for stmt in stmts:
                if isinstance(stmt, cst.SimpleStatementLine):
                    for small in stmt.body:
                        if isinstance(small, cst.Assign):
                            for t in small.targets:
                                count(t.target)
                        elif isinstance(small, cst.AugAssign):
                            count(small.target, 2)
                        elif isinstance(small, cst.AnnAssign) and small.value is not None:
                            count(small.target)
                    continue
                if isinstance(stmt, cst.ClassDef):
                    continue  # a nested class's `self` is another object
                body = getattr(stmt, "body", None)
                if isinstance(body, cst.BaseSuite):
                    walk(_block(body))
                for attr in ("orelse", "finalbody"):
                    sub = getattr(stmt, attr, None)
                    if isinstance(sub, cst.If):
                        walk([sub])
                    elif sub is not None and isinstance(getattr(sub, "body", None), cst.BaseSuite):
                        walk(_block(sub.body))
                for h in getattr(stmt, "handlers", ()):
                    walk(_block(h.body))
                for c in getattr(stmt, "cases", ()):
                    walk(_block(c.body))

        walk(_block(cls.body))
        return sites

    def run_function(self, fn: cst.FunctionDef, parent: Scope, self_val: Optional[InstanceVal]) -> None:
        body = _block(fn.body)
        scope = Scope(parent if parent.kind != "class" else parent.parent, "function",
                      self._param_bindings(fn.params, count_bindings(body)))
        params = self._param_names(fn.params)
        for p in params:
            scope.vars[p] = UNKNOWN
        is_method = self_val is not None and params and not any(
            isinstance(d.decorator, cst.Name) and d.decorator.value == "staticmethod"
            for d in fn.decorators)
        if is_method:
            scope.vars[params[0]] = self_val  # type: ignore[assignment]
        self.returns.append([])
        self.exec_block(body, scope)
        self.returns.pop()

    def _param_names(self, params: cst.Parameters) -> list[str]:
        out = [p.name.value for p in params.posonly_params]
        out += [p.name.value for p in params.params]
        if isinstance(params.star_arg, cst.Param):
            out.append(params.star_arg.name.value)
        out += [p.name.value for p in params.kwonly_params]
        if params.star_kwarg is not None:
            out.append(params.star_kwarg.name.value)
        return out

    def _param_bindings(self, params: cst.Parameters, bindings: dict[str, int]) -> dict[str, int]:
        for name in self._param_names(params):
            bindings[name] = bindings.get(name, 0) + 2  # parameters are never stable
        return bindings

    def exec_small(self, small: cst.CSTNode, scope: Scope) -> None:
        if isinstance(small, cst.Assign):
            if len(small.targets) == 1 and isinstance(small.targets[0].target, (cst.Name, cst.Attribute)):
                # Meshes are reported as they are built, before the assignment names them.
                target = small.targets[0].target
                self.naming = (small.value, target.value if isinstance(target, cst.Name)
                               else self.ctx.code(target, 40))
            value = self.eval(small.value, scope)
            for t in small.targets:
                self.bind(t.target, value, scope)
        elif isinstance(small, cst.AnnAssign):
            if small.value is not None:
                self.bind(small.target, self.eval(small.value, scope), scope)
        elif isinstance(small, cst.AugAssign):
            left = self.eval(small.target, scope)
            right = self.eval(small.value, scope)
            result = self.binop(small, left, right, small.operator, small.target, small.value)
            self.bind(small.target, result, scope)
        elif isinstance(small, cst.Expr):
            self.eval(small.value, scope)
        elif isinstance(small, cst.Return):
            val = self.eval(small.value, scope) if small.value is not None else ConstVal(None)
            if self.returns:
                self.returns[-1].append(val)
        elif isinstance(small, cst.Import):
            for alias in small.names:
                dotted = _dotted(alias.name)
                if dotted is None:
                    continue
                if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                    self._bind_import(alias.asname.name.value, dotted, scope)
                else:
                    top = dotted.split(".")[0]
                    self._bind_import(top, top, scope)
        elif isinstance(small, cst.ImportFrom):
            if small.relative or small.module is None:
                return
            mod = _dotted(small.module)
            if mod is None or isinstance(small.names, cst.ImportStar):
                return
            for alias in small.names:
                name = _dotted(alias.name)
                if name is None:
                    continue
                local = alias.asname.name.value if (
                    alias.asname is not None and isinstance(alias.asname.name, cst.Name)) else name
                self._bind_import(local, f"{mod}.{name}", scope)
        elif isinstance(small, cst.Del):
            for n in _names_in_target(small.target):
                scope.vars[n] = UNKNOWN
        elif isinstance(small, (cst.Raise, cst.Assert)):
            for child in small.children:
                if isinstance(child, cst.BaseExpression):
                    self.eval(child, scope)

    def _bind_import(self, local: str, qual: str, scope: Scope) -> None:
        scope.vars[local] = QualVal(qual)
        if scope.kind == "module":
            self.ctx.spellings.setdefault(qual, local)
            # `import jax` lets the file spell every jax.* name.
            self.ctx.spellings.setdefault("module:" + qual, local)

    def bind(self, target: cst.BaseExpression, value: Value, scope: Scope) -> None:
        if isinstance(target, cst.Name):
            name = target.value
            if isinstance(value, (MeshVal, ShardingVal, ArrayVal)) and value.name is None:
                value.name = name
            scope.vars[name] = value
        elif isinstance(target, (cst.Tuple, cst.List)):
            elements = target.elements
            if isinstance(value, SeqVal) and len(value.items) == len(elements) and not any(
                    isinstance(e, cst.StarredElement) for e in elements):
                for el, item in zip(elements, value.items):
                    self.bind(el.value, item, scope)
            else:
                for el in elements:
                    self.bind(el.value, UNKNOWN, scope)
        elif isinstance(target, cst.StarredElement):
            self.bind(target.value, UNKNOWN, scope)
        elif isinstance(target, cst.Attribute):
            obj = self.eval(target.value, scope)
            if isinstance(obj, InstanceVal):
                sites = obj.cls.attrs.get("__sites__")
                count = sites.value.get(target.attr.value, 0) if isinstance(sites, ConstVal) else 0
                if count == 1:
                    if isinstance(value, (MeshVal, ShardingVal, ArrayVal)) and value.name is None:
                        value.name = f"self.{target.attr.value}"
                    obj.cls.attrs[target.attr.value] = value
        elif isinstance(target, cst.Subscript):
            self.eval(target.value, scope)

    # -- expressions -----------------------------------------------------------------
    def eval(self, node: Optional[cst.BaseExpression], scope: Scope) -> Value:
        if node is None:
            return UNKNOWN
        method = getattr(self, "eval_" + type(node).__name__, None)
        if method is None:
            return UNKNOWN
        return method(node, scope)

    def eval_Comparison(self, node: cst.Comparison, scope: Scope) -> Value:
        self.eval(node.left, scope)
        for c in node.comparisons:
            self.eval(c.comparator, scope)
        return UNKNOWN

    def eval_BooleanOperation(self, node: cst.BooleanOperation, scope: Scope) -> Value:
        self.eval(node.left, scope)
        self.eval(node.right, scope)
        return UNKNOWN

    def eval_Await(self, node: cst.Await, scope: Scope) -> Value:
        self.eval(node.expression, scope)
        return UNKNOWN

    def eval_FormattedString(self, node: cst.FormattedString, scope: Scope) -> Value:
        for part in node.parts:
            if isinstance(part, cst.FormattedStringExpression):
                self.eval(part.expression, scope)
        return UNKNOWN

    def eval_Name(self, node: cst.Name, scope: Scope) -> Value:
        if node.value in ("True", "False", "None"):
            return ConstVal({"True": True, "False": False, "None": None}[node.value])
        return scope.lookup(node.value)

    def eval_Integer(self, node: cst.Integer, scope: Scope) -> Value:
        v = int(node.evaluated_value)
        return IntVal(lambda _m, v=v: v, literal=v)

    def eval_SimpleString(self, node: cst.SimpleString, scope: Scope) -> Value:
        try:
            return ConstVal(node.evaluated_value)
        except Exception:  # noqa: BLE001 - odd literals are just unknown
            return UNKNOWN

    def eval_UnaryOperation(self, node: cst.UnaryOperation, scope: Scope) -> Value:
        v = self.eval(node.expression, scope)
        if isinstance(node.operator, cst.Minus) and isinstance(v, IntVal):
            f = v.fn
            return IntVal(lambda m: -f(m), literal=-v.literal if v.literal is not None else None)
        return UNKNOWN

    def eval_Tuple(self, node: cst.Tuple, scope: Scope) -> Value:
        return self._seq(node.elements, scope, "tuple")

    def eval_List(self, node: cst.List, scope: Scope) -> Value:
        return self._seq(node.elements, scope, "list")

    def _seq(self, elements: Sequence[cst.BaseElement], scope: Scope, kind: str) -> Value:
        items: list[Value] = []
        starred = False
        for el in elements:
            v = self.eval(el.value, scope)
            if isinstance(el, cst.StarredElement):
                starred = True
            items.append(v)
        return UNKNOWN if starred else SeqVal(tuple(items), kind)

    def eval_Dict(self, node: cst.Dict, scope: Scope) -> Value:
        items: list[Value] = []
        keys: list[object] = []
        for el in node.elements:
            if isinstance(el, cst.DictElement):
                key = self.eval(el.key, scope)
                keys.append(key.value if isinstance(key, ConstVal) else _NO_KEY)
                items.append(self.eval(el.value, scope))
            else:
                self.eval(el.value, scope)
                return UNKNOWN
        return SeqVal(tuple(items), "dict", tuple(keys))

    def eval_IfExp(self, node: cst.IfExp, scope: Scope) -> Value:
        self.eval(node.test, scope)
        return join(self.eval(node.body, scope), self.eval(node.orelse, scope))

    def eval_NamedExpr(self, node: cst.NamedExpr, scope: Scope) -> Value:
        v = self.eval(node.value, scope)
        self.bind(node.target, v, scope)
        return v

    def eval_Lambda(self, node: cst.Lambda, scope: Scope) -> Value:
        return FuncVal(node, scope)

    def eval_Attribute(self, node: cst.Attribute, scope: Scope) -> Value:
        base = self.eval(node.value, scope)
        attr = node.attr.value
        if isinstance(base, QualVal):
            return QualVal(f"{base.qual}.{attr}")
        if isinstance(base, MeshVal):
            if attr == "devices":
                d = base.devices
                return DevVal(fn=d.fn, desc=f"{_mesh_label(base)}.devices", node=node,
                              reorders=(), fresh=False, from_mesh=base, sizes=d.sizes)
            return UNKNOWN
        if isinstance(base, ShardingVal):
            if attr == "mesh" and base.mesh is not None:
                return base.mesh
            if attr == "spec" and base.spec is not None:
                return base.spec
            if attr == "device_set":
                src = base.mesh.devices if base.mesh is not None else base.device
                if src is not None:
                    return DevVal(fn=src.fn, desc=f"{_label(base)}.device_set", node=node,
                                  fresh=False, from_mesh=base.mesh, sizes=src.sizes, is_set=True)
            return UNKNOWN
        if isinstance(base, ArrayVal):
            if attr == "sharding":
                return base.sharding
            if attr in ("T", "mT"):
                return base
            return UNKNOWN
        if _ordered(base):
            if attr == "T":
                return base.derive(lambda m, f=base.fn: f(m).transpose(), f"{base.desc}.T",
                                   reorder=".T", step=(node, node.value))
            if attr == "flat":
                return base.derive(lambda m, f=base.fn: f(m).ravel(), base.desc)
            if attr == "size":
                return IntVal(lambda m, f=base.fn: len(f(m).flat))
            return UNKNOWN
        if isinstance(base, InstanceVal):
            return base.cls.attrs.get(attr, UNKNOWN) if attr != "__sites__" else UNKNOWN
        if isinstance(base, ClassVal):
            return base.attrs.get(attr, UNKNOWN) if attr != "__sites__" else UNKNOWN
        return UNKNOWN

    def eval_Subscript(self, node: cst.Subscript, scope: Scope) -> Value:
        base = self.eval(node.value, scope)
        elems = node.slice
        parts: list[object] = []
        for el in elems:
            s = el.slice
            if isinstance(s, cst.Index):
                parts.append(self.eval(s.value, scope))
            else:
                parts.append((self.eval(s.lower, scope) if s.lower else None,
                              self.eval(s.upper, scope) if s.upper else None,
                              self.eval(s.step, scope) if s.step else None))
        if isinstance(base, SeqVal) and base.kind == "dict" and len(parts) == 1 \
                and isinstance(parts[0], ConstVal) and _NO_KEY not in base.keys:
            key = parts[0].value
            hits = [i for i, k in enumerate(base.keys) if k == key]
            return base.items[hits[-1]] if hits else UNKNOWN
        if isinstance(base, SeqVal) and base.kind != "dict" and len(parts) == 1 \
                and isinstance(parts[0], IntVal):
            i = _const_int(parts[0])
            if i is not None and -len(base.items) <= i < len(base.items):
                return base.items[i]
            return UNKNOWN
        if _ordered(base):
            return self._index_devices(base, parts, node)
        return UNKNOWN

    def _index_devices(self, base: DevVal, parts: list[object], node: cst.Subscript) -> Value:
        text = self.ctx.code(node.slice[0].slice, 30) if len(parts) == 1 else ""
        if len(parts) != 1:
            # Multi-axis indexing of a device grid: only all-slice steps are modelled.
            return UNKNOWN
        part = parts[0]
        if isinstance(part, tuple):
            lo, hi, st = part
            fns = []
            for p in (lo, hi, st):
                if p is None:
                    fns.append(None)
                elif isinstance(p, IntVal):
                    fns.append(p.fn)
                else:
                    return DevVal(fn=undecidable, desc=f"{base.desc}[{text}]", node=node,
                                  fresh=base.fresh, from_mesh=base.from_mesh)
            f = base.fn

            def sliced(m: dv.Model) -> dv.DevArr:
                a = f(m)
                vals = [fn(m) if fn is not None else None for fn in fns]
                return a.slice0(vals[0], vals[1], vals[2])

            step = _const_int(st) if st is not None else 1
            reorder = f"[{text}]" if (step is not None and step < 0) else None
            if st is not None and step is None:
                reorder = f"[{text}]"
            sizes = base.sizes
            return base.derive(sliced, f"{base.desc}[{text}]", reorder=reorder, sizes=sizes,
                               step=(node, node.value) if reorder else None)
        if isinstance(part, IntVal):
            f, g = base.fn, part.fn
            single = DevVal(fn=lambda m: f(m).index0(g(m)), desc=f"{base.desc}[{text}]", node=node,
                            fresh=base.fresh, from_mesh=base.from_mesh, sizes=base.sizes)
            # Indexing a 2-D grid gives a row, a 1-D list gives one device.
            single.single = True
            return _row_or_device(single, base)
        return UNKNOWN

    def eval_BinaryOperation(self, node: cst.BinaryOperation, scope: Scope) -> Value:
        left = self.eval(node.left, scope)
        right = self.eval(node.right, scope)
        return self.binop(node, left, right, node.operator, node.left, node.right)

    def binop(self, node: cst.CSTNode, left: Value, right: Value, op: cst.CSTNode,
              lnode: cst.CSTNode, rnode: cst.CSTNode) -> Value:
        if isinstance(left, IntVal) and isinstance(right, IntVal):
            return _int_arith(op, left, right)
        if isinstance(op, (cst.Add, cst.AddAssign)) and _ordered(left) and _ordered(right):
            f, g = left.fn, right.fn
            joined = left.derive(lambda m: f(m).as_list().concat(g(m).as_list()),
                                 f"{left.desc} + {right.desc}")
            # d[k:] + d[:k] is a rotation: same devices, other order.
            joined.reorders = left.reorders + right.reorders + ("rotation",)
            joined.shuffle = left.shuffle or right.shuffle
            joined.sizes = left.sizes + right.sizes
            joined.platforms = left.platforms | right.platforms
            return joined
        if isinstance(left, ArrayVal) and isinstance(right, ArrayVal):
            self.emit(Transfer(node=node, ctx=self.ctx, kind="binop", value=left,
                               target=right.sharding, value_node=lnode, target_node=rnode,
                               func=self.ctx.code(node, 40)))
            if left.mesh is not None and right.mesh is not None and \
                    self.ctx.compare(left.mesh, right.mesh) == "same":
                return left
            return UNKNOWN
        if isinstance(left, ArrayVal) and isinstance(right, (IntVal, ConstVal)):
            return left
        if isinstance(right, ArrayVal) and isinstance(left, (IntVal, ConstVal)):
            return right
        return UNKNOWN

    def _comprehension(self, node: cst.ListComp | cst.GeneratorExp | cst.SetComp, scope: Scope) -> Value:
        comp = node.for_in
        it = self.eval(comp.iter, scope)
        inner = Scope(scope, "function", {n: 2 for n in _names_in_target(comp.target)})
        element: Value = UNKNOWN
        if isinstance(it, SeqVal) and it.items and all(i is it.items[0] for i in it.items):
            element = it.items[0]
        if isinstance(comp.target, cst.Name):
            inner.vars[comp.target.value] = element
        for cond in comp.ifs:
            self.eval(cond.test, inner)
        if comp.inner_for_in is None:
            self.eval(node.elt, inner)
        picked = self._picked_devices(node, comp, it, scope)
        if picked is not None:
            return picked
        if _ordered(it) and comp.inner_for_in is None \
                and isinstance(comp.target, cst.Name) and isinstance(node.elt, cst.Name) \
                and node.elt.value == comp.target.value and not isinstance(node, cst.SetComp):
            if comp.ifs:
                # A filter keeps an unknown subset.
                return DevVal(fn=undecidable, desc=self.ctx.code(node, 60), node=node,
                              fresh=it.fresh, from_mesh=it.from_mesh)
            return it.derive(lambda m, f=it.fn: f(m).ravel().as_list(), it.desc)
        return UNKNOWN

    def _picked_devices(self, node: cst.CSTNode, comp: cst.CompFor, it: Value,
                        scope: Scope) -> Optional[Value]:
        """``[devs[i] for i in (0, 1, 4, 5)]`` or ``... for i in range(a, b)``: devices by index."""
        elt = getattr(node, "elt", None)
        if comp.ifs or comp.inner_for_in is not None or not isinstance(comp.target, cst.Name) \
                or not isinstance(elt, cst.Subscript) or len(elt.slice) != 1 \
                or not isinstance(elt.slice[0].slice, cst.Index):
            return None
        index = elt.slice[0].slice.value
        if not (isinstance(index, cst.Name) and index.value == comp.target.value):
            return None
        base = self.eval(elt.value, scope)
        if not (_ordered(base)):
            return None
        fns: Optional[list[Callable[[dv.Model], int]]] = None
        if isinstance(it, SeqVal):
            fns = [_int_fn(v) for v in it.items]  # type: ignore[misc]
        elif isinstance(comp.iter, cst.Call) and isinstance(comp.iter.func, cst.Name) \
                and comp.iter.func.value == "range" and scope.lookup("range") is UNKNOWN \
                and 1 <= len(comp.iter.args) <= 2:
            bounds = [self.eval(a.value, scope) for a in comp.iter.args]
            if all(isinstance(b, IntVal) for b in bounds):
                lo = bounds[0].fn if len(bounds) == 2 else (lambda _m: 0)  # type: ignore[union-attr]
                hi = bounds[-1].fn  # type: ignore[union-attr]

                def take_range(m: dv.Model, f=base.fn, lo=lo, hi=hi) -> dv.DevArr:
                    arr = f(m)
                    return dv.DevArr.of([arr.index0(i).flat[0] for i in range(lo(m), hi(m))])
                return base.derive(take_range, self.ctx.code(node, 60))
        if fns is None or any(f is None for f in fns):
            return None
        f = base.fn

        def take(m: dv.Model) -> dv.DevArr:
            arr = f(m)
            ids = [arr.index0(g(m)).flat for g in fns]  # type: ignore[misc]
            if any(len(i) != 1 for i in ids):
                raise dv.ModelError("picking rows of a grid")
            return dv.DevArr.of([i[0] for i in ids])
        out = base.derive(take, self.ctx.code(node, 60))
        out.reorders = base.reorders + (("picked by index",) if not _ascending(fns) else ())
        return out

    eval_ListComp = _comprehension
    eval_GeneratorExp = _comprehension
    eval_SetComp = _comprehension

    # -- calls -----------------------------------------------------------------------
    def eval_Call(self, node: cst.Call, scope: Scope) -> Value:
        func_node = node.func
        # Methods on values the analysis models (devs.reshape(...), x.to_device(s) ...)
        if isinstance(func_node, cst.Attribute):
            recv = self.eval(func_node.value, scope)
            args = self._args(node, scope)
            method = func_node.attr.value
            if isinstance(recv, QualVal):
                return self.call_qual(f"{recv.qual}.{method}", args, node, scope)
            return self.call_method(recv, method, args, node, scope)
        func = self.eval(func_node, scope)
        args = self._args(node, scope)
        if isinstance(func, QualVal):
            return self.call_qual(func.qual, args, node, scope)
        if isinstance(func, FuncVal):
            return self.inline(func, args, node)
        if isinstance(func, JitVal):
            return self.call_jit(func, args, node)
        if isinstance(func, PartialVal):
            if isinstance(func.func, QualVal) and canonical(func.func.qual) == "jax.jit":
                return JitVal(node, func.kwargs.get("in_shardings", UNKNOWN),
                              func.kwargs.get("out_shardings", UNKNOWN))
            return UNKNOWN
        if isinstance(func, ClassVal):
            return InstanceVal(func)
        return UNKNOWN

    def _args(self, node: cst.Call, scope: Scope) -> Call:
        out: list[tuple[Optional[str], Value, cst.Arg]] = []
        for a in node.args:
            v = self.eval(a.value, scope)
            out.append((a.keyword.value if a.keyword is not None else None, v, a))
        return Call(node, out)

    def call_method(self, recv: Value, method: str, call: Call, node: cst.Call, scope: Scope) -> Value:
        if _ordered(recv):
            return self.device_method(recv, method, call, node)
        if isinstance(recv, ArrayVal):
            if method == "to_device":
                target = call.arg(0, "device")
                self._transfer("to_device", node, recv, target, call.arg_node(-1),
                               call.arg_node(0, "device"), f"{self.ctx.code(node.func, 40)}")
                if isinstance(target, ShardingVal):
                    return ArrayVal(target, node)
                return UNKNOWN
            if method in ("block_until_ready", "astype", "copy"):
                return recv
            if method == "devices":
                src = recv.sharding.mesh.devices if recv.sharding.mesh is not None else recv.sharding.device
                if src is not None:
                    return DevVal(fn=src.fn, desc=f"{_label(recv)}.devices()", node=node, fresh=False,
                                  from_mesh=recv.sharding.mesh, sizes=src.sizes, is_set=True)
            return UNKNOWN
        if isinstance(recv, RngVal):
            target = call.arg(0, "x")
            if method in ("permutation", "shuffle", "choice", "sample") and isinstance(target, DevVal) \
                    and not target.single:
                if method == "choice" and not self._is_full_sample(call, target, 1, "size"):
                    return UNKNOWN
                if method == "sample" and not self._is_full_sample(call, target, 1, "k"):
                    return UNKNOWN
                shuffled = self._shuffled(target, node, recv.agreed, self.ctx.code(node, 50))
                if method == "shuffle":
                    self._rebind_in_place(call.arg_node(0, "x"), shuffled, scope)
                    return ConstVal(None)
                return shuffled
            return UNKNOWN
        if isinstance(recv, SeqVal) and method in ("values",) and recv.kind == "dict":
            return SeqVal(recv.items, "tuple")
        if isinstance(recv, MeshVal) and method in ("__enter__",):
            return recv
        return UNKNOWN

    def device_method(self, recv: DevVal, method: str, call: Call, node: cst.Call) -> Value:
        f = recv.fn
        if method in ("reshape",):
            shape_v = call.positional[0][0] if len(call.positional) == 1 else SeqVal(
                tuple(v for v, _ in call.positional))
            fns = _shape_fns(shape_v)
            if fns is None:
                return recv.derive(undecidable, recv.desc)
            sizes = recv.sizes + _literal_sizes(shape_v)
            return recv.derive(lambda m: f(m).reshape([g(m) for g in fns]), recv.desc, sizes=sizes)
        if method in ("flatten", "ravel", "tolist", "copy", "squeeze"):
            if method == "squeeze":
                return recv.derive(lambda m: _squeeze(f(m)), recv.desc)
            return recv.derive(lambda m: f(m).ravel() if method != "copy" else f(m), recv.desc)
        if method == "transpose":
            axes = [_const_int(v) for v, _ in call.positional]
            if len(axes) == 1 and isinstance(call.positional[0][0], SeqVal):
                axes = [_const_int(v) for v in call.positional[0][0].items]  # type: ignore[union-attr]
            if any(a is None for a in axes):
                return recv.derive(undecidable, recv.desc)
            ax = axes or None
            return recv.derive(lambda m: f(m).transpose(ax), f"{recv.desc}.transpose()",
                               reorder=".transpose()")
        if method in ("swapaxes",):
            a, b = _const_int(call.arg(0)), _const_int(call.arg(1))
            if a is None or b is None:
                return recv.derive(undecidable, recv.desc)
            return recv.derive(lambda m: f(m).swapaxes(a, b), f"{recv.desc}.swapaxes({a}, {b})",
                               reorder=".swapaxes()")
        return UNKNOWN

    def call_jit(self, jit: JitVal, call: Call, node: cst.Call) -> Value:
        ins = jit.in_shardings
        for i, (v, arg) in enumerate(call.positional):
            if not isinstance(v, ArrayVal):
                continue
            target = ins
            if isinstance(ins, SeqVal):
                target = ins.items[i] if i < len(ins.items) else UNKNOWN
            if isinstance(target, ShardingVal):
                self.emit(Transfer(node=node, ctx=self.ctx, kind="jit_in", value=v, target=target,
                                   value_node=arg.value, target_node=None,
                                   func=self.ctx.code(node.func, 40)))
        outs = jit.out_shardings
        if isinstance(outs, ShardingVal):
            for v, arg in call.positional:
                if isinstance(v, ArrayVal):
                    self.emit(Transfer(node=node, ctx=self.ctx, kind="jit_out", value=v, target=outs,
                                       value_node=arg.value, target_node=None,
                                       func=self.ctx.code(node.func, 40)))
                    break
            return ArrayVal(outs, node)
        if isinstance(outs, SeqVal) and all(isinstance(o, ShardingVal) for o in outs.items):
            return SeqVal(tuple(ArrayVal(o, node) for o in outs.items))  # type: ignore[arg-type]
        return UNKNOWN

    def inline(self, func: FuncVal, call: Call, node: cst.Call) -> Value:
        """A same-module helper's return value for these arguments, quietly."""
        if call.has_star or len(self.inline_stack) >= _MAX_INLINE_DEPTH:
            return UNKNOWN

        def bind(scope: Scope, plain: list[str], names: list[str]) -> None:
            for i, (v, _) in enumerate(call.positional):
                if i < len(plain):
                    scope.vars[plain[i]] = v
            for k, (v, _) in call.keywords.items():
                if k in names:
                    scope.vars[k] = v

        return self._run_callable(func, bind, quiet=True)

    def call_with_leaf(self, func: FuncVal, leaf: Value) -> Value:
        """Evaluate a tree.map callback on one leaf, with its events (not quiet)."""

        def bind(scope: Scope, plain: list[str], names: list[str]) -> None:
            if plain:
                scope.vars[plain[0]] = leaf

        return self._run_callable(func, bind, quiet=False)

    def _run_callable(self, func: FuncVal, bind: Callable[[Scope, list[str], list[str]], None],
                      quiet: bool) -> Value:
        fn = func.node
        if fn in self.inline_stack:
            return UNKNOWN
        parent: Scope = func.scope  # type: ignore[assignment]
        if isinstance(fn, cst.Lambda):
            body_stmts: Sequence[cst.CSTNode] = []
            bindings: dict[str, int] = {}
        else:
            body_stmts = _block(fn.body)
            bindings = count_bindings(body_stmts)
        scope = Scope(parent if parent.kind != "class" else parent.parent, "function",
                      self._param_bindings(fn.params, bindings))
        names = self._param_names(fn.params)
        plain = [p.name.value for p in list(fn.params.posonly_params) + list(fn.params.params)]
        for n in names:
            scope.vars[n] = UNKNOWN
        bind(scope, plain, names)
        self.inline_stack.append(fn)
        self.quiet += quiet
        saved_pending = len(self.pending)
        try:
            if isinstance(fn, cst.Lambda):
                return self.eval(fn.body, scope)
            self.returns.append([])
            self.exec_block(body_stmts, scope)
            rets = self.returns.pop()
        finally:
            self.quiet -= quiet
            self.inline_stack.pop()
            del self.pending[saved_pending:]  # nested defs are analysed on their own
        if not rets:
            return UNKNOWN
        v = rets[0]
        for other in rets[1:]:
            v = join(v, other)
        return v

    # -- calls to known functions ----------------------------------------------------
    def call_qual(self, qual: str, call: Call, node: cst.Call, scope: Scope) -> Value:
        name = canonical(qual)
        if name is None:
            return UNKNOWN
        handler = _HANDLERS.get(name)
        if handler is not None:
            self.current_name = name
            return handler(self, call, node, scope)
        if name.startswith("jnp."):
            return self.call_jnp(name, call, node)
        return UNKNOWN

    def call_jnp(self, name: str, call: Call, node: cst.Call) -> Value:
        target = call.arg(-1, "device")
        if not call.given(-1, "device"):
            return UNKNOWN
        first = call.arg(0)
        if name in ("jnp.asarray", "jnp.array") and isinstance(first, ArrayVal):
            self._transfer("asarray", node, first, target, call.arg_node(0),
                           call.arg_node(-1, "device"), self.ctx.code(node.func, 40))
        if isinstance(target, ShardingVal):
            return ArrayVal(target, node)
        return UNKNOWN

    def _transfer(self, kind: TransferKind, node: cst.Call, value: Value, target: Value,
                  value_node: Optional[cst.CSTNode], target_node: Optional[cst.CSTNode],
                  func: str, **kw: bool) -> None:
        self.emit(Transfer(node=node, ctx=self.ctx, kind=kind, value=value, target=target,
                           value_node=value_node, target_node=target_node, func=func, **kw))

    def _shuffled(self, devs: DevVal, node: cst.CSTNode, agreed: bool, how: str) -> DevVal:
        token = self.new_token(node)
        f = devs.fn
        out = devs.derive(lambda m: f(m).permuted(token), how, reorder=how)
        out.shuffle = Shuffle(node, how, agreed) if not agreed or devs.shuffle is None else devs.shuffle
        return out

    def _rebind_in_place(self, target: Optional[cst.CSTNode], value: Value, scope: Scope) -> None:
        if isinstance(target, cst.Name):
            # Mutating a list that may be shared: only follow a plain local name.
            scope.vars[target.value] = value

    def _is_full_sample(self, call: Call, devs: DevVal, index: int, kw: str) -> bool:
        k = call.arg(index, kw)
        node = call.arg_node(index, kw)
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "len":
            return True
        if isinstance(k, IntVal):
            f, g = devs.fn, k.fn
            # Sampling every device is a permutation; sampling fewer is a subset.
            for model in dv.models_for(devs.sizes):
                arr = self.ctx.devices.run(f, model)
                if arr is None:
                    continue
                try:
                    if g(model) != len(arr.rows()):
                        return False
                except Exception:  # noqa: BLE001
                    return False
            return True
        return False

    def _rng_agreed(self, which: str) -> bool:
        return bool(self.rng_seeded.get(which))


# ------------------------------------------------------------------------------------
# handlers for known functions
# ------------------------------------------------------------------------------------
Handler = Callable[[Analyzer, Call, cst.Call, Scope], Value]
_HANDLERS: dict[str, Handler] = {}


def handles(*names: str) -> Callable[[Handler], Handler]:
    def deco(fn: Handler) -> Handler:
        for n in names:
            _HANDLERS[n] = fn
        return fn
    return deco


def _platform(an: Analyzer, call: Call, index: int, kw: str) -> tuple[bool, Optional[str]]:
    """(known, platform): known is False when the backend is not a literal."""
    if not call.given(index, kw):
        return True, None
    v = call.arg(index, kw)
    if isinstance(v, ConstVal) and (v.value is None or isinstance(v.value, str)):
        return True, v.value  # type: ignore[return-value]
    return False, None


@handles("jax.devices")
def _devices(an: Analyzer, call: Call, node: cst.Call, scope: Scope) -> Value:
    known, platform = _platform(an, call, 0, "backend")
    fn = (lambda m: dv.natural(m, platform)) if known else undecidable
    return DevVal(fn=fn, desc=an.ctx.code(node, 40), node=node,  # type: ignore[arg-type]
                  platforms=frozenset({platform or "default"} if known else {"?"}))


@handles("jax.local_devices")
def _local_devices(an: Analyzer, call: Call, node: cst.Call, scope: Scope) -> Value:
    known, platform = _platform(an, call, 1, "backend")
    if call.given(0, "process_index") or call.has_star:
        known = False
    fn = (lambda m: dv.local(m, platform)) if known else undecidable
    return DevVal(fn=fn, desc=an.ctx.code(node, 40), node=node,  # type: ignore[arg-type]
                  platforms=frozenset({platform or "default"} if known else {"?"}))


@handles("jax.device_count")
def _device_count(an: Analyzer, call: Call, node: cst.Call, scope: Scope) -> Value:
    if call.positional or call.keywords:
        return UNKNOWN
    return IntVal(lambda m: m.n)


@handles("jax.local_device_count")
def _local_device_count(an: Analyzer, call: Call, node: cst.Call, scope: Scope) -> Value:
    if call.positional or call.keywords:
        return UNKNOWN
    return IntVal(lambda m: m.per_process)


@handles("jax.process_count")
def _process_count(an: Analyzer, call: Call, node: cst.Call, scope: Scope) -> Value:
    return IntVal(lambda m: m.processes)


@handles("jax.process_index")
def _process_index(an: Analyzer, call: Call, node: cst.Call, scope: Scope) -> Value:
    v = IntVal(lambda m: m.proc)
    v.literal = None
    return _PerProcess(v.fn)


class _PerProcess(IntVal):
    """An integer that differs between processes (a seed made from it is per-process)."""

    def __init__(self, fn: Callable[[dv.Model], int]) -> None:
        super().__init__(fn, None)


@handles("len")
def _len(an: Analyzer, call: Call, node: cst.Call, scope: Scope) -> Value:
    v = call.arg(0)
    if _ordered(v):
        f = v.fn
        return IntVal(lambda m: len(f(m).rows()))
    if isinstance(v, SeqVal):
        n = len(v.items)
        return IntVal(lambda _m: n, literal=n)
    return UNKNOWN


@handles("int")
def _int(an: Analyzer, call: Call, node: cst.Call, scope: Scope) -> Value:
    v = call.arg(0)
    return v if isinstance(v, IntVal) else UNKNOWN


@handles("np.array", "list", "tuple")
def _neutral(an: Analyzer, call: Call, node: cst.Call, scope: Scope) -> Value:
    v = call.arg(0, "object")
    if len(call.positional) > 1 or (set(call.keywords) - {"object", "dtype"}):
        return UNKNOWN
    name = an.current_name
    if isinstance(v, DevVal) and not v.single:
        f = v.fn
        if v.is_set:
            if name == "np.array":
                return UNKNOWN  # an array of a set is an object array of one element
            how = f"list({v.desc})"
            token = an.new_token(node)
            # A set has no order: listing it gives an order that is not the mesh's.
            return v.derive(lambda m: f(m).ravel().as_list().permuted("set" + token), how,
                            reorder=how, fresh=False)
        if name == "np.array":
            return v.derive(lambda m: f(m).as_array(), v.desc)
        return v.derive(lambda m: f(m).as_list(), v.desc)
    if isinstance(v, SeqVal) and name in ("list", "tuple"):
        return SeqVal(v.items, name)
    return UNKNOWN


def _call_qual(node: cst.Call) -> Optional[str]:
    return _dotted(node.func)


@handles("set")
def _set(an: Analyzer, call: Call, node: cst.Call, scope: Scope) -> Value:
    v = call.arg(0)
    if isinstance(v, DevVal) and not v.single:
        return DevVal(fn=v.fn, desc=f"set({v.desc})", node=node, fresh=v.fresh, from_mesh=v.from_mesh,
                      sizes=v.sizes, is_set=True, reorders=v.reorders, shuffle=v.shuffle)
    return UNKNOWN


@handles("reversed")
def _reversed(an: Analyzer, call: Call, node: cst.Call, scope: Scope) -> Value:
    v = call.arg(0)
    if _ordered(v):
        f = v.fn
        how = f"reversed({v.desc})"
        return v.derive(lambda m: f(m).flip(0) if f(m).ndim else f(m), how, reorder="reversed()",
                        step=(node, call.arg_node(0)))
    return UNKNOWN


@handles("np.flip", "np.fliplr", "np.flipud")
def _flip(an: Analyzer, call: Call, node: cst.Call, scope: Scope) -> Value:
    v = call.arg(0, "m")
    if not (_ordered(v)):
        return UNKNOWN
    name = an.current_name
    f = v.fn
    if name == "np.fliplr":
        axis: Optional[int] = 1
    elif name == "np.flipud":
        axis = 0
    else:
        if call.given(1, "axis"):
            axis = _const_int(call.arg(1, "axis"))
            if axis is None:
                return v.derive(undecidable, v.desc)
        else:
            axis = None
    how = f"np.flip({v.desc})"
    return v.derive(lambda m: f(m).flip(axis), how, reorder="np.flip()", step=(node, call.arg_node(0, "m")))


@handles("np.roll")
def _roll(an: Analyzer, call: Call, node: cst.Call, scope: Scope) -> Value:
    v = call.arg(0, "a")
    shift = call.arg(1, "shift")
    if not (_ordered(v)) or not isinstance(shift, IntVal):
        return UNKNOWN
    axis = None
    if call.given(2, "axis"):
        axis = _const_int(call.arg(2, "axis"))
        if axis is None:
            return v.derive(undecidable, v.desc)
    f, g = v.fn, shift.fn
    how = f"np.roll({v.desc}, {an.ctx.code(call.arg_node(1, 'shift'), 20)})"  # type: ignore[arg-type]
    return v.derive(lambda m: f(m).roll(g(m), axis), how, reorder="np.roll()",
                    step=(node, call.arg_node(0, "a")))


@handles("np.transpose", "np.swapaxes", "np.moveaxis")
def _transpose_fn(an: Analyzer, call: Call, node: cst.Call, scope: Scope) -> Value:
    v = call.arg(0, "a")
    if not (_ordered(v)):
        return UNKNOWN
    name = an.current_name
    f = v.fn
    if name == "np.transpose":
        axes_v = call.arg(1, "axes")
        if call.given(1, "axes"):
            if not isinstance(axes_v, SeqVal):
                return v.derive(undecidable, v.desc)
            axes = [_const_int(i) for i in axes_v.items]
            if any(a is None for a in axes):
                return v.derive(undecidable, v.desc)
            return v.derive(lambda m: f(m).transpose(axes),  # type: ignore[arg-type]
                            f"np.transpose({v.desc})",
                            reorder="np.transpose()")
        return v.derive(lambda m: f(m).transpose(), f"np.transpose({v.desc})", reorder="np.transpose()")
    a, b = _const_int(call.arg(1)), _const_int(call.arg(2))
    if a is None or b is None:
        return v.derive(undecidable, v.desc)
    if name == "np.swapaxes":
        return v.derive(lambda m: f(m).swapaxes(a, b), f"np.swapaxes({v.desc}, {a}, {b})",
                        reorder="np.swapaxes()")
    return v.derive(lambda m: f(m).moveaxis(a, b), f"np.moveaxis({v.desc}, {a}, {b})",
                    reorder="np.moveaxis()")


@handles("np.reshape")
def _np_reshape(an: Analyzer, call: Call, node: cst.Call, scope: Scope) -> Value:
    v = call.arg(0, "a")
    if not (_ordered(v)):
        return UNKNOWN
    shape_v = call.arg(1, "newshape") if call.given(1, "newshape") else call.arg(1, "shape")
    fns = _shape_fns(shape_v)
    if fns is None:
        return v.derive(undecidable, v.desc)
    f = v.fn
    return v.derive(lambda m: f(m).reshape([g(m) for g in fns]), v.desc,
                    sizes=v.sizes + _literal_sizes(shape_v))


@handles("np.ravel")
def _np_ravel(an: Analyzer, call: Call, node: cst.Call, scope: Scope) -> Value:
    v = call.arg(0, "a")
    if _ordered(v):
        f = v.fn
        return v.derive(lambda m: f(m).ravel(), v.desc)
    return UNKNOWN


@handles("np.concatenate")
def _concat(an: Analyzer, call: Call, node: cst.Call, scope: Scope) -> Value:
    seq = call.arg(0)
    if isinstance(seq, SeqVal) and len(seq.items) == 2 and all(
            _ordered(i) for i in seq.items) \
            and not call.given(1, "axis"):
        a, b = seq.items  # type: ignore[misc]
        out = an.binop(node, a, b, cst.Add(), node, node)
        if isinstance(out, DevVal):
            return out.derive(lambda m, f=out.fn: f(m).as_array(), out.desc)
    return UNKNOWN


@handles("sorted")
def _sorted(an: Analyzer, call: Call, node: cst.Call, scope: Scope) -> Value:
    v = call.arg(0)
    if not (isinstance(v, DevVal) and not v.single):
        return UNKNOWN
    f = v.fn
    reverse = call.arg(-1, "reverse")
    rev = isinstance(reverse, ConstVal) and reverse.value is True
    if call.given(-1, "reverse") and not isinstance(reverse, ConstVal):
        return v.derive(undecidable, v.desc)
    key_node = call.arg_node(-1, "key")
    key_text = an.ctx.code(key_node, 60) if key_node is not None else ""
    by_id = key_node is None or _is_id_key(key_node)
    if key_node is not None and any(k in key_text for k in _PHYSICAL_KEYS):
        # Physical order is the platform's to decide; not a reordering the linter can see.
        return v.derive(undecidable, f"sorted({v.desc}, key={key_text})", is_set=False)
    if by_id and key_node is None and v.is_set:
        by_id = True  # a sorted set of devices sorts by id (Device defines ordering by id)
    if by_id:
        how = f"sorted({v.desc}, reverse=True)" if rev else v.desc
        # Sorting by id restores the natural order whatever happened before.
        out = v.derive(lambda m: f(m).sorted_by_id(rev), how, fresh=v.fresh, is_set=False)
        out.reorders = ("reverse=True",) if rev else ()
        out.steps = ()
        out.shuffle = None
        return out
    token = an.new_token(node)
    how = f"sorted({v.desc}, key={key_text})"
    return v.derive(lambda m: f(m).ravel().as_list().permuted("sort" + token), how, reorder=how,
                    is_set=False)


def _is_id_key(key: cst.CSTNode) -> bool:
    if isinstance(key, cst.Lambda) and len(key.params.params) == 1:
        p = key.params.params[0].name.value
        body = key.body
        return isinstance(body, cst.Attribute) and isinstance(body.value, cst.Name) \
            and body.value.value == p and body.attr.value == "id"
    if isinstance(key, cst.Call):  # operator.attrgetter('id')
        f = key.func
        fname = f.attr.value if isinstance(f, cst.Attribute) else f.value if isinstance(f, cst.Name) else ""
        return fname == "attrgetter" and len(key.args) == 1 \
            and isinstance(key.args[0].value, cst.SimpleString) \
            and key.args[0].value.evaluated_value == "id"
    return False


@handles("random.shuffle", "np.random.shuffle")
def _shuffle_global(an: Analyzer, call: Call, node: cst.Call, scope: Scope) -> Value:
    v = call.arg(0, "x")
    if _ordered(v):
        which = "random" if an.current_name == "random.shuffle" else "numpy"
        shuffled = an._shuffled(v, node, an._rng_agreed(which), an.ctx.code(node, 50))
        an._rebind_in_place(call.arg_node(0, "x"), shuffled, scope)
    return ConstVal(None)


@handles("np.random.permutation")
def _permutation(an: Analyzer, call: Call, node: cst.Call, scope: Scope) -> Value:
    v = call.arg(0, "x")
    if _ordered(v):
        return an._shuffled(v, node, an._rng_agreed("numpy"), an.ctx.code(node, 50))
    return UNKNOWN


@handles("random.sample")
def _sample(an: Analyzer, call: Call, node: cst.Call, scope: Scope) -> Value:
    v = call.arg(0, "population")
    if _ordered(v):
        if an._is_full_sample(call, v, 1, "k"):
            return an._shuffled(v, node, an._rng_agreed("random"), an.ctx.code(node, 50))
        return DevVal(fn=undecidable, desc=an.ctx.code(node, 50), node=node)
    return UNKNOWN


def _seed_agreed(v: Value, given: bool) -> bool:
    if not given:
        return False
    if isinstance(v, _PerProcess):
        return False
    return isinstance(v, (IntVal, ConstVal)) and not (isinstance(v, ConstVal) and v.value is None)


@handles("random.seed", "np.random.seed")
def _seed(an: Analyzer, call: Call, node: cst.Call, scope: Scope) -> Value:
    which = "random" if an.current_name == "random.seed" else "numpy"
    seed_v = call.arg(0, "a" if which == "random" else "seed")
    agreed = _seed_agreed(seed_v, call.given(0, "a" if which == "random" else "seed"))
    if isinstance(seed_v, Value) and seed_v is UNKNOWN:
        an.rng_seeded[which] = None  # unknown seed: neither agreed nor proven per-process
        return ConstVal(None)
    an.rng_seeded[which] = agreed
    return ConstVal(None)


@handles("np.random.default_rng", "random.Random")
def _rng(an: Analyzer, call: Call, node: cst.Call, scope: Scope) -> Value:
    seed_v = call.arg(0, "seed" if "default_rng" in (an.current_name) else "x")
    given = call.given(0, "seed") or call.given(0, "x")
    if given and seed_v is UNKNOWN:
        return UNKNOWN  # a seed we cannot see may be shared by all processes
    return RngVal(agreed=_seed_agreed(seed_v, given), desc=an.ctx.code(node, 40))


@handles("random.SystemRandom")
def _sysrng(an: Analyzer, call: Call, node: cst.Call, scope: Scope) -> Value:
    return RngVal(agreed=False, desc=an.ctx.code(node, 40))


@handles("jax.sharding.Mesh")
def _mesh(an: Analyzer, call: Call, node: cst.Call, scope: Scope) -> Value:
    devs = call.arg(0, "devices")
    if _ordered(devs):
        f = devs.fn
        d = devs.derive(lambda m: f(m).as_array(), devs.desc)
        d.reorders, d.shuffle, d.from_mesh, d.fresh = devs.reorders, devs.shuffle, devs.from_mesh, devs.fresh
    else:
        d = DevVal(fn=undecidable, desc=an.ctx.code(call.arg_node(0, "devices") or node, 40), node=node)
        d.fresh = False
    mesh = MeshVal(devices=d, node=node, ctor="Mesh", sizes=d.sizes, name=an.name_for(node))
    an.ctx.mesh_roots.add(id(d.fn))
    an.emit(MeshBuilt(node=node, ctx=an.ctx, mesh=mesh))
    return mesh


def _physical(an: Analyzer, call: Call, node: cst.Call, shape_v: Value, devs: Value,
              given: bool, exact: bool = False) -> DevVal:
    """The device array of make_mesh/create_device_mesh: natural order unless given devices.

    With explicit devices the order is the platform's (TPU: physical coordinates, GPU:
    sorted by id, CPU: as given), so a reordered input gives an order the linter does
    not know.
    """
    fns = _shape_fns(shape_v)
    sizes = _literal_sizes(shape_v)
    if fns is None:
        return DevVal(fn=undecidable, desc=an.ctx.code(node, 60), node=node)
    if given:
        if not (_ordered(devs)):
            return DevVal(fn=undecidable, desc=an.ctx.code(node, 60), node=node, fresh=False)
        src = devs.fn
        sizes += devs.sizes
    else:
        src = dv.natural

    def build(m: dv.Model) -> dv.DevArr:
        shape = [g(m) for g in fns]
        arr = src(m).ravel()
        total = math.prod(shape)
        if total > len(arr.flat) or (exact and total != len(arr.flat)):
            # make_mesh takes the first prod(shape) devices; create_device_mesh needs all.
            raise dv.ModelError("the mesh shape does not fit the devices")
        ids = arr.flat[:total]
        if given and list(ids) != sorted(ids):
            raise dv.ModelError("platform-dependent device order")
        return dv.DevArr(ids, tuple(shape), False)

    desc = an.ctx.code(node, 60)
    fresh = devs.fresh if isinstance(devs, DevVal) else True
    platforms = devs.platforms if isinstance(devs, DevVal) else frozenset({"default"})
    return DevVal(fn=build, desc=desc, node=node, fresh=fresh, sizes=sizes, platforms=platforms)


@handles("jax.make_mesh")
def _make_mesh(an: Analyzer, call: Call, node: cst.Call, scope: Scope) -> Value:
    shape_v = call.arg(0, "axis_shapes")
    given = call.given(-1, "devices")
    d = _physical(an, call, node, shape_v, call.arg(-1, "devices"), given)
    mesh = MeshVal(devices=d, node=node, ctor="jax.make_mesh", sizes=d.sizes, name=an.name_for(node))
    an.ctx.mesh_roots.add(id(d.fn))
    an.emit(MeshBuilt(node=node, ctx=an.ctx, mesh=mesh))
    return mesh


@handles("create_device_mesh")
def _create_device_mesh(an: Analyzer, call: Call, node: cst.Call, scope: Scope) -> Value:
    shape_v = call.arg(0, "mesh_shape")
    given = call.given(1, "devices")
    if call.given(2, "contiguous_submeshes"):
        return DevVal(fn=undecidable, desc=an.ctx.code(node, 60), node=node)
    return _physical(an, call, node, shape_v, call.arg(1, "devices"), given, exact=True)


@handles("create_hybrid_device_mesh")
def _create_hybrid(an: Analyzer, call: Call, node: cst.Call, scope: Scope) -> Value:
    return DevVal(fn=undecidable, desc=an.ctx.code(node, 60), node=node)


@handles("jax.sharding.PartitionSpec")
def _pspec(an: Analyzer, call: Call, node: cst.Call, scope: Scope) -> Value:
    return SpecVal(node, an.ctx.code(node, 60))


@handles("jax.sharding.NamedSharding")
def _named_sharding(an: Analyzer, call: Call, node: cst.Call, scope: Scope) -> Value:
    first = call.arg(0, "mesh")
    first_node = call.arg_node(0, "mesh")
    spec = call.arg(1, "spec")
    if first_node is not None:
        an.emit(ShardingBuilt(node=node, ctx=an.ctx, first=first, first_node=first_node,
                              spec_node=call.arg_node(1, "spec")))
    if isinstance(first, MeshVal):
        return ShardingVal(node, mesh=first, spec=spec if isinstance(spec, SpecVal) else None)
    return UNKNOWN


@handles("jax.sharding.SingleDeviceSharding")
def _single_sharding(an: Analyzer, call: Call, node: cst.Call, scope: Scope) -> Value:
    d = call.arg(0, "device")
    if isinstance(d, DevVal) and d.single:
        return ShardingVal(node, device=d)
    return UNKNOWN


@handles("jax.set_mesh")
def _set_mesh(an: Analyzer, call: Call, node: cst.Call, scope: Scope) -> Value:
    m = call.arg(0, "mesh")
    if not isinstance(m, MeshVal):
        an.context_mesh = UNKNOWN
        return UNKNOWN
    # As a statement, set_mesh sets the mesh for what follows; `with` narrows it again.
    an.context_mesh = m
    return MeshContextVal(m)


def _as_target(an: Analyzer, v: Value, node: Optional[cst.CSTNode]) -> Value:
    """A device_put target: a bare PartitionSpec means the context mesh."""
    if isinstance(v, SpecVal) and isinstance(an.context_mesh, MeshVal):
        return ShardingVal(node, mesh=an.context_mesh, spec=v, from_context=True)
    if isinstance(v, SeqVal):
        return SeqVal(tuple(_as_target(an, i, node) for i in v.items), v.kind)
    return v


@handles("jax.device_put")
def _device_put(an: Analyzer, call: Call, node: cst.Call, scope: Scope) -> Value:
    x = call.arg(0, "x")
    if not call.given(1, "device"):
        return UNKNOWN  # uncommitted: no origin
    target = _as_target(an, call.arg(1, "device"), call.arg_node(1, "device"))
    an._transfer("device_put", node, x, target, call.arg_node(0, "x"), call.arg_node(1, "device"),
                 an.ctx.code(node.func, 40))
    return _placed(x, target, node)


def _array_on(sharding: Value, node: cst.CSTNode) -> Value:
    """The array a call makes on ``sharding``, when its mesh is known."""
    if isinstance(sharding, ShardingVal) and sharding.mesh is not None:
        return ArrayVal(sharding, node)
    return UNKNOWN


def _placed(x: Value, target: Value, node: cst.Call) -> Value:
    if isinstance(target, ShardingVal) and target.mesh is not None:
        if isinstance(x, SeqVal):
            return SeqVal(tuple(_placed(i, target, node) for i in x.items), x.kind, x.keys)
        return ArrayVal(target, node)
    if isinstance(target, SeqVal) and isinstance(x, SeqVal) and len(x.items) == len(target.items):
        return SeqVal(tuple(_placed(i, t, node) for i, t in zip(x.items, target.items)), x.kind)
    return UNKNOWN


@handles("jax.make_array_from_callback", "jax.make_array_from_single_device_arrays")
def _from_callback(an: Analyzer, call: Call, node: cst.Call, scope: Scope) -> Value:
    s = _as_target(an, call.arg(1, "sharding"), call.arg_node(1, "sharding"))
    return _array_on(s, node)


@handles("jax.make_array_from_process_local_data")
def _from_local(an: Analyzer, call: Call, node: cst.Call, scope: Scope) -> Value:
    s = _as_target(an, call.arg(0, "sharding"), call.arg_node(0, "sharding"))
    has_global = call.given(2, "global_shape")
    an._transfer("local_data", node, call.arg(1, "local_data"), s, call.arg_node(1, "local_data"),
                 call.arg_node(0, "sharding"), an.ctx.code(node.func, 50), has_global_shape=has_global)
    return _array_on(s, node)


@handles("host_local_array_to_global_array")
def _host_to_global(an: Analyzer, call: Call, node: cst.Call, scope: Scope) -> Value:
    x = call.arg(0, "local_inputs")
    mesh = call.arg(1, "global_mesh")
    spec = call.arg(2, "pspecs")
    an._transfer("host_to_global", node, x, mesh, call.arg_node(0, "local_inputs"),
                 call.arg_node(1, "global_mesh"), an.ctx.code(node.func, 50))
    if isinstance(mesh, MeshVal):
        sharding = ShardingVal(node, mesh=mesh, spec=spec if isinstance(spec, SpecVal) else None)
        if isinstance(x, SeqVal):
            return SeqVal(tuple(ArrayVal(sharding, node) for _ in x.items), x.kind)
        return ArrayVal(sharding, node)
    return UNKNOWN


@handles("jax.jit")
def _jit(an: Analyzer, call: Call, node: cst.Call, scope: Scope) -> Value:
    ins = _as_target(an, call.arg(-1, "in_shardings"), call.arg_node(-1, "in_shardings"))
    outs = _as_target(an, call.arg(-1, "out_shardings"), call.arg_node(-1, "out_shardings"))
    return JitVal(node, ins, outs)


@handles("functools.partial")
def _partial(an: Analyzer, call: Call, node: cst.Call, scope: Scope) -> Value:
    if not call.positional:
        return UNKNOWN
    func = call.positional[0][0]
    kwargs = {k: _as_target(an, v, a.value) for k, (v, a) in call.keywords.items()}
    return PartialVal(func, tuple(v for v, _ in call.positional[1:]), kwargs)


@handles("jax.lax.with_sharding_constraint", "jax.sharding.reshard")
def _constraint(an: Analyzer, call: Call, node: cst.Call, scope: Scope) -> Value:
    x = call.arg(0, "x")
    target = _as_target(an, call.arg(1, "shardings"), call.arg_node(1, "shardings"))
    if not call.given(1, "shardings"):
        target = _as_target(an, call.arg(1, "out_shardings"), call.arg_node(1, "out_shardings"))
    kind: TransferKind = "reshard" if an.current_name == "jax.sharding.reshard" \
        else "constraint"
    an._transfer(kind, node, x, target, call.arg_node(0, "x"), call.arg_node(1, "shardings"),
                 an.ctx.code(node.func, 50))
    return _array_on(target, node)


@handles("jax.tree.map")
def _tree_map(an: Analyzer, call: Call, node: cst.Call, scope: Scope) -> Value:
    f = call.arg(0, "f")
    tree = call.arg(1, "tree")
    if not isinstance(f, FuncVal) or len(call.positional) > 2:
        return UNKNOWN
    ls = leaves(tree)
    if not ls or not all(isinstance(leaf, ArrayVal) for leaf in ls):
        return UNKNOWN
    first = ls[0]
    assert isinstance(first, ArrayVal)
    if first.mesh is None or not all(
            leaf.mesh is not None  # type: ignore[union-attr]
            and an.ctx.compare(leaf.mesh, first.mesh) == "same"  # type: ignore[union-attr]
            for leaf in ls):
        return UNKNOWN
    result = an.call_with_leaf(f, first)
    if isinstance(tree, SeqVal):
        return SeqVal(tuple(result for _ in tree.items), tree.kind, tree.keys)
    return result


# ------------------------------------------------------------------------------------
def _dotted(node: cst.CSTNode) -> Optional[str]:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        head = _dotted(node.value)
        return f"{head}.{node.attr.value}" if head else None
    return None


def _ascending(fns: Sequence[Optional[Callable[[dv.Model], int]]]) -> bool:
    """Constant indices in increasing order (a subset in natural order)."""
    try:
        vals = [f(dv.Model(64, 4, 0)) for f in fns]  # type: ignore[misc]
    except Exception:  # noqa: BLE001
        return False
    return vals == sorted(vals)


def _expects_error(expr: cst.BaseExpression) -> bool:
    if not isinstance(expr, cst.Call):
        return False
    f = expr.func
    name = f.attr.value if isinstance(f, cst.Attribute) else f.value if isinstance(f, cst.Name) else ""
    return name in ("raises", "assertRaises", "assertRaisesRegex", "assertRaisesRegexp", "assertWarns",
                    "assertWarnsRegex", "expectedFailure")


def _int_arith(op: cst.CSTNode, a: IntVal, b: IntVal) -> Value:
    f, g = a.fn, b.fn
    la, lb = a.literal, b.literal
    table: dict[type, Callable[[int, int], int]] = {
        cst.Add: lambda x, y: x + y, cst.AddAssign: lambda x, y: x + y,
        cst.Subtract: lambda x, y: x - y, cst.SubtractAssign: lambda x, y: x - y,
        cst.Multiply: lambda x, y: x * y, cst.MultiplyAssign: lambda x, y: x * y,
        cst.FloorDivide: lambda x, y: x // y, cst.FloorDivideAssign: lambda x, y: x // y,
        cst.Modulo: lambda x, y: x % y,
    }
    fn = table.get(type(op))
    if fn is None:
        return UNKNOWN
    lit = None
    if la is not None and lb is not None:
        try:
            lit = fn(la, lb)
        except ZeroDivisionError:
            return UNKNOWN
    per_process = isinstance(a, _PerProcess) or isinstance(b, _PerProcess)
    if per_process:
        return _PerProcess(lambda m: fn(f(m), g(m)))
    return IntVal(lambda m: fn(f(m), g(m)), literal=lit)


def _squeeze(a: dv.DevArr) -> dv.DevArr:
    shape = tuple(d for d in a.shape if d != 1) or (1,)
    return dv.DevArr(a.flat, shape, False)


def _row_or_device(single: DevVal, base: DevVal) -> DevVal:
    """``grid[0]`` is a row of a 2-D grid but a device of a 1-D list."""
    f = base.fn
    g = single.fn

    def probe() -> Optional[bool]:
        seen: set[bool] = set()
        for m in dv.models_for(base.sizes):
            try:
                seen.add(f(m).ndim == 1)
            except Exception:  # noqa: BLE001
                continue
        return seen.pop() if len(seen) == 1 else None

    one_d = probe()
    if one_d is False:
        return base.derive(g, single.desc)
    if one_d is None:
        single.fn = undecidable
    return single


def _mesh_label(mesh: MeshVal) -> str:
    return mesh.name or "mesh"


def _label(v: ShardingVal | ArrayVal) -> str:
    return v.name or "x"


def iter_events(ctx: FileContext) -> Iterable[Event]:
    out: list[Event] = []
    Analyzer(ctx, out.append).run()
    return out
