"""Arrays committed to one device: device_put onto a Device, and a shard's own data.

``jax.device_put(x, device)`` commits x to that device, and ``x.addressable_shards[i].data``
or ``x.addressable_data(i)`` is an array committed to the one device that holds the shard
(RUNTIME-FACTS.md, "The context mesh"). Such an array has a ``SingleDeviceSharding``:
here an ``ArrayVal`` whose sharding has ``device`` set and no mesh.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional

from .. import devices as dv
from ...core import vocabulary as api
from ..arguments import Call
from ..events import Placement, PlacementKind, Site
from ..scope import Scope
from ..valueops import const_int
from ..values import (
    UNKNOWN, ArrayVal, ConstVal, DevVal, HostVal, IntVal, ShardingVal, Unknown, Value,
)
from .registry import handles

if TYPE_CHECKING:
    from ..interpreter import Analyzer

SHARD_ATTRS = api.SHARD_ATTRS  # addressable_shards: a word of the gate (ONE_MESH_USES)


@dataclass(eq=False)
class ShardsVal(Value):
    """``x.addressable_shards`` of a jax.Array: this process's shards."""

    of: Value
    node: ast.AST


@dataclass(eq=False)
class ShardVal(Value):
    """One element of ``x.addressable_shards``."""

    of: Value
    node: ast.AST


def _is_array_like(v: Value) -> bool:
    """A jax.Array the analysis knows: test doubles of unknown objects have shards too
    (``SimpleNamespace(addressable_shards=[...])`` in tpu-inference's tests)."""
    return isinstance(v, ArrayVal)


def _shard_device(an: "Analyzer", node: ast.AST) -> DevVal:
    # Which local device holds the shard is the array's business; that it is one of this
    # process's devices is certain (the shards are addressable), which is all a rule reads.
    return DevVal(fn=lambda m: dv.local(m).index0(0), desc=f"the device of {an.ctx.code(node, 40)}",
                  node=node, fresh=False, single=True, any_device=True)


def shard_array(an: "Analyzer", node: ast.AST) -> ArrayVal:
    """The array of one addressable shard: committed to one local device."""
    return ArrayVal(ShardingVal(node, device=_shard_device(an, node)), node)


def attribute(an: "Analyzer", base: Value, attr: str, node: ast.Attribute) -> Optional[Value]:
    """``x.addressable_shards``, ``shard.data``, ``shard.device``; None: not one of these."""
    if attr == api.ADDRESSABLE_SHARDS and _is_array_like(base):
        return ShardsVal(base, node)
    if isinstance(base, ShardVal):
        if attr == api.SHARD_DATA:
            return shard_array(an, node)
        if attr == api.SHARD_DEVICE:
            return _shard_device(an, node)
    return None


def subscript(base: Value, parts: list[object], node: ast.Subscript) -> Optional[Value]:
    """``x.addressable_shards[i]``: one shard."""
    if isinstance(base, ShardsVal) and len(parts) == 1 and isinstance(parts[0], IntVal) \
            and const_int(parts[0]) is not None:
        return ShardVal(base.of, node)
    return None


def element(it: Value, node: ast.AST) -> Optional[Value]:
    """The loop variable of ``for shard in x.addressable_shards``."""
    return ShardVal(it.of, node) if isinstance(it, ShardsVal) else None


def method(an: "Analyzer", recv: Value, name: str, node: ast.Call) -> Optional[Value]:
    """``x.addressable_data(i)``: the array of this process's i-th shard."""
    if name == api.ADDRESSABLE_DATA and _is_array_like(recv):
        return shard_array(an, node)
    return None


def on_device(x: Value, target: Value, node: ast.Call) -> Optional[Value]:
    """``jax.device_put(x, device)``: x committed to that device, every leaf of it when x
    is a pytree the analysis does not know (as a put on a mesh, transfers.placed)."""
    if isinstance(x, (ArrayVal, HostVal, IntVal, Unknown)) or (isinstance(x, ConstVal) and isinstance(x.value, (int, float))):
        return committed_to(target, node)
    return None


def committed_to(target: Value, node: ast.AST) -> Optional[ArrayVal]:
    """An array made on ``target`` when it is one device (or ``SingleDeviceSharding(device)``)."""
    if isinstance(target, ShardingVal) and target.mesh is None and target.device is not None:
        return ArrayVal(target, node)
    if isinstance(target, DevVal) and target.single:
        return ArrayVal(ShardingVal(node, device=target), node)
    return None


def single_device(v: Value) -> Optional[DevVal]:
    """The device an array is committed to, when it is one device."""
    if isinstance(v, ArrayVal) and v.sharding.mesh is None and v.sharding.device is not None \
            and v.sharding.device.single:
        return v.sharding.device
    return None


def one_device(target: Value) -> Optional[DevVal]:
    """The device a target names when it is one device: a ``Device`` or a
    ``SingleDeviceSharding(device)``."""
    if isinstance(target, ShardingVal) and target.mesh is None and isinstance(target.device, DevVal) \
            and target.device.single:
        return target.device
    if isinstance(target, DevVal) and target.single:
        return target
    return None


def placed(an: "Analyzer", kind: PlacementKind, node: ast.AST, target: Value,
           target_node: Optional[ast.AST]) -> None:
    """An event for code that puts its results on ``target`` whatever its operands, when
    that is one device (RSH306 reads where that device comes from)."""
    device = one_device(target)
    if device is not None:
        an.emit(Placement(node=node, ctx=an.ctx, kind=kind, device=device, target_node=target_node,
                          func=an.ctx.lazy_code(getattr(node, "func", node), 40)))


@handles(api.DEFAULT_DEVICE)
def _default_device(an: "Analyzer", call: Call, node: ast.Call, scope: Scope) -> Value:
    # ``with jax.default_device(d):`` computations there with no committed operand run on
    # d (uncommitted); committed operands keep theirs (2 processes on loopback:
    # tests/multicontroller/test_global_device.py).
    placed(an, "context", node, call.arg(0, "device"), call.arg_node(0, "device"))
    if an.ctx.coverage_sites is not None:
        # A site for coverage (events.Site), with no value moved: harmless where the
        # device is this process's own (verdicts.py); the scope itself is not modelled.
        an.emit(Site(node=node, ctx=an.ctx, kind="default_device", value=UNKNOWN, target=call.arg(0, "device"),
                     value_node=None, target_node=call.arg_node(0, "device"), func=an.ctx.lazy_code(node.func, 50)))
    return UNKNOWN
