"""Function transformations: jax.grad, jax.value_and_grad, jax.vmap, jax.checkpoint.

Calling ``jax.grad(f)(x)`` runs ``f`` on ``x`` (traced, on x's devices) and returns the
gradients; ``jax.vmap(f)(x)`` runs ``f`` on slices of ``x``; ``jax.checkpoint(f)`` is ``f``
as far as values go. So the analysis runs the function's body with the arguments
(slices: arrays of unknown layout, for vmap), and the results are placed with the
committed arguments, as any computation's (placement.py). A transformation given an
option that names devices, or a function the analysis does not know, is not followed.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from ...core import vocabulary as api
from . import placement
from .registry import handles
from ..arguments import Call
from ..scope import Scope
from ..values import UNKNOWN, ArrayVal, ConstVal, FuncVal, JitVal, SeqVal, TransformVal, Value

if TYPE_CHECKING:
    from ..interpreter import Analyzer

# Options that change what is differentiated or batched, not where anything runs.
_KEEPS = {
    "grad": frozenset({"argnums", "has_aux", "holomorphic", "allow_int", "reduce_axes"}),
    "vmap": frozenset({"in_axes", "out_axes", "axis_name", "axis_size", "spmd_axis_name"}),
}
_KEEPS["value_and_grad"] = _KEEPS["grad"]


def _transform(kind: str) -> object:
    def handler(an: "Analyzer", call: Call, node: ast.Call, scope: Scope) -> Value:
        f = call.arg(0, "fun")
        if isinstance(f, JitVal) and f.plain:
            f = f.func  # a jitted function given no shardings computes where its arguments are
        if not isinstance(f, FuncVal) or call.has_star or len(call.positional) > 1 \
                or any(k not in _KEEPS[kind] and k != "fun" for k in call.keywords):
            return UNKNOWN
        aux = call.arg(-1, "has_aux")
        return TransformVal(node, kind, f, has_aux=isinstance(aux, ConstVal) and aux.value is True,
                            parts=_positions(call.arg(-1, "argnums")) if kind != "vmap" else 0)
    return handler


def _positions(argnums: Value) -> int:
    """How many positions ``argnums`` names when it is a tuple or list; 0 otherwise."""
    if isinstance(argnums, SeqVal):
        return len(argnums.items)
    if isinstance(argnums, ConstVal) and isinstance(argnums.value, (tuple, list)):
        return len(argnums.value)
    return 0


handles(api.GRAD)(_transform("grad"))  # type: ignore[arg-type]
handles(api.VALUE_AND_GRAD)(_transform("value_and_grad"))  # type: ignore[arg-type]
handles(api.VMAP)(_transform("vmap"))  # type: ignore[arg-type]


@handles(api.CHECKPOINT)
def _checkpoint(an: "Analyzer", call: Call, node: ast.Call, scope: Scope) -> Value:
    f = call.arg(0, "fun")
    return f if isinstance(f, FuncVal) and len(call.positional) == 1 and not call.has_star else UNKNOWN


def unbatched(v: Value, node: ast.AST) -> Value:
    """What vmap's function sees of an argument: its arrays sliced, layout unknown."""
    if isinstance(v, ArrayVal):
        return placement.derived(v, node)
    if isinstance(v, SeqVal):
        return SeqVal(tuple(unbatched(i, node) for i in v.items), v.kind, v.keys)
    return v


def results(t: TransformVal, call: Call, node: ast.AST) -> Value:
    """The results: placed with the committed arguments (the function's own, for vmap)."""
    src = placement.placed_on(call.values())
    if src is None:
        return placement.unplaced(call.values())
    grads: Value
    if t.parts and not t.has_aux:
        # argnums=(0, 1): a tuple with one gradient (a pytree) per position.
        grads = SeqVal(tuple(placement.derived(src, node, tree=True) for _ in range(t.parts)))
    else:
        grads = placement.derived(src, node, tree=True)
    if t.kind == "value_and_grad":
        return SeqVal((placement.derived(src, node, tree=True), grads))
    return grads
