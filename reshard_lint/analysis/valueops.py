"""Small operations on abstract values shared by the interpreter and the JAX models."""

from __future__ import annotations

import ast
import math
from typing import Callable, Optional, Sequence, TypeGuard

from . import devices as dv
from .values import (
    UNKNOWN, ArrayVal, ConstVal, DevVal, HostVal, IntVal, MeshVal, SeqVal, ShardingVal, Unknown, Value, join, undecidable,
)
NO_KEY = object()  # a dict key that is not a constant


def constant(v: object) -> Value:
    """What a literal of Python's tree holds (``ast.Constant.value``): None, a flag,
    ``...``, a number, a string; unknown for anything else."""
    if v is None or v is True or v is False or v is Ellipsis:
        return ConstVal(v)
    if isinstance(v, int):  # not a bool: those are above
        n = v
        return IntVal(lambda _m: n, literal=n)
    if type(v) in (float, complex, str, bytes):
        return ConstVal(v)
    return UNKNOWN


def const_int(v: Value) -> Optional[int]:
    if isinstance(v, IntVal) and v.literal is not None:
        return v.literal
    return None


def int_fn(v: Value) -> Optional[Callable[[dv.Model], int]]:
    if isinstance(v, IntVal):
        return v.fn
    return None


def shape_fns(v: Value) -> Optional[list[Callable[[dv.Model], int]]]:
    if isinstance(v, IntVal):
        return [v.fn]
    if isinstance(v, SeqVal):
        fns = [int_fn(i) for i in v.items]
        known = [f for f in fns if f is not None]
        if len(known) == len(fns):
            return known
    return None


def literal_sizes(v: Value) -> tuple[int, ...]:
    """The device count a fully literal shape spells out, e.g. (2, 4) -> (8,)."""
    items = [v] if isinstance(v, IntVal) else list(v.items) if isinstance(v, SeqVal) else []
    lits = [const_int(i) for i in items]
    ints = [x for x in lits if x is not None]
    if items and len(ints) == len(lits):
        return (math.prod(ints),)
    return ()


def literal_shape(v: Value) -> Optional[tuple[int, ...]]:
    """A mesh shape spelled with literal ints, e.g. (2, 4); None otherwise."""
    items = [v] if isinstance(v, IntVal) else list(v.items) if isinstance(v, SeqVal) else []
    lits = [const_int(i) for i in items]
    ints = [x for x in lits if x is not None]
    if items and len(ints) == len(lits):
        return tuple(ints)
    return None


def alike(values: Sequence[Value]) -> bool:
    """One value stands for all of them (a loop variable, a tree.map leaf): they are one
    value, or all NumPy data; not constants, which keys and indices are (``d[k]`` must not
    pick one)."""
    first = values[0]
    return all(v is first for v in values) or all(isinstance(v, HostVal) for v in values)


def each(values: Sequence[Value]) -> Optional[Value]:
    """What stands for each of ``values`` where a loop takes them one by one: one value
    for all (``alike``), or arrays on one mesh (or one device) object, which every
    element is on whatever its layout (their join, as where two branches meet); None
    otherwise."""
    if alike(values):
        return values[0]
    if not all(isinstance(v, ArrayVal) for v in values):
        return None
    out = values[0]
    for v in values[1:]:
        out = join(out, v)
    return out if isinstance(out, ArrayVal) else None


def leaves(v: Value) -> list[Value]:
    if isinstance(v, SeqVal):
        out: list[Value] = []
        for item in v.items:
            out.extend(leaves(item))
        return out
    return [v]


def culprit_in(values: Sequence[Value], node: Optional[ast.AST] = None) -> str:
    """What stopped the analysis on the first of ``values`` (their leaves) it does not know
    (analysis/reasons.py), else the callee or operand written at ``node`` (``jnp.dot``):
    the culprit of a computation on them."""
    for v in values:
        for leaf in leaves(v):
            if isinstance(leaf, Unknown) and leaf.culprit:
                return leaf.culprit
    if isinstance(node, ast.Call):
        return dotted(node.func) or ""
    return ""


def ordered(v: Value) -> TypeGuard[DevVal]:
    """A device list or array with an order: not a single device, not a set of devices."""
    return isinstance(v, DevVal) and not v.single and not v.is_set


class PerProcess(IntVal):
    """An integer that differs between processes (a seed made from it is per-process)."""

    def __init__(self, fn: Callable[[dv.Model], int]) -> None:
        super().__init__(fn, None)


def dotted(node: ast.AST) -> Optional[str]:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        head = dotted(node.value)
        return f"{head}.{node.attr}" if head else None
    return None


def ascending(fns: Sequence[Optional[Callable[[dv.Model], int]]]) -> bool:
    """Constant indices in increasing order (a subset in natural order)."""
    try:
        vals = [f(dv.Model(64, 4, 0)) for f in fns]  # type: ignore[misc]  # (None raises: not ascending)
    except Exception:  # noqa: BLE001
        return False
    return vals == sorted(vals)


def expects_error(expr: ast.expr) -> bool:
    if type(expr) is not ast.Call:
        return False
    f = expr.func
    name = f.attr if type(f) is ast.Attribute else f.id if type(f) is ast.Name else ""
    return name in ("raises", "assertRaises", "assertRaisesRegex", "assertRaisesRegexp", "assertWarns",
                    "assertWarnsRegex", "expectedFailure")


_INT_OPS: dict[type, Callable[[int, int], int]] = {
    ast.Add: lambda x, y: x + y, ast.Sub: lambda x, y: x - y, ast.Mult: lambda x, y: x * y,
    ast.FloorDiv: lambda x, y: x // y, ast.Mod: lambda x, y: x % y,
}


def int_arith(op: ast.operator, a: IntVal, b: IntVal, augmented: bool = False) -> Value:
    """``a op b`` of two ints; ``augmented``: ``a op= b`` (``%=`` is not followed)."""
    f, g = a.fn, b.fn
    la, lb = a.literal, b.literal
    fn = _INT_OPS.get(type(op))
    if fn is None or (augmented and type(op) is ast.Mod):
        return UNKNOWN
    lit = None
    if la is not None and lb is not None:
        try:
            lit = fn(la, lb)
        except ZeroDivisionError:
            return UNKNOWN
    per_process = isinstance(a, PerProcess) or isinstance(b, PerProcess)
    if per_process:
        return PerProcess(lambda m: fn(f(m), g(m)))
    return IntVal(lambda m: fn(f(m), g(m)), literal=lit)


def squeeze(a: dv.DevArr) -> dv.DevArr:
    shape = tuple(d for d in a.shape if d != 1) or (1,)
    return dv.DevArr(a.flat, shape, False, a.order)


def row_or_device(single: DevVal, base: DevVal, devices: dv.Evaluator) -> DevVal:
    """``grid[0]`` is a row of a 2-D grid but a device of a 1-D list."""
    f = base.fn
    g = single.fn

    seen = devices.observe(f, base.sizes, lambda a: a.ndim == 1)
    one_d = seen.pop() if len(seen) == 1 else None
    if one_d is False:
        return base.derive(g, single.desc)
    if one_d is None:
        single.fn = undecidable
    return single


def element(base: DevVal, index: Callable[[dv.Model], int], text: str, node: ast.AST,
            devices: dv.Evaluator) -> DevVal:
    """``base[i]`` (``devs[k]``, or an unpacking ``d1, d2 = devs[:2]``): a device of a 1-D
    list, a row of a 2-D grid; ``text`` spells the index."""
    f = base.fn
    single = DevVal(fn=lambda m: f(m).index0(index(m)), desc=f"{base.desc}[{text}]", node=node,
                    fresh=base.fresh, from_mesh=base.from_mesh, sizes=base.sizes)
    single.single = True
    return row_or_device(single, base, devices)


def mesh_label(mesh: MeshVal) -> str:
    return mesh.name or "mesh"


def label(v: ShardingVal | ArrayVal) -> str:
    return v.name or "x"
