"""``jax.shard_map``: a function run on every device of a mesh, whose results are global
arrays on that mesh.

Observed on jax 0.10.2 (8 CPU devices, and under multi-controller JAX through RSH201's
and RSH203's examples): ``jax.shard_map(f, mesh=m, in_specs=..., out_specs=P('x'))(x)``
returns an array committed to ``NamedSharding(m, P('x'))`` (a tuple of specs, a tuple of
such arrays), whether ``x`` is host data or an array on ``m``; without ``mesh=``, on the
context mesh of the call (``jax.set_mesh(m)`` then: on ``m``); and an argument committed to another set of devices,
or to ``m``'s devices in another order, raises ``ValueError: Received incompatible
devices for jitted computation``, as a jitted call given ``out_shardings`` on ``m``
does. So the call is that jitted call (``JitVal`` with only its results' shardings: the
``jit_out`` transfer of calls.py, RSH203). ``jax.experimental.shard_map.shard_map(f,
mesh, in_specs, out_specs)`` is the same with positional arguments; ``@jax.shard_map(mesh=m,
...)`` and ``@partial(jax.shard_map, mesh=m, ...)`` decorate (interpreter.apply_decorator).
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Optional

from ...core import vocabulary as api
from .registry import handles
from ..arguments import Call
from ..scope import Scope
from ..values import UNKNOWN, ConstVal, JitVal, MeshVal, PartialVal, QualVal, SeqVal, ShardingVal, SpecVal, Value

if TYPE_CHECKING:
    from ..interpreter import Analyzer


@handles(api.SHARD_MAP)
def _shard_map(an: Analyzer, call: Call, node: ast.Call, scope: Scope) -> Value:
    if call.has_star:
        return UNKNOWN
    if not call.given(0, "f"):
        # @jax.shard_map(mesh=..., ...): a decorator, as partial(jax.shard_map, ...) is.
        return PartialVal(QualVal(api.SHARD_MAP), (), {k: v for k, (v, _) in call.keywords.items()})
    mesh = call.arg(1, "mesh") if call.given(1, "mesh") else None
    return shard_mapped(call.arg(0, "f"), mesh, call.arg(3, "out_specs"), node)


def shard_mapped(func: Value, mesh: Optional[Value], out_specs: Value, node: ast.AST) -> Value:
    """``func`` shard-mapped over ``mesh`` (None, or ``mesh=None``: the context mesh of
    each call), its results placed by ``out_specs``."""
    if mesh is None or isinstance(mesh, ConstVal) and mesh.value is None:
        # Which mesh is read when it is called (jax.set_mesh may differ by then).
        return JitVal(node, UNKNOWN, UNKNOWN, func=func, plain=False, context_specs=out_specs)
    outs = placed(mesh, out_specs, node)
    if outs is None:
        return UNKNOWN
    return JitVal(node, UNKNOWN, outs, func=func, plain=False)


def on_context(an: Analyzer, jit: JitVal, node: ast.AST) -> Value:
    """The results' shardings of a shard_map given no mesh, called here: on the context
    mesh, when the analysis knows it."""
    mesh = an.context_mesh if an.mesh_context else UNKNOWN
    if not isinstance(mesh, MeshVal) or jit.context_specs is None:
        return UNKNOWN
    return placed(mesh, jit.context_specs, node) or UNKNOWN


def placed(mesh: Value, specs: Value, node: ast.AST) -> Optional[Value]:
    """The shardings ``out_specs`` give on ``mesh``: a spec (or one a partial already
    read as the context's sharding), or a tuple of them."""
    if not isinstance(mesh, MeshVal):
        return None
    if isinstance(specs, SpecVal):
        return ShardingVal(node, mesh=mesh, spec=specs)
    if isinstance(specs, ShardingVal) and specs.from_context and specs.spec is not None:
        return ShardingVal(node, mesh=mesh, spec=specs.spec)
    if isinstance(specs, SeqVal) and specs.kind == "tuple" and specs.items:
        items = [placed(mesh, s, node) for s in specs.items]
        shardings = [i for i in items if isinstance(i, ShardingVal)]
        if len(shardings) == len(items):
            return SeqVal(tuple(shardings), "tuple")
    return None
