"""Where arrays get their mesh and cross meshes: device_put, array assembly, jit, constraints."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from ...core import vocabulary as api
from . import placement
from .registry import handles
from .. import tree
from ..arguments import Call
from ..events import Site, TransferKind
from ..reasons import CALLBACK_DATA
from .commitments import on_device
from .host import is_host
from .meshes import as_target
from ..scope import Scope
from ..values import (
    ArrayVal, HostVal, JitVal, MeshVal, OwnShardingVal, PartialVal, QualVal, SeqVal, ShardingVal,
    SpecVal, UNKNOWN, Unknown, Value, again, unknown,
)

if TYPE_CHECKING:
    from ..interpreter import Analyzer


@handles(api.DEVICE_PUT)
def _device_put(an: Analyzer, call: Call, node: ast.Call, scope: Scope) -> Value:
    x = call.arg(0, "x")
    if not call.given(1, "device"):
        an.transfer("device_put", node, x, UNKNOWN, call.arg_node(0, "x"), None, an.ctx.code(node.func, 40),
                    untargeted=True)
        return left_in_place(an, x, node)
    target = as_target(an, call.arg(1, "device"), call.arg_node(1, "device"))
    if isinstance(target, QualVal) and target.qual.startswith(api.MEMORY_SPACE_PREFIX):
        target = _same_devices(x, target)
    an.transfer("device_put", node, x, target, call.arg_node(0, "x"), call.arg_node(1, "device"),
                an.ctx.code(node.func, 40))
    return placed(x, target, node)


def _same_devices(x: Value, space: Value) -> Value:
    """``device_put(x, jax.memory.Space.Host)``: x's own devices, another memory
    (observed, jax 0.10.2; RSH201's examples run it under multi-controller JAX)."""
    if isinstance(x, ArrayVal):
        return x.sharding
    if isinstance(x, Unknown) and x is not UNKNOWN:
        return OwnShardingVal(x)
    return space


def left_in_place(an: Analyzer, x: Value, node: ast.Call) -> Value:
    """``device_put(x)`` without a target: host data becomes an uncommitted array, under
    jax.set_mesh too (observed, jax 0.10.2 on 8 CPU devices; RSH201's examples run it
    under multi-controller JAX). A committed array is returned as it is, its sharding
    and commitment unchanged (observed on 8 CPU devices, on a sub-mesh and on all
    devices; jax/_src/dispatch.py returns x itself for the target None). In
    multi-controller JAX a global one raises "When the second argument to device_put is
    a Device, the first argument must be a fully addressable array" there (the target
    None takes the Device path: RSH301) and has no result, so wherever the call returns,
    its result is x."""
    if isinstance(x, Unknown):
        return x
    if isinstance(x, SeqVal):
        return SeqVal(tuple(left_in_place(an, i, node) for i in x.items), x.kind, x.keys)
    if is_host(x):
        return HostVal(an.ctx.lazy_code(node, 40, " (uncommitted)"), node, uncommitted=True)
    if isinstance(x, ArrayVal):
        return x
    return UNKNOWN


def array_on(sharding: Value, node: ast.AST) -> Value:
    """The array a call makes on ``sharding``, when its mesh is known."""
    if isinstance(sharding, ShardingVal) and sharding.mesh is not None:
        return ArrayVal(sharding, node)
    return UNKNOWN


def placed(x: Value, target: Value, node: ast.Call) -> Value:
    committed = on_device(x, target, node)
    if committed is not None:
        return committed
    if isinstance(target, ShardingVal) and target.mesh is not None:
        if isinstance(x, SeqVal):
            return SeqVal(tuple(placed(i, target, node) for i in x.items), x.kind, x.keys)
        return ArrayVal(target, node)
    if isinstance(target, SeqVal) and isinstance(x, SeqVal) and len(x.items) == len(target.items):
        return SeqVal(tuple(placed(i, t, node) for i, t in zip(x.items, target.items)), x.kind)
    return _unplaced(x, target)


def _unplaced(x: Value, target: Value) -> Unknown:
    """An array put where the analysis does not know: for the reason it does not know x
    or the target (the first that gives one), and a binding of its own even when neither
    gives one, so that ``w.sharding`` of the result is recognised as w's own (the same
    devices: ``jax.device_put(w, w.sharding)``, ``NamedSharding(w.sharding.mesh, spec)``)."""
    for v in (x, target):
        if isinstance(v, Unknown) and v.reason:
            return again(v)
    return Unknown()


@handles(api.MAKE_ARRAY_FROM_CALLBACK, api.MAKE_ARRAY_FROM_SINGLE_DEVICE_ARRAYS)
def _from_callback(an: Analyzer, call: Call, node: ast.Call, scope: Scope) -> Value:
    s = as_target(an, call.arg(1, "sharding"), call.arg_node(1, "sharding"))
    # A global array assembled on ``s``: a site for coverage (events.Site), from the
    # per-device arrays given, or from what a callback makes, which the analysis does not run.
    if an.ctx.coverage_sites is None:
        return array_on(s, node)
    if an.current_name == api.MAKE_ARRAY_FROM_CALLBACK:
        callback = call.arg_node(2, "data_callback")
        data: Value = unknown(CALLBACK_DATA, an.ctx.code(callback, 40) if callback is not None else "")
        data_node = None
    else:
        data, data_node = call.arg(2, "arrays"), call.arg_node(2, "arrays")
    an.emit(Site(node=node, ctx=an.ctx, kind="assembly", value=data, target=s, value_node=data_node,
                 target_node=call.arg_node(1, "sharding"), func=an.ctx.lazy_code(node.func, 50)))
    return array_on(s, node)


@handles(api.MAKE_ARRAY_FROM_PROCESS_LOCAL_DATA)
def _from_local(an: Analyzer, call: Call, node: ast.Call, scope: Scope) -> Value:
    s = as_target(an, call.arg(0, "sharding"), call.arg_node(0, "sharding"))
    has_global = call.given(2, "global_shape")
    an.transfer("local_data", node, call.arg(1, "local_data"), s, call.arg_node(1, "local_data"),
                call.arg_node(0, "sharding"), an.ctx.code(node.func, 50), has_global_shape=has_global)
    return array_on(s, node)


@handles("host_local_array_to_global_array")
def _host_to_global(an: Analyzer, call: Call, node: ast.Call, scope: Scope) -> Value:
    x = call.arg(0, "local_inputs")
    mesh = call.arg(1, "global_mesh")
    spec = call.arg(2, "pspecs")
    an.transfer("host_to_global", node, x, mesh, call.arg_node(0, "local_inputs"),
                call.arg_node(1, "global_mesh"), an.ctx.code(node.func, 50))
    if isinstance(mesh, MeshVal):
        sharding = ShardingVal(node, mesh=mesh, spec=spec if isinstance(spec, SpecVal) else None)
        if isinstance(x, SeqVal):
            return SeqVal(tuple(ArrayVal(sharding, node) for _ in x.items), x.kind)
        return ArrayVal(sharding, node)
    return UNKNOWN


@handles(api.JIT)
def _jit(an: Analyzer, call: Call, node: ast.Call, scope: Scope) -> Value:
    ins = as_target(an, call.arg(-1, "in_shardings"), call.arg_node(-1, "in_shardings"))
    outs = as_target(an, call.arg(-1, "out_shardings"), call.arg_node(-1, "out_shardings"))
    return JitVal(node, ins, outs, func=call.arg(0, "fun"),
                  plain=not call.has_star and len(call.positional) <= 1
                  and placement.keeps_placement(call.keywords),
                  sharded=tuple(k for k in api.JIT_SHARDINGS if k in call.keywords))


@handles("functools.partial")
def _partial(an: Analyzer, call: Call, node: ast.Call, scope: Scope) -> Value:
    if not call.positional:
        return UNKNOWN
    func = call.positional[0][0]
    kwargs = {k: as_target(an, v, tree.arg_value(a)) for k, (v, a) in call.keywords.items()}
    return PartialVal(func, tuple(v for v, _ in call.positional[1:]), kwargs, star=call.has_star, made_by=call)


@handles(api.WITH_SHARDING_CONSTRAINT, api.RESHARD)
def _constraint(an: Analyzer, call: Call, node: ast.Call, scope: Scope) -> Value:
    x = call.arg(0, "x")
    target = as_target(an, call.arg(1, "shardings"), call.arg_node(1, "shardings"))
    if not call.given(1, "shardings"):
        target = as_target(an, call.arg(1, "out_shardings"), call.arg_node(1, "out_shardings"))
    kind: TransferKind = "reshard" if an.current_name == api.RESHARD \
        else "constraint"
    an.transfer(kind, node, x, target, call.arg_node(0, "x"), call.arg_node(1, "shardings"),
                an.ctx.code(node.func, 50))
    return array_on(target, node)
