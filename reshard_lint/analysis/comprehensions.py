"""Comprehensions and the names a loop binds: what each element of what is iterated is.

A list, set or dict comprehension runs where it stands (its scope reads the enclosing one
at its current values, scope.py); a generator expression runs when consumed, and reads
as a nested function does. A loop variable, of a ``for`` statement (flow.py) or clause,
takes one value that stands for every element where there is one (``valueops.each``).
Indexing a device list by the loop variable (``[devs[i] for i in (0, 1, 4, 5)]``) picks
devices.
"""

from __future__ import annotations

from typing import Callable, Optional

from ..syntax import nodes as cst

from . import devices as dv
from .models import commitments, device_ids, placement
from .reasons import CONTAINER
from .scope import Scope, names_in_target
from .valueops import ascending, each, int_fn, ordered
from .values import UNKNOWN, DevVal, HostVal, IntVal, QualVal, SeqVal, Value, is_unknown, undecidable, unknown


class Comprehensions:
    """The interpreter's comprehensions and loop targets."""

    def _comprehension(self, node: cst.ListComp | cst.GeneratorExp | cst.SetComp, scope: Scope) -> Value:
        comp = node.for_in
        # A generator expression runs when it is consumed, maybe after the names it
        # reads are bound again: it sees them as a nested function does.
        inner, it = self._for_clauses(comp, scope, eager=not isinstance(node, cst.GeneratorExp))
        self.eval(node.elt, inner)
        picked = self._picked_devices(node, comp, it, scope) or \
            device_ids.ids_of_devices(node, it, self)  # type: ignore[arg-type]
        if picked is not None:
            return picked
        if ordered(it) and comp.inner_for_in is None \
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
        if not (ordered(base)):
            return None
        fns: Optional[list[Callable[[dv.Model], int]]] = None
        if isinstance(it, SeqVal):
            fns = [int_fn(v) for v in it.items]  # type: ignore[misc]
        elif isinstance(comp.iter, cst.Call) and isinstance(comp.iter.func, cst.Name) \
                and comp.iter.func.value == "range" and _builtin_range(scope.lookup("range")) \
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
        out.reorders = base.reorders + (("picked by index",) if not ascending(fns) else ())
        return out

    eval_ListComp = _comprehension
    eval_GeneratorExp = _comprehension
    eval_SetComp = _comprehension

    def eval_DictComp(self, node: cst.DictComp, scope: Scope) -> Value:
        """``{k: jax.device_put(v, s) for k, v in params.items()}``: runs where it stands."""
        inner, _ = self._for_clauses(node.for_in, scope, eager=True)
        self.eval(node.key, inner)
        self.eval(node.value, inner)
        return UNKNOWN

    def _for_clauses(self, comp: cst.CompFor, scope: Scope, eager: bool = False) -> tuple[Scope, Value]:
        """The scope a comprehension's element sees, after each of its ``for`` clauses
        (and their conditions); and what the first one iterates over. ``eager``: it runs
        where it stands (scope.py)."""
        first: Value = UNKNOWN
        inner = scope
        clause: Optional[cst.CompFor] = comp
        while clause is not None:
            it = self.eval(clause.iter, inner)
            if clause is comp:
                first = it
            inner = Scope(inner, "comprehension" if eager else "function",
                          {n: 2 for n in names_in_target(clause.target)})
            self.bind_loop_target(clause.target, it, clause.iter, inner, UNKNOWN)
            for cond in clause.ifs:
                self.eval(cond.test, inner)
            clause = clause.inner_for_in
        return inner, first

    def bind_loop_target(self, target: cst.BaseExpression, it: Value, iter_node: cst.BaseExpression,
                         scope: Scope, default: Value) -> None:
        """Bind the target of a ``for`` clause or statement to what iterating ``it``
        gives, where one value stands for every element (``valueops.each``), NumPy data
        is iterated (a row, an int of a range), a list of device ids or a shard list is;
        ``default`` otherwise. A tuple target takes each position (``_unpack_elements``)."""
        if isinstance(target, (cst.Tuple, cst.List)):
            self._unpack_elements(target, it, scope)
            return
        if not isinstance(target, cst.Name):
            return
        element: Optional[Value] = None
        if isinstance(it, SeqVal) and it.items and (one := each(it.items)) is not None:
            element = one
        elif isinstance(it, HostVal):
            element = placement.host_element(self, it, iter_node)
        else:
            element = device_ids.element(it)
            if element is None:
                element = commitments.element(it, iter_node)
        scope.vars[target.value] = default if element is None else element

    def _unpack_elements(self, target: cst.Tuple | cst.List, it: Value, inner: Scope) -> None:
        """``for k, v in pairs``: each name takes what that position holds in every
        element of a known sequence, where that stands for all of them (``valueops.each``);
        otherwise a value the analysis does not know."""
        names = [el.value for el in target.elements]
        rows = it.items if isinstance(it, SeqVal) else ()
        for i, name_node in enumerate(names):
            if not isinstance(name_node, cst.Name):
                continue
            column = [r.items[i] for r in rows if isinstance(r, SeqVal) and len(r.items) == len(names)]
            value: Value = unknown(CONTAINER)
            one = each(column) if column and len(column) == len(rows) else None
            if one is not None:
                value = one
            inner.vars[name_node.value] = value


def _builtin_range(v: Value) -> bool:
    """``range`` is Python's own here (not a name the file binds to something else)."""
    return isinstance(v, QualVal) and v.qual == "builtins.range" or is_unknown(v)
