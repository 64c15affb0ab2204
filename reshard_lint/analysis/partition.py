"""Which processes hold which part of an array: mesh axis names against a PartitionSpec.

An array sharded over a mesh axis is split into pieces along that axis; a process holds
the whole value only if its devices carry every piece (JAX's
``_process_has_full_value_in_mcjax``, jax/_src/array.py). Replicated arrays (``P()``) and
arrays sharded only over axes that stay inside each process are whole everywhere.
Everything here reads literals only (axis names and spec entries spelled in the
source); anything else is unknown.
"""

from __future__ import annotations

import ast
import itertools
from typing import Optional

from ..core import vocabulary as api
from . import devices as dv
from .context import FileContext
from .tree import arg_keyword, arg_star, arg_value, call_args, is_none, plain_string
from .values import ArrayVal, MeshVal, SpecVal


def _strings(node: Optional[ast.expr]) -> Optional[tuple[str, ...]]:
    """A string literal or a tuple/list of them."""
    if type(node) is ast.Constant:
        value = plain_string(node)
        return (value,) if value is not None else None
    if type(node) is ast.Tuple or type(node) is ast.List:
        out: list[str] = []
        for el in node.elts:
            if type(el) is ast.Starred:
                return None
            got = _strings(el)
            if got is None or len(got) != 1:
                return None
            out.append(got[0])
        return tuple(out)
    return None


def _arg(call: ast.Call, index: int, keyword: str) -> Optional[ast.expr]:
    args = call_args(call)
    for a in args:
        if arg_keyword(a) == keyword:
            return arg_value(a)
    positional = [a for a in args if arg_keyword(a) is None and not arg_star(a)]
    return arg_value(positional[index]) if index < len(positional) else None


def axis_names(mesh: MeshVal) -> Optional[tuple[str, ...]]:
    """The axis names of ``Mesh(devs, names)`` or ``jax.make_mesh(shape, names)``."""
    if mesh.axes is not None:
        return mesh.axes
    if type(mesh.node) is not ast.Call or mesh.ctor not in (api.MESH_WORD, api.MAKE_MESH):
        return None
    return _strings(_arg(mesh.node, 1, "axis_names"))


def spec_axes(spec: SpecVal) -> Optional[set[str]]:
    """The mesh axes a literal ``PartitionSpec(...)`` shards over."""
    node = spec.node
    if type(node) is not ast.Call:
        return None
    used: set[str] = set()
    for a in call_args(node):
        if isinstance(a, ast.keyword) or arg_star(a):  # (a keyword: a name or **)
            return None
        if is_none(a):
            continue
        got = _strings(a)
        if got is None:
            return None
        used.update(got)
    return used


def spec_entries(spec: SpecVal) -> Optional[tuple[tuple[str, ...], ...]]:
    """The mesh axes of each dimension of a ``PartitionSpec(...)``, from its arguments'
    values where the analysis knows them (``P(axis)``), else from its literal:
    ``P('x', None, ('a', 'b'))`` is ``(('x',), (), ('a', 'b'))``."""
    if spec.entries is not None:
        return spec.entries
    node = spec.node
    if type(node) is not ast.Call:
        return None
    out: list[tuple[str, ...]] = []
    for a in call_args(node):
        if isinstance(a, ast.keyword) or arg_star(a):
            return None
        if is_none(a):
            out.append(())
            continue
        got = _strings(a)
        if got is None:
            return None
        out.append(got)
    return tuple(out)


def _whole_on_every_process(arr: dv.DevArr, model: dv.Model, positions: list[int]) -> bool:
    held: dict[int, set[tuple[int, ...]]] = {}
    every: set[tuple[int, ...]] = set()
    for index, device in zip(itertools.product(*(range(n) for n in arr.shape)), arr.flat):
        piece = tuple(index[p] for p in positions)
        held.setdefault(model.process_of(device), set()).add(piece)
        every.add(piece)
    return all(pieces == every for pieces in held.values())


def split_across_processes(ctx: FileContext, array: ArrayVal) -> bool:
    """True only when, on every topology that builds the mesh, some process lacks a piece."""
    mesh, spec = array.mesh, array.sharding.spec
    if mesh is None or spec is None:
        return False
    names = axis_names(mesh)
    used = spec_axes(spec)
    if names is None or used is None or not used or not used <= set(names):
        return False
    positions = [names.index(n) for n in sorted(used)]
    seen = False
    for model in dv.models_for(mesh.devices.sizes):
        arr = ctx.devices.run(mesh.devices.fn, model)
        if arr is None:
            continue
        if arr.ndim != len(names) or _whole_on_every_process(arr, model, positions):
            return False
        seen = True
    return seen


def whole_on_every_process(ctx: FileContext, array: ArrayVal) -> bool:
    """True only when every process of the job can read the whole value on every topology
    of every target platform that builds the mesh: a mesh of this process's devices alone
    (each process reads its own array), or one on which every process holds every piece
    (replicated, ``P()``, or sharded only over axes inside each process, over devices of
    every process). A topology that cannot build the mesh does not count; at least one must."""
    mesh, spec = array.mesh, array.sharding.spec
    if mesh is None:
        return False
    if ctx.locality(mesh) == "local":
        return True
    used = spec_axes(spec) if spec is not None else None
    names = axis_names(mesh)
    if used is None or used and (names is None or not used <= set(names)):
        return False
    positions = [names.index(n) for n in sorted(used)] if used and names is not None else []
    seen = False
    for model in dv.models_for(mesh.devices.sizes, ctx.platforms):
        arr = ctx.devices.run(mesh.devices.fn, model)
        if arr is None:
            if ctx.devices.undecided(mesh.devices.fn, model):
                return False
            continue  # a topology that cannot build the mesh never reads it
        if not arr.flat or used and (arr.order or names is not None and arr.ndim != len(names)):
            return False  # (a stand-in order places no piece)
        if {model.process_of(i) for i in arr.flat} != set(range(model.processes)) \
                or not _whole_on_every_process(arr, model, positions):
            return False
        seen = True
    return seen
