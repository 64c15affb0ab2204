"""Comprehensions and the names a loop binds: what each element of what is iterated is.

A list, set or dict comprehension runs where it stands (its scope reads the enclosing one
at its current values, scope.py); a generator expression runs when consumed, and reads
as a nested function does. A loop variable, of a ``for`` statement (flow.py) or clause,
takes one value that stands for every element where there is one (``valueops.each``);
a comprehension over sequences the analysis knows exactly runs once per element
(``_each_run``, unroll.py), as a ``for`` statement does (flow.py).
Indexing a device list by the loop variable (``[devs[i] for i in (0, 1, 4, 5)]``) picks
devices.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Callable, Optional, cast

from . import devices as dv
from .models import commitments, device_ids, id_filters, iteration, placement
from .reasons import CONTAINER
from . import unroll
from .mutation import hashable, stored
from .expressions import truth
from .interpreter_base import InterpreterBase
from .scope import Scope, names_in_target
from .tree import arg_value, call_args, subscript_items
from .valueops import NO_KEY, ascending, const_int, each, int_fn, ordered
from .values import (
    UNKNOWN, ConstVal, DevVal, GenVal, HostVal, IntVal, QualVal, RangeVal, SeqVal, Unknown, Value, is_unknown, undecidable, unknown, unknown_from,
)

if TYPE_CHECKING:
    from .interpreter import Analyzer


class Comprehensions(InterpreterBase):
    """The interpreter's comprehensions and loop targets."""

    def comprehension(self, node: ast.ListComp | ast.GeneratorExp | ast.SetComp, scope: Scope,
                      consumed: bool = False) -> Value:
        """``consumed``: a generator expression a builtin iterates to its end where it
        stands (calls._args): it runs there, and gives the list its elements make."""
        clauses = node.generators
        comp = clauses[0]
        eager = consumed or type(node) is not ast.GeneratorExp
        listed = consumed or type(node) is ast.ListComp
        # A generator expression runs when it is consumed, maybe after the names it
        # reads are bound again: it sees them as a nested function does.
        first = self.eval(comp.iter, scope)
        runs = self._each_run(clauses, scope, first, [node.elt]) if eager else None
        if runs is not None:
            picked = self._picked_devices(node, clauses, first, scope) or \
                device_ids.ids_of_devices(node, first, cast("Analyzer", self))
            if picked is not None or not listed:
                return picked or UNKNOWN
            return SeqVal(tuple(v for v, in runs), "list")
        inner, it = self._for_clauses(clauses, scope, eager=eager, first=first)
        made = self.token
        elt = self.eval(node.elt, inner)
        picked = self._picked_devices(node, clauses, it, scope) or \
            device_ids.ids_of_devices(node, it, cast("Analyzer", self))
        if picked is not None:
            return picked
        if ordered(it) and len(clauses) == 1 \
                and type(comp.target) is ast.Name and type(node.elt) is ast.Name \
                and node.elt.id == comp.target.id and type(node) is not ast.SetComp:
            if comp.ifs:
                # A filter by id keeps the devices the platform's ids pass; any other
                # filter keeps an unknown subset.
                by_id = id_filters.filter_by_id(node, it, scope, cast("Analyzer", self)) \
                    if eager and type(node) is not ast.SetComp else None
                if by_id is not None:
                    return by_id
                return DevVal(fn=undecidable, desc=self.ctx.code(node, 60), node=node,
                              fresh=it.fresh, from_mesh=it.from_mesh)
            it_fn = it.fn
            return it.derive(lambda m: it_fn(m).ravel().as_list(), it.desc)
        built = self._each_element(clauses, it, scope, [elt], [node.elt]) \
            if listed and self.token == made else None
        return SeqVal(tuple(v for v, in built), "list") if built is not None else UNKNOWN

    def _each_element(self, clauses: list[ast.comprehension], it: Value, scope: Scope,
                      parts: list[Value], exprs: list[ast.expr]) -> Optional[list[tuple[Value, ...]]]:
        """What a comprehension that runs where it stands builds, element by element,
        when the one run of its element (``parts``, of the expressions ``exprs``) stands
        for every one: one ``for`` clause and no condition over a sequence of known
        length (a list, tuple or dict the analysis holds, ``range`` of literal bounds);
        an element that reads the target only where the target took one value that
        stands for every element (``valueops.each``): otherwise what each run gives may
        differ (``Mesh(devs[4 * i:4 * i + 4], ...)``). A value the analysis does not know
        is each element's own unknown. None otherwise."""
        if len(clauses) != 1 or clauses[0].ifs or clauses[0].is_async:
            return None
        targets = set(names_in_target(clauses[0].target))
        read = {n.id for e in exprs for n in ast.walk(e) if type(n) is ast.Name and n.id in targets}
        if read and not _stands_for_each(clauses[0].target, it, read):
            return None
        count = _length(clauses[0].iter, it, scope, self)
        if count is None:
            return None
        return [tuple(unknown_from(p) if is_unknown(p) else p for p in parts) for _ in range(count)]

    def _picked_devices(self, node: ast.AST, clauses: list[ast.comprehension], it: Value,
                        scope: Scope) -> Optional[Value]:
        """``[devs[i] for i in (0, 1, 4, 5)]`` or ``... for i in range(a, b)``: devices by index."""
        elt = getattr(node, "elt", None)
        comp = clauses[0]
        if comp.ifs or len(clauses) > 1 or type(comp.target) is not ast.Name or type(elt) is not ast.Subscript:
            return None
        items = subscript_items(elt)
        if len(items) != 1 or type(items[0]) is ast.Slice:
            return None
        index = items[0].value if type(items[0]) is ast.Starred else items[0]
        if not (type(index) is ast.Name and index.id == comp.target.id):
            return None
        base = self.eval(elt.value, scope)
        if not (ordered(base)):
            return None
        fns: Optional[list[Callable[[dv.Model], int]]] = None
        if isinstance(it, RangeVal):
            # ``for i in r`` of a range the analysis knows (``CONFIG.devices``,
            # ``range(*bounds)``): the rows at its ints, on each topology.
            def take_ints(m: dv.Model, f: Callable[[dv.Model], dv.DevArr] = base.fn, r: RangeVal = it) -> dv.DevArr:
                rows = [f(m).index0(i).flat for i in r.ints(m)]
                if any(len(row) != 1 for row in rows):
                    raise dv.ModelError("picking rows of a grid")
                return dv.DevArr.of([row[0] for row in rows])
            out = base.derive(take_ints, self.ctx.code(node, 60))
            if it.step.literal is None or it.step.literal < 0:
                out.reorders = base.reorders + ("picked by index",)
            return out
        if isinstance(it, SeqVal):
            fns = [int_fn(v) for v in it.items]  # type: ignore[misc]  # (a None is refused below)
        elif type(comp.iter) is ast.Call and type(comp.iter.func) is ast.Name \
                and comp.iter.func.id == "range" and _builtin_range(scope.lookup("range")) \
                and 1 <= len(call_args(comp.iter)) <= 2:
            bounds = [self.eval(arg_value(a), scope) for a in call_args(comp.iter)]
            first, last = bounds[0], bounds[-1]
            if isinstance(first, IntVal) and isinstance(last, IntVal):  # every bound (one or two)
                lo = first.fn if len(bounds) == 2 else (lambda _m: 0)
                hi = last.fn

                def take_range(m: dv.Model, f=base.fn, lo=lo, hi=hi) -> dv.DevArr:
                    arr = f(m)
                    return dv.DevArr.of([arr.index0(i).flat[0] for i in range(lo(m), hi(m))])
                return base.derive(take_range, self.ctx.code(node, 60))
        if fns is None or any(f is None for f in fns):
            return None
        f = base.fn

        def take(m: dv.Model) -> dv.DevArr:
            arr = f(m)
            ids = [arr.index0(g(m)).flat for g in fns]
            if any(len(i) != 1 for i in ids):
                raise dv.ModelError("picking rows of a grid")
            return dv.DevArr.of([i[0] for i in ids])
        out = base.derive(take, self.ctx.code(node, 60))
        out.reorders = base.reorders + (("picked by index",) if not ascending(fns) else ())
        return out

    eval_ListComp = comprehension
    eval_GeneratorExp = comprehension
    eval_SetComp = comprehension

    def eval_DictComp(self, node: ast.DictComp, scope: Scope) -> Value:
        """``{k: jax.device_put(v, s) for k, v in params.items()}``: runs where it stands;
        a dict with a value for each element (``_each_element``), under the keys the
        iterated elements hold where the key is the loop's target (``k`` of a known
        dict's items, a tuple of constants), else keys the analysis does not know."""
        first = self.eval(node.generators[0].iter, scope)
        runs = self._each_run(node.generators, scope, first, [node.key, node.value])
        if runs is not None:
            return _dict_of(runs)
        inner, it = self._for_clauses(node.generators, scope, eager=True, first=first)
        made = self.token
        self.eval(node.key, inner)
        value = self.eval(node.value, inner)
        built = self._each_element(node.generators, it, scope, [value], [node.value]) \
            if self.token == made else None
        if built is None:
            return UNKNOWN
        keys = _keys(node.key, node.generators[0].target, it)
        return SeqVal(tuple(v for v, in built), "dict", keys if keys is not None else tuple(NO_KEY for _ in built))

    def _each_run(self, clauses: list[ast.comprehension], scope: Scope, first: Value,
                  exprs: list[ast.expr]) -> Optional[list[tuple[Value, ...]]]:
        """A comprehension that runs where it stands, run once per element as Python
        runs it (unroll.py): each ``for`` clause over a sequence the analysis knows
        exactly, each condition one whose truth it knows for that element; the values of
        ``exprs`` (the element, or a dict's key and value) for every element kept, in
        order, each run's events emitted. None: not run so (runs made before the
        analysis found it could not go on stay: each was one that Python makes)."""
        out: list[tuple[Value, ...]] = []
        return out if self._clause_runs(clauses, 0, scope, first, exprs, out) else None

    def _clause_runs(self, clauses: list[ast.comprehension], i: int, scope: Scope, it: Optional[Value],
                     exprs: list[ast.expr], out: list[tuple[Value, ...]]) -> bool:
        clause = clauses[i]
        if clause.is_async:
            return False
        if it is None:
            it = self.eval(clause.iter, scope)
        planned = unroll.plan(self, clause.iter, it, scope)
        if planned is None:
            return False
        elements, weight = planned
        seen = unroll.sources(self, clause.iter, it, scope)
        outer, self.unroll_weight = self.unroll_weight, weight
        try:
            for element in elements:
                if unroll.changed(seen):
                    return False
                self.unroll_runs += 1
                inner = Scope(scope, "comprehension", {n: 2 for n in names_in_target(clause.target)})
                self.bind(clause.target, element, inner)
                kept = [truth(self.eval(cond, inner)) for cond in clause.ifs]
                if None in kept:
                    return False
                if not all(kept):
                    continue
                if i + 1 < len(clauses):
                    if not self._clause_runs(clauses, i + 1, inner, None, exprs, out):
                        return False
                else:
                    out.append(tuple(self.eval(e, inner) for e in exprs))
            return True
        finally:
            self.unroll_weight = outer

    def _for_clauses(self, clauses: list[ast.comprehension], scope: Scope,
                     eager: bool = False, first: Optional[Value] = None) -> tuple[Scope, Value]:
        """The scope a comprehension's element sees, after each of its ``for`` clauses
        (and their conditions); and what the first one iterates over (``first``: its
        value, evaluated already). ``eager``: it runs where it stands (scope.py)."""
        inner = scope
        for i, clause in enumerate(clauses):
            it = first if i == 0 and first is not None else self.eval(clause.iter, inner)
            if i == 0:
                first = it
            inner = Scope(inner, "comprehension" if eager else "function",
                          {n: 2 for n in names_in_target(clause.target)})
            self.bind_loop_target(clause.target, it, clause.iter, inner, UNKNOWN)
            self.undecided += 1  # not run per element: maybe for none (functions.relayed)
            for cond in clause.ifs:
                self.eval(cond, inner)
                self.undecided += 1  # the element may run for none of them
        return inner, first if first is not None else UNKNOWN

    def bind_loop_target(self, target: ast.expr, it: Value, iter_node: ast.expr,
                         scope: Scope, default: Value) -> None:
        """Bind the target of a ``for`` clause or statement to what iterating ``it``
        gives, where one value stands for every element (``valueops.each``), NumPy data
        is iterated (a row, an int of a range), a list of device ids or a shard list is;
        ``default`` otherwise. A tuple target takes each position (``_unpack_elements``)."""
        if type(target) is ast.Tuple or type(target) is ast.List:
            if isinstance(it, GenVal):
                # for x, y in batches(): what every element is, unpacked as an assignment
                # unpacks it (Python raises where the lengths differ)
                self.bind(target, iteration.taken(cast("Analyzer", self), it, self.ctx.code(iter_node, 40)), scope)
                return
            self._unpack_elements(target, it, scope)
            return
        if type(target) is not ast.Name:
            return
        element: Optional[Value] = None
        if isinstance(it, SeqVal) and it.items and (one := each(it.items)) is not None:
            element = one
        elif isinstance(it, GenVal):
            # for b in batches(): what the generator yields
            element = iteration.taken(cast("Analyzer", self), it, self.ctx.code(iter_node, 40))
        elif isinstance(it, HostVal):
            element = placement.host_element(cast("Analyzer", self), it, iter_node)
        else:
            element = device_ids.element(it)
            if element is None:
                element = commitments.element(it, iter_node)
        scope.vars[target.id] = default if element is None else element

    def _unpack_elements(self, target: ast.Tuple | ast.List, it: Value, inner: Scope) -> None:
        """``for k, v in pairs``: each name takes what that position holds in every
        element of a known sequence, where that stands for all of them (``valueops.each``);
        otherwise a value the analysis does not know."""
        names = [el.value if type(el) is ast.Starred else el for el in target.elts]
        rows = it.items if isinstance(it, SeqVal) else ()
        culprit = it.culprit if isinstance(it, Unknown) else ""  # the container's own
        for i, name_node in enumerate(names):
            if type(name_node) not in (ast.Name, ast.Tuple, ast.List):
                continue
            column = [r.items[i] for r in rows if isinstance(r, SeqVal) and len(r.items) == len(names)]
            value: Value = unknown(CONTAINER, culprit)
            one = each(column) if column and len(column) == len(rows) else None
            if one is not None:
                value = one
            if type(name_node) is ast.Name:
                inner.vars[name_node.id] = value
            else:
                self.bind(name_node, value, inner)  # for i, (x, y) in ...: that position unpacked


def _stands_for_each(target: ast.expr, it: Value, read: set[str]) -> bool:
    """The names ``read`` of the target of a ``for`` over ``it`` each take one value
    standing for every element: the name, or those positions of a tuple of names
    (``bind_loop_target``)."""
    if not isinstance(it, SeqVal) or not it.items:
        return False
    if type(target) is ast.Name:
        return each(it.items) is not None
    if type(target) is not ast.Tuple or not all(type(e) is ast.Name for e in target.elts):
        return False
    n = len(target.elts)
    rows = [r.items for r in it.items if isinstance(r, SeqVal) and len(r.items) == n]
    return len(rows) == len(it.items) and all(
        each([r[i] for r in rows]) is not None for i, e in enumerate(target.elts)
        if e.id in read)  # type: ignore[attr-defined]  # (names: checked above)


def _length(iter_node: ast.expr, it: Value, scope: Scope, an: InterpreterBase) -> Optional[int]:
    """How many elements iterating ``it`` gives, where the analysis knows: a sequence it
    holds, or ``range`` of literal bounds."""
    if isinstance(it, SeqVal):
        return None if it.changed else len(it.items)
    if type(iter_node) is ast.Call and type(iter_node.func) is ast.Name and iter_node.func.id == "range" \
            and _builtin_range(scope.lookup("range")) and 1 <= len(iter_node.args) <= 2 and not iter_node.keywords:
        bounds = [const_int(an.eval(a, scope)) for a in iter_node.args]
        if all(b is not None for b in bounds):
            lo, hi = (0, bounds[0]) if len(bounds) == 1 else (bounds[0], bounds[1])
            return max(0, hi - lo)  # type: ignore[operator]  # (ints: checked above)
    return None


def _keys(key: ast.expr, target: ast.expr, it: Value) -> Optional[tuple[object, ...]]:
    """The constant keys of a dict comprehension whose key is its target (``k``), or the
    first name of a tuple target (``k`` of ``k, v``), over elements the analysis holds."""
    if type(key) is not ast.Name or not isinstance(it, SeqVal):
        return None
    if type(target) is ast.Name and target.id == key.id:
        column = list(it.items)
    elif type(target) is ast.Tuple and target.elts and type(target.elts[0]) is ast.Name \
            and target.elts[0].id == key.id and all(type(e) is ast.Name for e in target.elts):
        column = [r.items[0] if isinstance(r, SeqVal) and len(r.items) == len(target.elts) else UNKNOWN
                  for r in it.items]
    else:
        return None
    if not all(isinstance(c, ConstVal) for c in column) or it.kind == "dict":
        return None
    keys = tuple(c.value for c in column)  # type: ignore[attr-defined]  # (ConstVals: checked above)
    return keys if len(set(map(repr, keys))) == len(keys) else None


def _dict_of(runs: list[tuple[Value, ...]]) -> Value:
    """The dict a dict comprehension builds from its (key, value) runs: under constant
    keys, a key given again keeps its place and takes the later value, as in Python;
    with a key the analysis does not know, one item per run under unknown keys."""
    if any(not isinstance(k, ConstVal) or not hashable(k.value) for k, _ in runs):
        return SeqVal(tuple(v for _, v in runs), "dict", tuple(NO_KEY for _ in runs))
    built: Optional[SeqVal] = SeqVal((), "dict", ())
    for k, v in runs:
        # As d[k] = v does (mutation.stored); None for 1 and True, 1.0 and 1 (one key of
        # the first one's type).
        built = stored(built, k, v) if built is not None else None
    return built if built is not None else UNKNOWN


def _builtin_range(v: Value) -> bool:
    """``range`` is Python's own here (not a name the file binds to something else)."""
    return isinstance(v, QualVal) and v.qual == "builtins.range" or is_unknown(v)
