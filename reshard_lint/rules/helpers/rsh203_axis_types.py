"""RSH203 between meshes whose axis types differ: what JAX objects to first.

Part of RSH203 (rsh203_incompatible_devices.py imports it). An eager operation on two
arrays first finds one abstract mesh for its inputs (jax/_src/lax/utils.py
``_get_abstract_mesh_from_avals``, jax 0.10.2): axis sizes, names and types, and the
device kind, but no device order. Two meshes that differ there, unless every axis of both
is Auto, raise "Mesh for all inputs should be equal" on every platform, before any device
is compared. ``Mesh`` gives Auto axes and ``jax.make_mesh`` Explicit ones when no
``axis_types`` is passed: the two most common builders cannot be mixed in one operation.
"""

from __future__ import annotations

import ast
from typing import Optional

from ...analysis.context import FileContext
from ...analysis.partition import axis_names
from ...analysis.render import mesh_label
from ...analysis.tree import arg_star, call_args
from ...analysis.values import MeshVal
from ...core import vocabulary as api

RAISED = "ValueError: Mesh for all inputs should be equal"


def types_differ(a: MeshVal, b: MeshVal) -> bool:
    """The axis types of every axis are known on both sides, and not the same."""
    return a.axis_types is not None and b.axis_types is not None and a.axis_types != b.axis_types


def _default_of(mesh: MeshVal) -> str:
    """``Mesh`` or ``jax.make_mesh`` when the mesh's axis types are that builder's
    default (its call passes no ``axis_types``); empty otherwise."""
    node = mesh.node
    if type(node) is not ast.Call or any(arg_star(a) for a in call_args(node)):
        return ""
    func = node.func
    word = func.attr if type(func) is ast.Attribute else func.id if type(func) is ast.Name else ""
    passed = len(node.args) > 2 or any(k.arg == api.AXIS_TYPES_KEYWORD for k in node.keywords)
    if passed:
        return ""
    if mesh.ctor == api.MESH_WORD and word == api.MESH_WORD and mesh.axis_types == api.AXIS_TYPE_AUTO:
        return api.MESH_WORD
    if mesh.ctor == api.MAKE_MESH and word == api.MAKE_MESH_WORD and mesh.axis_types == api.AXIS_TYPE_EXPLICIT:
        return api.MAKE_MESH
    return ""


def _types_of(ctx: FileContext, mesh: MeshVal) -> str:
    default = _default_of(mesh)
    note = f", the default of {default}" if default else ""
    return f"{mesh_label(ctx, mesh)} has {mesh.axis_types} axes{note}"


def _axis_types_arg(kind: Optional[str], mesh: MeshVal) -> str:
    """``axis_types=(AxisType.Auto,)``, ``(AxisType.Auto,) * 2`` for a mesh of two axes."""
    names = axis_names(mesh)
    times = f" * {len(names)}" if names is not None and len(names) > 1 else ""
    return f"{api.AXIS_TYPES_KEYWORD}=(AxisType.{kind},){times}"


def types_message(ctx: FileContext, what: str, sides: str, reorder: str, order_only_somewhere: bool,
                  x: str, a: MeshVal, b: MeshVal) -> str:
    """The message of an eager operation between an array on ``a`` and one on ``b``.

    ``reorder`` says how their devices differ as well (set or order, and where);
    ``order_only_somewhere``: only on some target platforms, so that making the axis types
    agree is enough where the orders agree (CPU) and not elsewhere.
    """
    types = f"{_types_of(ctx, a)}; {_types_of(ctx, b)}"
    # The mesh to change: the one a builder's default made differ (jax.make_mesh's
    # Explicit against Mesh's Auto), given the other's type.
    change, keep = (a, b) if a.ctor == api.MAKE_MESH and b.ctor != api.MAKE_MESH else (b, a)
    arg = _axis_types_arg(keep.axis_types, change)
    if order_only_somewhere:
        fix = (f"build both meshes the same way (both with jax.make_mesh, or both Mesh over one device "
               f"array); {arg} on {mesh_label(ctx, change)} makes the axis types agree, but the device "
               f"orders still differ{reorder}")
    else:
        fix = (f"jax.device_put('{x}' onto the target's sharding) first, or use one mesh for both "
               f"({arg} on {mesh_label(ctx, change)} alone leaves the devices different)")
    return (f"{what} {sides}, meshes whose axis types differ ({types}): JAX raises \"{RAISED}\" on "
            f"every platform, before it compares devices; {fix}")
