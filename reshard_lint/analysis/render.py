"""How messages write meshes and PartitionSpecs: one short, complete line each.

A mesh a name holds is its name (``'mesh'``); an unnamed one is its constructor call
written again from Python's tree (``Mesh(jax.devices()[::-1], ('x',))``): the device
expression as written without a wrapping ``np.array(...)``, the axis names as a tuple
literal. A spec is ``P('x', None)`` however the file spells it, on one line.
"""

from __future__ import annotations

import ast
from typing import Optional

from ..core import vocabulary as api
from ..core.qualnames import canonical
from .context import FileContext
from .partition import axis_names
from .tree import arg_keyword, arg_star, arg_value, call_args
from .values import MeshVal, SpecVal

# Longest device expression a mesh's rendering writes out; a longer one is ``...``
# (the description of the devices beside it says what they are).
_DEVICES_LIMIT = 48


def _one_line(node: ast.AST) -> str:
    """The expression on one line, as Python writes it back (strings in single quotes,
    no comments, no trailing commas)."""
    return ast.unparse(node)


def _argument(call: ast.Call, index: int, keyword: str) -> Optional[ast.expr]:
    positional = 0
    for a in call_args(call):
        if arg_star(a):
            return None  # f(*args): positions unknown from here on
        name = arg_keyword(a)
        if name == keyword:
            return arg_value(a)
        if name is None:
            if positional == index:
                return arg_value(a)
            positional += 1
    return None


def _is_numpy_array(ctx: FileContext, call: ast.Call) -> bool:
    """``np.array(x)`` / ``np.asarray(x)`` with the one argument, however this file
    imports numpy."""
    if len(call.args) != 1 or call.keywords or type(call.args[0]) is ast.Starred:
        return False
    parts: list[str] = []
    f: ast.expr = call.func
    while type(f) is ast.Attribute:
        parts.append(f.attr)
        f = f.value
    if type(f) is not ast.Name:
        return False
    local = f.id
    for qual, spelled in ctx.spellings.items():
        if spelled == local:
            qual = qual.split(":", 1)[-1]  # "module:numpy" -> "numpy"
            if canonical(".".join([qual, *reversed(parts)])) == api.NP_ARRAY:
                return True
    return False


class _Unwrap(ast.NodeTransformer):
    """``np.array(devs)[::-1]`` -> ``devs[::-1]``; kept under a method or attribute
    (``np.array(devs).reshape(2, 4)``), which a list does not have."""

    def __init__(self, ctx: FileContext) -> None:
        self.ctx = ctx

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        inner = node.value
        if type(inner) is ast.Call and _is_numpy_array(self.ctx, inner):
            inner.args = [self.visit(inner.args[0])]
            return node
        self.generic_visit(node)
        return node

    def visit_Call(self, node: ast.Call) -> ast.AST:
        if _is_numpy_array(self.ctx, node):
            return self.visit(node.args[0])
        self.generic_visit(node)
        return node


def device_expression(ctx: FileContext, node: ast.expr) -> str:
    """A mesh's device argument as written, without the ``np.array(...)`` around it."""
    text = _one_line(node)
    try:
        copy = ast.parse(text, mode="eval").body  # the tree is shared: rewrite a copy
    except (SyntaxError, ValueError, RecursionError):
        copy = None  # (written back by a newer Python's rules than this one parses)
    if copy is not None:
        text = _one_line(_Unwrap(ctx).visit(copy))
    return text if len(text) <= _DEVICES_LIMIT else "..."


def _names_text(node: Optional[ast.expr], mesh: MeshVal) -> Optional[str]:
    names = axis_names(mesh)
    if names is not None:
        return repr(tuple(names))  # ('x',), ('data', 'model')
    return _one_line(node) if node is not None else None


def mesh_expression(ctx: FileContext, mesh: MeshVal) -> Optional[str]:
    """``Mesh(jax.devices()[::-1], ('x',))``, ``jax.make_mesh((8,), ('x',))``: the call
    that built the mesh, shortened; None when it is not a call the models read."""
    call = mesh.node
    if type(call) is not ast.Call:
        return None
    if mesh.ctor == api.MESH_WORD:
        devices = _argument(call, 0, api.DEVICES_WORD)
        names = _argument(call, 1, "axis_names")
        if devices is None or names is None:
            return None
        return f"{api.MESH_WORD}({device_expression(ctx, devices)}, {_names_text(names, mesh)})"
    if mesh.ctor == api.MAKE_MESH:
        shape = _argument(call, 0, "axis_shapes")
        names = _argument(call, 1, "axis_names")
        if shape is None or names is None or any(arg_star(a) for a in call_args(call)):
            return None
        devices = _argument(call, -1, api.DEVICES_WORD)
        given = f", devices={device_expression(ctx, devices)}" if devices is not None else ""
        return f"{_one_line(call.func)}({_one_line(shape)}, {_names_text(names, mesh)}{given})"
    return None


def mesh_label(ctx: FileContext, mesh: MeshVal, limit: int = 40) -> str:
    """``'mesh'``; for a mesh no name holds, the call in this file that made it
    (``serving_mesh(2)``, ``limit`` characters at most), or its constructor
    (``mesh_expression``)."""
    if mesh.name:
        return f"'{mesh.name}'"
    call = ctx.made_by.get(id(mesh))
    if call is not None:
        return ctx.code(call, limit)
    return mesh_expression(ctx, mesh) or ctx.code(mesh.node, max(limit, 60))


def _says(label: str, desc: str) -> bool:
    """The label already shows the devices' description (spaces and quotes aside)."""
    def squeeze(text: str) -> str:
        return "".join(text.split()).replace('"', "'")
    return squeeze(desc) in squeeze(label)


def describe_mesh(ctx: FileContext, mesh: MeshVal) -> str:
    """``'mesh' (line 12, jax.devices())`` for messages; unnamed, the constructor with its
    line: ``Mesh(jax.devices()[::-1], ('x',)) (line 8)`` (and the devices' description
    where the constructor does not show it: ``Mesh(devs, ('x',)) (line 8, jax.devices()[:4])``).
    A mesh another module's function made for a call here: ``'train' (make_mesh(), line 7,
    built at mypkg/meshes.py:8, jax.devices()[:n])``, or unnamed ``serving_mesh(2) (line 9,
    built at ...)``."""
    call = ctx.made_by.get(id(mesh))
    label = mesh_label(ctx, mesh)
    if call is None:
        desc = mesh.devices.desc
        if mesh.name or not _says(label, desc):
            return f"{label} ({ctx.at(mesh.node)}, {desc})"
        return f"{label} ({ctx.at(mesh.node)})"
    named = f"{ctx.code(call, 30)}, " if mesh.name else ""  # unnamed, the label is the call
    built = f"built at {ctx.at(mesh.node)}, {mesh.devices.desc}"
    return f"{label} ({named}{ctx.at(call)}, {built})"


def _literal_entry(node: ast.AST) -> bool:
    """An entry of a spec as a literal: 'x', None, ('x', 'y')."""
    if type(node) is ast.Constant:
        return node.value is None or type(node.value) is str
    if type(node) is ast.Tuple:
        return all(type(e) is ast.Constant and type(e.value) is str for e in node.elts)
    return False


def spec_label(spec: SpecVal) -> str:
    """``P('x', None)``, ``P(('a', 'b'))``, ``P()``: a spec of literal entries, however the
    file spells PartitionSpec and over however many lines; another spec, its code on one
    line."""
    node = spec.node
    if type(node) is ast.Call and not node.keywords and all(_literal_entry(a) for a in node.args):
        return f"{api.PARTITION_SPEC_ALIAS}({', '.join(_one_line(a) for a in node.args)})"
    return _one_line(node)
