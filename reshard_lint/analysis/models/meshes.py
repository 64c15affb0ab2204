"""Meshes, shardings and the context mesh: Mesh, make_mesh, mesh_utils, NamedSharding, set_mesh."""

from __future__ import annotations

import ast
import math

from typing import TYPE_CHECKING, Optional

from ...core import vocabulary as api
from ...core.qualnames import canonical
from .registry import handles
from .. import devices as dv
from ..arguments import Call
from ..events import BuilderShape, MeshBuilt, ShardingBuilt
from ..scope import Scope
from ..shard_indices import names_of
from ..valueops import literal_shape, literal_sizes, ordered, shape_fns
from ..values import (
    ConstVal, DevVal, MeshContextVal, MeshVal, OwnShardingVal, QualVal, SeqVal, ShardingVal, SpecVal, UNKNOWN, Value,
    undecidable,
)

if TYPE_CHECKING:
    from ..interpreter import Analyzer


@handles(api.MESH)
def _mesh(an: Analyzer, call: Call, node: ast.Call, scope: Scope) -> Value:
    devs = call.arg(0, "devices")
    if ordered(devs):
        f = devs.fn
        d = devs.derive(lambda m: f(m).as_array(), devs.desc)
        d.reorders, d.shuffle, d.from_mesh, d.fresh = devs.reorders, devs.shuffle, devs.from_mesh, devs.fresh
    else:
        d = DevVal(fn=undecidable, desc=an.ctx.code(call.arg_node(0, "devices") or node, 40), node=node)
        d.fresh = False
    mesh = MeshVal(devices=d, node=node, ctor=api.MESH_WORD, sizes=d.sizes, name=an.name_for(node),
                   axes=names_of(call.arg(1, "axis_names")),
                   axis_types=axis_types(an, call, 2, api.AXIS_TYPE_AUTO, scope))
    an.ctx.mesh_roots.add(id(d.fn))
    an.emit(MeshBuilt(node=node, ctx=an.ctx, mesh=mesh))
    return mesh


def _physical(an: Analyzer, call: Call, node: ast.Call, shape_v: Value, devs: Value,
              given: bool, exact: bool = False) -> DevVal:
    """The device array of make_mesh/create_device_mesh: the platform's order of a known set.

    The order is the platform's (TPU: physical coordinates and the shape, GPU: sorted by
    id, CPU: as given, ``dv.builder_order``), with or without explicit devices. ``jax.make_mesh`` first takes
    ``devices[:prod(shape)]`` (jax/_src/sharding_impls.py ``make_mesh``: ``elif
    axis_size < len(devices): devices = devices[:axis_size]``) on every platform, so which
    devices a shorter mesh holds follows the given order everywhere.
    """
    fns = shape_fns(shape_v)
    sizes = literal_sizes(shape_v)
    opaque = False
    if fns is None:
        return DevVal(fn=undecidable, desc=an.ctx.code(node, 60), node=node)
    if given:
        if not (ordered(devs)):
            return DevVal(fn=undecidable, desc=an.ctx.code(node, 60), node=node, fresh=False)
        src = devs.fn
        # Laid over a part of the devices, the shape says nothing of the job's size.
        sizes = (sizes if dv.every_device(src) else ()) + devs.sizes
        # A shuffle, a sort by another key or a set's order is a stand-in permutation:
        # the first devices of it are not a set the linter knows.
        opaque = devs.shuffle is not None or any(
            "sorted(" in r or r.startswith(("list(", "tuple(")) for r in devs.reorders)
    else:
        src = dv.natural

    def build(m: dv.Model) -> dv.DevArr:
        shape = [g(m) for g in fns]
        arr = src(m).ravel()
        total = math.prod(shape)
        if total > len(arr.flat) or (exact and total != len(arr.flat)):
            # make_mesh takes the first prod(shape) devices; create_device_mesh needs all.
            raise dv.ModelError("the mesh shape does not fit the devices")
        ids = arr.flat[:total]
        if given and (opaque or arr.order) and total < len(arr.flat):
            raise dv.Undecided("the first devices of an unknown permutation")
        if arr.order and m.platform == "cpu":
            raise dv.Undecided("the given order, which the analysis does not know")
        return dv.builder_order(ids, shape, m)

    desc = an.ctx.code(node, 60)
    fresh = devs.fresh if isinstance(devs, DevVal) else True
    platforms = devs.platforms if isinstance(devs, DevVal) else frozenset({"default"})
    literal = literal_shape(shape_v)
    out = DevVal(fn=build, desc=desc, node=node, fresh=fresh, sizes=sizes, platforms=platforms,
                 order_by="builder", builder_shape=literal or (),
                 builder_input=devs.desc if given and isinstance(devs, DevVal) else "")
    if given and isinstance(devs, DevVal) and devs.reorders and (devs.shuffle is None or devs.shuffle.agreed):
        # CPU lays the devices out in the order given (GPU sorts them by id, TPU by
        # coordinates): a reordering written into the list is one on CPU (RSH102 says so).
        # A shuffle no seed shares is not carried: its order is the platform's on GPU and
        # TPU, and on CPU each process's own (RSH101 leaves builders alone).
        out.reorders, out.steps, out.from_mesh = devs.reorders, devs.steps, devs.from_mesh
    return out


def axis_types(an: Analyzer, call: Call, index: int, default: str, scope: Scope) -> Optional[str]:
    """The type of every axis of the mesh a call builds: ``default`` when it passes no
    ``axis_types``; the member of ``AxisType`` it passes for every axis
    (``(AxisType.Explicit,)``, ``(AxisType.Auto,) * n``, ``AxisType.Auto``); None when
    the axes' types are mixed or not literal."""
    node = call.arg_node(index, api.AXIS_TYPES_KEYWORD)
    if node is None:
        return None if call.has_star else default
    value = call.arg(index, api.AXIS_TYPES_KEYWORD)
    if type(node) is ast.BinOp and type(node.op) is ast.Mult:
        # (AxisType.Auto,) * n: the element, read again (an attribute of a module: no event)
        literal = next((side for side in (node.left, node.right) if type(side) in (ast.Tuple, ast.List)), None)
        if literal is None or not all(type(e) in (ast.Attribute, ast.Name) for e in literal.elts):  # type: ignore[attr-defined]
            return None
        value = SeqVal(tuple(an.eval(e, scope) for e in literal.elts))  # type: ignore[attr-defined]
    items = value.items if isinstance(value, SeqVal) else (value,)
    kinds = {_axis_type(v) for v in items}
    return kinds.pop() if len(kinds) == 1 else None


def _axis_type(v: Value) -> Optional[str]:
    """``Auto`` for ``jax.sharding.AxisType.Auto`` however imported; None otherwise."""
    if not isinstance(v, QualVal):
        return None
    base, _, member = v.qual.rpartition(".")
    return member if canonical(base) == api.AXIS_TYPE and member in api.AXIS_TYPE_MEMBERS else None


def _shaped(an: Analyzer, node: ast.Call, shape_v: Value, devs: Value, given: bool, exact: bool) -> None:
    """A BuilderShape event where the shape's size and the devices are known functions of
    the topology (a shape of this process's device count over every process's devices is
    RSH307's)."""
    fns = shape_fns(shape_v)
    if fns is None or (given and not ordered(devs)):
        return
    src = devs.fn if given and isinstance(devs, DevVal) else dv.natural
    sizes = literal_sizes(shape_v) + (devs.sizes if given and isinstance(devs, DevVal) else ())
    an.emit(BuilderShape(node=node, ctx=an.ctx, size=lambda m: math.prod(f(m) for f in fns), devices=src,
                         sizes=tuple(sizes), exact=exact, func=an.ctx.lazy_code(node.func, 40)))


@handles(api.MAKE_MESH)
def _make_mesh(an: Analyzer, call: Call, node: ast.Call, scope: Scope) -> Value:
    given = call.given(-1, "devices")
    _shaped(an, node, call.arg(0, "axis_shapes"), call.arg(-1, "devices"), given, exact=False)
    return make_mesh_value(an, call, node, call.arg(0, "axis_shapes"), call.arg(-1, "devices"), given,
                           axes=names_of(call.arg(1, "axis_names")),
                           types=axis_types(an, call, 2, api.AXIS_TYPE_EXPLICIT, scope))


def make_mesh_value(an: Analyzer, call: Call, node: ast.Call, shape_v: Value, devs: Value, given: bool,
                    name: Optional[str] = None, axes: Optional[tuple[str, ...]] = None,
                    types: Optional[str] = None) -> MeshVal:
    """The mesh jax.make_mesh builds for this shape (and the devices given, if any), with
    ``types`` the type of every axis (``axis_types``)."""
    d = _physical(an, call, node, shape_v, devs, given)
    mesh = MeshVal(devices=d, node=node, ctor=api.MAKE_MESH, sizes=d.sizes, name=name or an.name_for(node),
                   axes=axes, axis_types=types)
    an.ctx.mesh_roots.add(id(d.fn))
    an.emit(MeshBuilt(node=node, ctx=an.ctx, mesh=mesh))
    return mesh


@handles(api.CREATE_DEVICE_MESH)
def _create_device_mesh(an: Analyzer, call: Call, node: ast.Call, scope: Scope) -> Value:
    shape_v = call.arg(0, "mesh_shape")
    given = call.given(1, "devices")
    if call.given(2, "contiguous_submeshes"):
        return DevVal(fn=undecidable, desc=an.ctx.code(node, 60), node=node)
    _shaped(an, node, shape_v, call.arg(1, "devices"), given, exact=True)
    return _physical(an, call, node, shape_v, call.arg(1, "devices"), given, exact=True)


@handles(api.CREATE_HYBRID_DEVICE_MESH)
def _create_hybrid(an: Analyzer, call: Call, node: ast.Call, scope: Scope) -> Value:
    return DevVal(fn=undecidable, desc=an.ctx.code(node, 60), node=node)


@handles(api.PARTITION_SPEC)
def _pspec(an: Analyzer, call: Call, node: ast.Call, scope: Scope) -> Value:
    return SpecVal(node, an.ctx.lazy_code(node, 60), _entries(call))


def _entries(call: Call) -> Optional[tuple[tuple[str, ...], ...]]:
    """What ``PartitionSpec(...)``'s arguments name, per dimension, where each is known:
    None, a string, or a tuple or list of strings."""
    if call.keywords or call.has_star:
        return None
    out: list[tuple[str, ...]] = []
    for v, _ in call.positional:
        if isinstance(v, ConstVal) and v.value is None:
            out.append(())
        elif isinstance(v, ConstVal) and type(v.value) is str:
            out.append((v.value,))
        elif isinstance(v, SeqVal) and v.kind in ("tuple", "list") and not v.changed \
                and all(isinstance(i, ConstVal) and type(i.value) is str for i in v.items):
            out.append(tuple(i.value for i in v.items))  # type: ignore[attr-defined]
        else:
            return None
    return tuple(out)


@handles(api.NAMED_SHARDING)
def _named_sharding(an: Analyzer, call: Call, node: ast.Call, scope: Scope) -> Value:
    first = call.arg(0, "mesh")
    first_node = call.arg_node(0, "mesh")
    spec = call.arg(1, "spec")
    if first_node is not None:
        an.emit(ShardingBuilt(node=node, ctx=an.ctx, first=first, first_node=first_node,
                              spec_node=call.arg_node(1, "spec")))
    if isinstance(first, MeshVal):
        return ShardingVal(node, mesh=first, spec=spec if isinstance(spec, SpecVal) else None)
    if isinstance(first, OwnShardingVal) and first.mesh:
        # NamedSharding(x.sharding.mesh, spec) of an x the analysis does not know: x's
        # own devices in their order, whatever they are.
        return OwnShardingVal(first.of)
    return UNKNOWN


@handles(api.SINGLE_DEVICE_SHARDING)
def _single_sharding(an: Analyzer, call: Call, node: ast.Call, scope: Scope) -> Value:
    d = call.arg(0, "device")
    if isinstance(d, DevVal) and d.single:
        return ShardingVal(node, device=d)
    return UNKNOWN


@handles(api.SET_MESH)
def _set_mesh(an: Analyzer, call: Call, node: ast.Call, scope: Scope) -> Value:
    m = call.arg(0, "mesh")
    an.mesh_context = True
    if not isinstance(m, MeshVal):
        an.context_mesh = UNKNOWN
        return UNKNOWN
    # As a statement, set_mesh sets the mesh for what follows; `with` narrows it again.
    an.context_mesh = m
    an.context_site = MeshContextVal(m, node)
    return an.context_site


def as_target(an: Analyzer, v: Value, node: Optional[ast.AST]) -> Value:
    """A device_put target: a bare PartitionSpec means the context mesh."""
    if isinstance(v, SpecVal) and isinstance(an.context_mesh, MeshVal):
        return ShardingVal(node, mesh=an.context_mesh, spec=v, from_context=True)
    if isinstance(v, SeqVal):
        return SeqVal(tuple(as_target(an, i, node) for i in v.items), v.kind, v.keys)
    return v
