"""NumPy functions on device arrays: flips, rolls, transposes, reshapes, concatenation."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Callable, Optional

from ...core import vocabulary as api
from .registry import handles
from .. import devices as dv
from ..arguments import Call
from ..scope import Scope
from ..valueops import const_int, literal_sizes, ordered, shape_fns
from ..values import DevVal, IntVal, SeqVal, UNKNOWN, Value, undecidable

if TYPE_CHECKING:
    from ..interpreter import Analyzer


@handles(api.NP_FLIP, api.NP_FLIPLR, api.NP_FLIPUD)
def _flip(an: Analyzer, call: Call, node: ast.Call, scope: Scope) -> Value:
    v = call.arg(0, "m")
    if not (ordered(v)):
        return UNKNOWN
    name = an.current_name
    f = v.fn
    if name == api.NP_FLIPLR:
        axis: Optional[int] = 1
    elif name == api.NP_FLIPUD:
        axis = 0
    else:
        if call.given(1, "axis"):
            axis = const_int(call.arg(1, "axis"))
            if axis is None:
                return v.derive(undecidable, v.desc)
        else:
            axis = None
    how = f"np.flip({v.desc})"
    return v.derive(lambda m: f(m).flip(axis), how, reorder="np.flip()", step=(node, call.arg_node(0, "m")))


@handles(api.NP_ROLL)
def _roll(an: Analyzer, call: Call, node: ast.Call, scope: Scope) -> Value:
    v = call.arg(0, "a")
    shift = call.arg(1, "shift")
    if not (ordered(v)) or not isinstance(shift, IntVal):
        return UNKNOWN
    axis = None
    if call.given(2, "axis"):
        axis = const_int(call.arg(2, "axis"))
        if axis is None:
            return v.derive(undecidable, v.desc)
    f, g = v.fn, shift.fn
    how = f"np.roll({v.desc}, {an.ctx.code(call.arg_node(1, 'shift'), 20)})"  # type: ignore[arg-type]
    return v.derive(lambda m: f(m).roll(g(m), axis), how, reorder="np.roll()",
                    step=(node, call.arg_node(0, "a")))


@handles(api.NP_TRANSPOSE, api.NP_SWAPAXES, api.NP_MOVEAXIS)
def _transpose_fn(an: Analyzer, call: Call, node: ast.Call, scope: Scope) -> Value:
    v = call.arg(0, "a")
    if not (ordered(v)):
        return UNKNOWN
    name = an.current_name
    f = v.fn
    if name == api.NP_TRANSPOSE:
        axes_v = call.arg(1, "axes")
        if call.given(1, "axes"):
            if not isinstance(axes_v, SeqVal):
                return v.derive(undecidable, v.desc)
            axes = [const_int(i) for i in axes_v.items]
            known = [a for a in axes if a is not None]
            if len(known) != len(axes):
                return v.derive(undecidable, v.desc)
            return v.derive(lambda m: f(m).transpose(known),
                            f"np.transpose({v.desc})",
                            reorder="np.transpose()")
        return v.derive(lambda m: f(m).transpose(), f"np.transpose({v.desc})", reorder="np.transpose()")
    a, b = const_int(call.arg(1)), const_int(call.arg(2))
    if a is None or b is None:
        return v.derive(undecidable, v.desc)
    if name == api.NP_SWAPAXES:
        return v.derive(lambda m: f(m).swapaxes(a, b), f"np.swapaxes({v.desc}, {a}, {b})",
                        reorder="np.swapaxes()")
    return v.derive(lambda m: f(m).moveaxis(a, b), f"np.moveaxis({v.desc}, {a}, {b})",
                    reorder="np.moveaxis()")


@handles(api.NP_RESHAPE)
def _np_reshape(an: Analyzer, call: Call, node: ast.Call, scope: Scope) -> Value:
    v = call.arg(0, "a")
    if not (ordered(v)):
        return UNKNOWN
    shape_v = call.arg(1, "newshape") if call.given(1, "newshape") else call.arg(1, "shape")
    fns = shape_fns(shape_v)
    if fns is None:
        return v.derive(undecidable, v.desc)
    f = v.fn
    return v.derive(lambda m: f(m).reshape([g(m) for g in fns]), v.desc,
                    sizes=v.sizes + (literal_sizes(shape_v) if dv.every_device(f) else ()))


@handles(api.NP_RAVEL)
def _np_ravel(an: Analyzer, call: Call, node: ast.Call, scope: Scope) -> Value:
    v = call.arg(0, "a")
    if ordered(v):
        f = v.fn
        return v.derive(lambda m: f(m).ravel(), v.desc)
    return UNKNOWN


@handles(api.NP_CONCATENATE)
def _concat(an: Analyzer, call: Call, node: ast.Call, scope: Scope) -> Value:
    seq = call.arg(0)
    if isinstance(seq, SeqVal) and len(seq.items) == 2 and all(
            ordered(i) for i in seq.items) \
            and not call.given(1, "axis"):
        a, b = seq.items
        out = an.binop(node, a, b, ast.Add(), node, node)
        if isinstance(out, DevVal):
            out_fn = out.fn
            return out.derive(lambda m: out_fn(m).as_array(), out.desc)
    return UNKNOWN


def index_grid(an: Analyzer, base: DevVal, parts: list[object], node: ast.Subscript, text: str) -> Value:
    """``grid[:, 0]``, ``grid[0, :]``, ``grid[1, 2]``: one int or slice per axis (NumPy basic indexing).

    ``parts`` holds the evaluated index of each axis: an ``IntVal`` or a ``(lower,
    upper, step)`` tuple for a slice. A column or row is a smaller set of devices.
    """
    f = base.fn
    desc = f"{base.desc}[{text}]"
    keys: list[Callable[[dv.Model], int] | tuple[Optional[Callable[[dv.Model], int]], ...]] = []
    reorder = None
    for p in parts:
        if isinstance(p, IntVal):
            keys.append(p.fn)
        elif isinstance(p, tuple) and all(q is None or isinstance(q, IntVal) for q in p):
            keys.append(tuple(q.fn if q is not None else None for q in p))
            step = const_int(p[2]) if p[2] is not None else 1
            if step is None or step < 0:
                reorder = f"[{text}]"
        else:  # Ellipsis, None (a new axis), index arrays: not modelled
            return DevVal(fn=undecidable, desc=desc, node=node, fresh=base.fresh, from_mesh=base.from_mesh)

    def pick(m: dv.Model) -> dv.DevArr:
        key = [k(m) if callable(k)
               else slice(*(g(m) if g is not None else None for g in k))
               for k in keys]
        return f(m).getitem(key)

    if all(isinstance(p, IntVal) for p in parts):
        # As many ints as the grid has axes pick one device; fewer pick a sub-grid.
        ndims = an.ctx.devices.observe(f, base.sizes, lambda a: a.ndim)
        if ndims == {len(parts)}:
            return DevVal(fn=pick, desc=desc, node=node, fresh=base.fresh, from_mesh=base.from_mesh,
                          sizes=base.sizes, single=True)
        if not ndims or min(ndims) <= len(parts):
            return DevVal(fn=undecidable, desc=desc, node=node, fresh=base.fresh, from_mesh=base.from_mesh)
    # No fix step: undoing the reversal of one axis is not the expression without it.
    return base.derive(pick, desc, reorder=reorder)
