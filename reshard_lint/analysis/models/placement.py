"""Computation follows committed data: what JAX computes from an array stays on its devices.

An eager operation (indexing, arithmetic, ``jnp`` and ``jax.random`` functions, array
methods) and a jitted call without shardings run on the devices of their
committed arguments, and their results are committed there, in the same order: JAX
takes the device assignment from those arguments, and when two of them disagree (or a
context mesh or a sharding inside disagrees) the call raises "Received incompatible
devices for jitted computation" and has no result at all (observed with jax 0.10.2 on
8 CPU devices: jitted results, slices, arithmetic with host data, jnp and jax.random
functions, array methods; the RSH201 and RSH203 examples run it under multi-controller
JAX). So a result is placed wherever any one committed argument is, whatever the others.

What is not known is the result's layout (its PartitionSpec): a ``derived`` array has
none, so no rule that reads the layout (RSH305, the cross-host path of RSH201) fires on
it. Methods that return the array itself or keep its sharding (``astype``, ``copy``,
``block_until_ready``; ``jax.device_put(x)`` with no target, transfers.py) keep its
layout too. Where the array is not known, neither is what is computed from it: for the
array's own reason and culprit (``of_unknown``, ``unknown_operand``, ``unplaced``), so
that coverage names what stopped the analysis (the mesh's unmodelled function) rather
than the computation. Iterating over an array is not here: ``a, b = x`` fetches the rows to uncommitted
single-device arrays (observed), so unpacking a placed array stays unknown.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Iterable, Optional, Sequence

from ...core import vocabulary as api
from ..reasons import COMMITTED_OPERAND, MESH_CONTEXT
from ..valueops import culprit_in, leaves
from ..values import (
    ArrayVal, ConstVal, HostVal, IntVal, SeqVal, ShardingVal, Unknown, Value, again, same_place, unknown, unknown_from,
)

if TYPE_CHECKING:
    from ..interpreter import Analyzer

# jax.Array methods and attributes whose result is an array computed from it.
ARRAY_METHODS = frozenset({
    "sum", "mean", "max", "min", "prod", "std", "var", "all", "any", "argmax", "argmin", "cumsum",
    "cumprod", "reshape", "ravel", "flatten", "transpose", "swapaxes", "squeeze", "clip", "round", "dot",
    "conj", "conjugate", "repeat", "take", "sort", "argsort", "nonzero", "trace", "diagonal", "view",
})
# jax.numpy functions and array methods that return a tuple or list of arrays: no
# ``.sharding`` of the whole to rebuild a target on (crossing.py).
TUPLES = frozenset({
    "nonzero", "split", "array_split", "hsplit", "vsplit", "dsplit", "unravel_index", "meshgrid",
    "broadcast_arrays", "histogram", "unique", "frexp", "modf", "divmod", "linalg.eigh", "linalg.eig",
    "linalg.svd", "linalg.qr", "linalg.slogdet",
})
ARRAY_ATTRS = frozenset({"T", "mT", "real", "imag"})
# jax.Array methods whose result is the array itself, its sharding unchanged (observed
# on jax 0.10.2: astype and copy keep the sharding and stay committed; block_until_ready
# returns the array).
SAME_ARRAY_METHODS = frozenset({"block_until_ready", "astype", "copy"})
# jax.jit options that leave the device assignment to the arguments.
_JIT_KEEPS = frozenset({"static_argnums", "static_argnames", "donate_argnums", "donate_argnames", "inline",
                        "keep_unused", "abstracted_axes", "compiler_options"})
# jax.numpy functions that return something other than arrays computed on the devices of
# their arguments: shapes, dtypes, predicates on types, printing, function wrappers.
NOT_ARRAYS = frozenset({
    "shape", "ndim", "size", "result_type", "dtype", "iscomplexobj", "isrealobj", "issubdtype",
    "isscalar", "isdtype", "iinfo", "finfo", "promote_types", "can_cast", "broadcast_shapes",
    "array_str", "array_repr", "printoptions", "get_printoptions", "set_printoptions", "vectorize",
    "frompyfunc", "from_dlpack", "dtypes", "iterable", "save", "load", "ufunc",
})


# jax.lax and jax.nn functions that are not computations on their operands' devices:
# they return shapes, functions, or (full_like with another shape) an uncommitted array.
_NOT_COMPUTATIONS = api.LAX_NOT_COMPUTING
_NOT_COMPUTING_PACKAGES = api.NOT_COMPUTING_PACKAGES


def lax_result(qual: str, values: Iterable[Value], node: ast.AST) -> Optional[ArrayVal]:
    """A ``jax.lax`` or ``jax.nn`` function given a committed array: a computation on its
    devices like any other (observed on jax 0.10.2 for activations, one_hot, slicing and
    updates, reductions, scan, cond and fori_loop; RSH201's examples run some under
    multi-controller JAX). Its results may be a pytree (control flow), so ``tree``. None
    when no committed operand decides."""
    if not computes(qual):
        return None
    return computed(values, node, tree=True)


def computes(qual: str) -> bool:
    """A ``jax.lax`` or ``jax.nn`` function that computes on its operands' devices (not a
    class: ``jax.lax.Precision('highest')``, ``GatherDimensionNumbers(...)``)."""
    return qual not in _NOT_COMPUTATIONS and not qual.startswith(_NOT_COMPUTING_PACKAGES) \
        and not qual.rsplit(".", 1)[-1][:1].isupper()


def keeps_placement(keywords: Iterable[str]) -> bool:
    """A ``jax.jit`` given only these keywords places its results with its arguments."""
    return all(k in _JIT_KEEPS for k in keywords)


def placed_on(values: Iterable[Value]) -> Optional[ArrayVal]:
    """The committed array that decides where a computation on ``values`` runs: the first
    one, when every committed array among them is on the same mesh (or device) object;
    None when there is none or two disagree (that call fails, or is not this simple)."""
    first: Optional[ArrayVal] = None
    for v in values:
        for leaf in leaves(v):
            if not isinstance(leaf, ArrayVal):
                continue
            if first is None:
                first = leaf
            elif not same_place(first.sharding, leaf.sharding):
                return None
    return first


def derived(src: ArrayVal, node: ast.AST, tree: bool = False) -> ArrayVal:
    """An array computed from ``src`` (a pytree of them: ``tree``): on its devices, in
    their order, layout unknown. An element of a tree is an array either way: indexing
    a tuple of results gives one, indexing one result a piece of it."""
    s = src.sharding
    return ArrayVal(ShardingVal(s.node, mesh=s.mesh, device=s.device, from_context=s.from_context), node,
                    derived="tree" if tree else "array")


def results(src: ArrayVal, node: ast.AST, shape: Value) -> Value:
    """A jitted call's results: every leaf committed to ``src``'s devices (constants
    included), in the containers its body returns when the analysis knows them."""
    if isinstance(shape, SeqVal):
        return SeqVal(tuple(results(src, node, item) for item in shape.items), shape.kind, shape.keys)
    if isinstance(shape, ConstVal) and shape.value is None:
        return shape  # no leaf
    leaf = isinstance(shape, (HostVal, ConstVal, IntVal)) \
        or (isinstance(shape, ArrayVal) and shape.derived != "tree")
    return derived(src, node, tree=not leaf)


def of_unknown(base: Value, name: str) -> Optional[Unknown]:
    """An array attribute or method (``a.T``, ``a.astype(...)``, ``a.reshape(...)``) of a
    value the analysis does not know, for the reason it does not know that value (its
    culprit too): ``a = jax.device_put(x, NamedSharding(<an unknown mesh>, spec))``
    gives ``a.T`` the mesh's reason, as ``a * 2`` and ``jax.device_put(a, s)`` have it.
    None for another name, or an unknown that gives no reason."""
    if not isinstance(base, Unknown) or not base.reason:
        return None
    if name in ARRAY_ATTRS or name in ARRAY_METHODS or name in SAME_ARRAY_METHODS:
        return again(base)
    return None


def unplaced(values: Iterable[Value]) -> Value:
    """The result of a computation that no committed array among ``values`` places and
    that is not known to be uncommitted (a jitted call or a transformation given a value
    the analysis does not know): unknown for that value's reason."""
    return unknown_from(*(leaf for v in values for leaf in leaves(v)))


def unknown_operand(values: Sequence[Value], node: Optional[ast.AST] = None) -> Unknown:
    """A computation on ``values``, one of which the analysis does not know: unknown for
    that one's reason and culprit, what stopped the analysis there (an array put on a mesh
    that an unmodelled function returns is unknown for that function, and so is whatever
    is computed from it); for an unknown that gives none, a computation on an array whose
    placement is not known, naming the callee written at ``node``."""
    first = next((leaf for v in values for leaf in leaves(v) if isinstance(leaf, Unknown) and leaf.reason), None)
    return again(first) if first is not None else unknown(COMMITTED_OPERAND, culprit_in(values, node))


def computed(values: Iterable[Value], node: ast.AST, tree: bool = False) -> Optional[ArrayVal]:
    """The result of an eager computation on ``values`` that holds a committed array
    (``tree``: a tuple or list of arrays)."""
    src = placed_on(values)
    return derived(src, node, tree) if src is not None else None


def host_element(an: "Analyzer", base: HostVal, node: ast.AST, index: Sequence[object] = ()) -> Value:
    """An element or slice of host data (indexing, unpacking): host data too. NumPy
    converts a jax.Array index to its own; an uncommitted jax.Array indexed by a
    committed one is computed on that one's devices, and under a mesh context on the
    context's."""
    if base.uncommitted:
        if an.mesh_context:
            return unknown(MESH_CONTEXT)
        values = [v for part in index for v in (part if isinstance(part, tuple) else (part,))
                  if isinstance(v, Value)]
        if not all(isinstance(v, (HostVal, ConstVal, IntVal)) for v in values):
            return computed(values, node) or unknown_operand(values)
    return HostVal(base._desc, node, base.uncommitted)
