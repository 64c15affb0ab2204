"""Device lists filtered by id: ``[d for d in devs if d.id % 2 == 0]``.

Which devices such a filter keeps depends on how the job numbers them (RUNTIME-FACTS.md,
docs/platforms.md): TPU and GPU ids run 0 ... N-1 over the job (multi-host TPU ids follow
the chips' coordinates, which the model's scattered layout stands for); multi-process CPU
numbers process p's devices from p * 2048, so with one device per process (CPU's default)
every id is even. The filter is evaluated on each model topology with the ids that
platform gives; on CPU it is also evaluated with one device per process and with one
process, and where those keep other positions than the model's own layout, CPU's answer
is undecided: the comparison then rests on the platforms where it is certain, and a
verdict that holds on some of them only names them (devices.Evaluator.different_on).

The predicate is read from Python's tree: ``d.id`` of the loop variable, integers (literal
or known to the analysis, such as a config module's constant), ``+ - * // %``,
comparisons (``in`` a literal tuple, list or set), ``and``/``or``/``not``. Anything else
(``d.process_index``, a function call) leaves the filter undecidable, as before.
"""

from __future__ import annotations

import ast
import operator
from typing import TYPE_CHECKING, Callable, Optional

from .. import devices as dv
from ..scope import Scope
from ..values import ConstVal, DevVal, IntVal, Value

if TYPE_CHECKING:
    from ..interpreter import Analyzer

# id -> model -> value
Term = Callable[[int, dv.Model], object]

_BINOPS: dict[type, Callable[[int, int], int]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
}
_COMPARE: dict[type, Callable[[object, object], bool]] = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,  # type: ignore[dict-item]
    ast.Gt: operator.gt, ast.GtE: operator.ge,  # type: ignore[dict-item]
    ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b,  # type: ignore[operator]
}
# The named platforms' id ranges (devices.py): a filter over jax.devices('cpu') is not
# modelled.
_NAMED_BASE = 100_000
CPU_PROCESS_STRIDE = 2048


def filter_by_id(node: ast.ListComp | ast.GeneratorExp | ast.SetComp, it: DevVal, scope: Scope,
                 an: "Analyzer") -> Optional[DevVal]:
    """``[d for d in devs if <a test of d.id>]`` over a device list the analysis knows."""
    comp = node.generators[0]
    assert isinstance(comp.target, ast.Name)
    terms = [_term(t, comp.target.id, scope, an) for t in comp.ifs]
    if not terms or any(t is None for t in terms):
        return None
    tests: list[Term] = [t for t in terms if t is not None]
    base = it.fn

    def keep(m: dv.Model) -> dv.DevArr:
        arr = base(m)
        if arr.order:
            raise dv.Undecided("a filter of devices in an order the analysis does not know")
        if arr.ndim != 1:
            raise dv.ModelError("iterating a device grid gives rows")
        if any(i >= _NAMED_BASE for i in arr.flat):
            raise dv.Undecided("a filter of a named platform's devices")
        kept = _kept(arr.flat, tests, m, lambda i: real_id(m, i))
        if m.platform == "cpu":
            # One device per process (ids 0, 2048, 4096 ...) and one process (0 ... N-1)
            # are CPU jobs too; the filter must keep the same positions on them.
            for other in (lambda i: i * CPU_PROCESS_STRIDE, lambda i: i):
                if _kept(arr.flat, tests, m, other) != kept:
                    raise dv.Undecided("a filter by id that keeps other devices on other CPU jobs")
        return dv.DevArr.of(kept)

    return it.derive(keep, an.ctx.code(node, 60))


def real_id(m: dv.Model, i: int) -> int:
    """The id the platform gives the model's device ``i`` (its enumeration position on CPU)."""
    if m.platform == "cpu":
        return (i // m.per_process) * CPU_PROCESS_STRIDE + i % m.per_process
    return i


def _kept(flat: tuple[int, ...], tests: list[Term], m: dv.Model, id_of: Callable[[int], int]) -> list[int]:
    return [i for i in flat if all(t(id_of(i), m) for t in tests)]


def _term(e: ast.expr, target: str, scope: Scope, an: "Analyzer") -> Optional[Term]:
    """What ``e`` computes from the device's id, or None when it reads anything else."""
    t = type(e)
    if isinstance(e, ast.Attribute) and type(e.value) is ast.Name and e.value.id == target \
            and e.attr == "id":
        return lambda i, m: i
    if t is ast.Constant:
        value = e.value  # type: ignore[attr-defined]
        return (lambda i, m: value) if type(value) is int else None
    if t is ast.Name:
        if e.id == target:  # type: ignore[attr-defined]
            return None
        return _known_int(an.eval(e, scope))
    if t is ast.UnaryOp:
        inner = _term(e.operand, target, scope, an)  # type: ignore[attr-defined]
        if inner is None:
            return None
        if type(e.op) is ast.Not:  # type: ignore[attr-defined]
            return lambda i, m: not inner(i, m)
        if type(e.op) is ast.USub:  # type: ignore[attr-defined]
            return lambda i, m: -_int(inner(i, m))
        return None
    if t is ast.BinOp:
        fn = _BINOPS.get(type(e.op))  # type: ignore[attr-defined]
        left, right = _term(e.left, target, scope, an), _term(e.right, target, scope, an)  # type: ignore[attr-defined]
        if fn is None or left is None or right is None:
            return None
        return lambda i, m: fn(_int(left(i, m)), _int(right(i, m)))
    if t is ast.BoolOp:
        parts = [_term(v, target, scope, an) for v in e.values]  # type: ignore[attr-defined]
        if any(p is None for p in parts):
            return None
        ps = [p for p in parts if p is not None]
        if type(e.op) is ast.And:  # type: ignore[attr-defined]
            return lambda i, m: all(p(i, m) for p in ps)
        return lambda i, m: any(p(i, m) for p in ps)
    if t is ast.Compare:
        return _compare(e, target, scope, an)  # type: ignore[arg-type]
    if t in (ast.Tuple, ast.List, ast.Set):
        items = [_term(x, target, scope, an) for x in e.elts]  # type: ignore[attr-defined]
        if any(x is None for x in items):
            return None
        xs = [x for x in items if x is not None]
        return lambda i, m: tuple(x(i, m) for x in xs)
    return None


def _compare(e: ast.Compare, target: str, scope: Scope, an: "Analyzer") -> Optional[Term]:
    first = _term(e.left, target, scope, an)
    rest = [_term(c, target, scope, an) for c in e.comparators]
    ops = [_COMPARE.get(type(op)) for op in e.ops]
    if first is None or any(r is None for r in rest) or any(o is None for o in ops):
        return None
    chain = [first] + [r for r in rest if r is not None]
    fns = [o for o in ops if o is not None]

    def test(i: int, m: dv.Model) -> bool:
        vals = [c(i, m) for c in chain]
        return all(f(a, b) for f, a, b in zip(fns, vals, vals[1:]))
    return test


def _known_int(v: Value) -> Optional[Term]:
    if isinstance(v, IntVal):
        fn = v.fn
        return lambda i, m: fn(m)
    if isinstance(v, ConstVal) and type(v.value) is int:
        value = v.value
        return lambda i, m: value
    return None


def _int(x: object) -> int:
    if type(x) is not int:
        raise dv.ModelError("arithmetic on something other than an integer")
    return x
