"""Host data and uncommitted arrays: jax.numpy, jax.random, jax.lax and jax.nn results made
without a device.

JAX places an uncommitted array wherever it is first used, so it crosses no mesh.
A result is uncommitted only when every array it is computed from is host data or
uncommitted, no ``device``/``sharding``/``out_sharding`` is given, and no mesh
context is in force (under ``jax.set_mesh`` results are committed to the context mesh).
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from ...core import vocabulary as api
from ..arguments import Call
from . import placement
from ..valueops import dotted, leaves
from ..reasons import MESH_CONTEXT, UNMODELLED_JAX, named
from ..values import (
    ArrayVal, ConstVal, HostVal, IntVal, MeshContextVal, SeqVal, ShardingVal, Value, is_unknown, unknown,
)

if TYPE_CHECKING:
    from ..interpreter import Analyzer

# Creation functions: their arguments are shapes, dtypes and scalars, never arrays.
_CREATION = frozenset({"zeros", "ones", "empty", "arange", "eye", "identity", "linspace", "tri"})
# jax.random functions whose only array argument is the key.
_KEY_ONLY = frozenset({
    "split", "normal", "uniform", "truncated_normal", "bits", "gumbel", "laplace", "logistic", "cauchy",
    "exponential", "orthogonal", "rademacher", "key_data", "fold_in",
})
_SEEDS = frozenset({"PRNGKey", "key"})
_PLACEMENT = api.PLACEMENT_KEYWORDS  # the long-file stages keep such a call (CARRYING_KEYWORDS)


def is_host(v: Value) -> bool:
    """Host data or an uncommitted array: a value that crosses no mesh."""
    if isinstance(v, (HostVal, ConstVal, IntVal)):
        return True
    if isinstance(v, SeqVal):
        return all(is_host(i) for i in v.items)
    return False


def _uncommitted(an: "Analyzer", node: ast.Call, what: str) -> Value:
    if an.mesh_context:
        site = an.context_site
        if isinstance(site, MeshContextVal) and site.mesh is an.context_mesh:
            # Under jax.set_mesh(m) the result is committed to m, replicated
            # (NamedSharding(m, P()), observed on jax 0.10.2 for auto and explicit axes;
            # RSH201's examples run both cases under multi-controller JAX); under the legacy
            # ``with mesh:`` it stays uncommitted, and under a context the analysis cannot
            # see it is unknown. Its layout is left unknown (``derived``).
            return ArrayVal(ShardingVal(node, mesh=site.mesh, from_context=True), node, derived="array")
        return unknown(MESH_CONTEXT, dotted(node.func) or "")
    return HostVal(an.ctx.lazy_code(node, 40, f" ({what})"), node, uncommitted=True)


def _given(call: Call, keyword: str, position: int | None) -> Value | None:
    """The argument spelled by keyword or at ``position``, or None when the call omits it."""
    if keyword in call.keywords:
        return call.keywords[keyword][0]
    if position is not None and position < len(call.positional):
        return call.positional[position][0]
    return None


def _may_be_zero_copy(short: str, call: Call) -> bool:
    """``jnp.asarray(a, dtype)``, ``jnp.array(a, dtype, copy=False)``: when ``a`` is a NumPy
    array already of that dtype, JAX returns it without a copy, uncommitted on the process's
    own device, even under ``jax.set_mesh`` (jax 0.10.2, 1 and 2 processes: without a dtype,
    with another dtype, from a list or a scalar, with a copy, the result is committed to the
    context mesh). The analysis does not follow NumPy dtypes, so only data that is no NumPy
    array (a literal, a list of them) rules it out."""
    if short not in api.JNP_MAKER_DTYPE or call.has_star:
        return False
    dtype = _given(call, *api.JNP_MAKER_DTYPE[short])
    if dtype is None or isinstance(dtype, ConstVal) and dtype.value is None:
        return False
    keyword, position, default = api.JNP_MAKER_COPY[short]
    copy = _given(call, keyword, position)
    if copy is None and default is True or isinstance(copy, ConstVal) and copy.value is True:
        return False
    data = call.arg(0)
    return not isinstance(data, (ConstVal, IntVal, SeqVal))


def jnp_result(an: "Analyzer", name: str, call: Call, node: ast.Call) -> Value:
    if any(k in call.keywords for k in _PLACEMENT) or call.has_star:
        return unknown(UNMODELLED_JAX, _placed_by(name, call))
    short = name[len(api.JNP_KEY_PREFIX):]
    if short in _CREATION:
        return _uncommitted(an, node, "uncommitted")
    if an.mesh_context and _may_be_zero_copy(short, call) and \
            all(is_host(v) for v, _ in call.positional[:1]):
        # Committed to the context mesh or left uncommitted on this process's device: which,
        # depends on a dtype the analysis does not know (_may_be_zero_copy).
        return unknown(MESH_CONTEXT, f"{dotted(node.func) or name} with a dtype (uncommitted when "
                                     "it is the NumPy array's own)")
    args = [v for v, _ in call.positional] + [v for k, (v, _) in call.keywords.items() if k != "dtype"]
    if short not in placement.NOT_ARRAYS and \
            (placed := placement.computed(args, node, short in placement.TUPLES)) is not None:
        return placed
    return _of_operands(an, args, node) or unknown(UNMODELLED_JAX, named(name, None))


def random_result(an: "Analyzer", name: str, call: Call, node: ast.Call) -> Value:
    short = name[len(api.JAX_RANDOM_PREFIX):]
    if any(k in call.keywords for k in _PLACEMENT) or call.has_star:
        return unknown(UNMODELLED_JAX, _placed_by(name, call))
    if short in _SEEDS:
        return _uncommitted(an, node, "an uncommitted key")
    key = call.arg(0, "key")
    if short in _KEY_ONLY and is_host(key):
        return _uncommitted(an, node, "uncommitted")
    if short in _KEY_ONLY and (placed := placement.computed([key], node)) is not None:
        return placed
    if is_unknown(key):
        return placement.unknown_operand([key], node)
    if short not in _KEY_ONLY:
        # randint, choice, bernoulli, ...: computed from the key and the other arguments,
        # uncommitted where every one is host data (the dtype is no array).
        args = [v for v, _ in call.positional] + [v for k, (v, _) in call.keywords.items() if k != "dtype"]
        if (operands := _of_operands(an, args, node)) is not None:
            return operands
    return unknown(UNMODELLED_JAX, named(name, None))


def lax_result(an: "Analyzer", qual: str, call: Call, node: ast.Call) -> Value | None:
    """A ``jax.lax`` or ``jax.nn`` function: on the devices of its committed operand
    (placement.lax_result), uncommitted when every operand is host data (observed on jax
    0.10.2 for activations, softmax, reductions, slicing, updates, one_hot and
    optimization_barrier: not committed, and committed to the context mesh under
    ``jax.set_mesh``, as jnp's results are), unknown when an operand is. None: a function
    this does not decide (a function argument, a pytree the analysis does not know)."""
    values = call.values()
    if (placed := placement.lax_result(qual, values, node)) is not None:
        return placed
    return _of_operands(an, values, node) if placement.computes(qual) else None


def _of_operands(an: "Analyzer", operands: list[Value], node: ast.Call) -> Value | None:
    """A computation no committed operand places: uncommitted when every operand is host
    data, on unknown placement when one holds a value the analysis does not know
    (``jnp.array([n])``); None otherwise."""
    if operands and all(is_host(v) for v in operands):
        return _uncommitted(an, node, "uncommitted")
    if any(is_unknown(leaf) for v in operands for leaf in leaves(v)):
        return placement.unknown_operand(operands, node)
    return None


def _placed_by(name: str, call: Call) -> str:
    """The culprit of a jnp or jax.random call whose placement keyword (or ``*args``) the
    models do not follow: ``jax.numpy.zeros with out_sharding=``."""
    given = next((k for k in call.keywords if k in _PLACEMENT), None)
    return f"{name} with {given}=" if given is not None else f"{name} with *args or **kwargs"
