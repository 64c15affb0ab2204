"""What the crossing rules share: pairing arrays with targets, and the safe fix.

A transfer event may carry a pytree on either side; ``pairs`` lines up each array
whose mesh is known with its target. Rules then compare the two meshes.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Iterator, Optional, TypeGuard

from ...analysis import tree
from ...analysis.context import FileContext
from ...analysis.render import describe_mesh, mesh_label, spec_label
from ...analysis.devices import PLATFORMS
from ...analysis.partition import axis_names, spec_axes
from ...core import vocabulary as api
from ...core.diagnostic import Diagnostic, Edit, Fix, Import, Related
from ...analysis.events import PUT_KINDS, Transfer
from ...analysis.values import ArrayVal, DevVal, MeshVal, SeqVal, ShardingVal, Value
from .imports import can_import, import_note, spelled



@dataclass
class Pair:
    array: ArrayVal
    target: Value  # ShardingVal, MeshVal or a single DevVal
    single_leaf: bool  # the event moves one array (so a fix can rewrite the target)

    @property
    def src(self) -> Optional[MeshVal]:
        return self.array.mesh

    @property
    def dst(self) -> Optional[MeshVal]:
        t = self.target
        if isinstance(t, ShardingVal):
            return t.mesh
        if isinstance(t, MeshVal):
            return t
        return None


def pairs(event: Transfer) -> Iterator[Pair]:
    value, target = event.value, event.target
    if isinstance(value, ArrayVal):
        if isinstance(target, SeqVal):
            return
        # A jitted call's result may be a pytree: no ``x.sharding`` to rebuild a target on.
        yield Pair(value, target, value.derived != "tree")
        return
    if isinstance(value, SeqVal):
        items = list(_flatten(value))
        if isinstance(target, SeqVal):
            targets = list(_flatten(target))
            if len(targets) != len(items):
                return
        else:
            targets = [target] * len(items)
        for v, t in zip(items, targets):
            if isinstance(v, ArrayVal):
                yield Pair(v, t, False)


def _flatten(v: Value) -> Iterator[Value]:
    if isinstance(v, SeqVal):
        for i in v.items:
            yield from _flatten(i)
    else:
        yield v


def cross_host_path(ctx: FileContext, pair: Pair) -> bool:
    """An identical layout moved to other processes' devices: JAX may transfer it."""
    src, dst = pair.src, pair.dst
    target = pair.target
    if src is None or dst is None or not isinstance(target, ShardingVal):
        return False
    a_spec, t_spec = pair.array.sharding.spec, target.spec
    if pair.array.derived:
        pass  # computed: its layout may be the target's
    elif a_spec is None or t_spec is None or a_spec.code != t_spec.code:
        return False
    return ctx.devices.same_layout_other_processes(src.devices.fn, dst.devices.fn,
                                                   src.devices.sizes + dst.devices.sizes)


def array_label(ctx: FileContext, event: Transfer, pair: Pair) -> str:
    if pair.single_leaf and isinstance(event.value_node, (ast.Name, ast.Attribute)):
        return ctx.code(event.value_node, 30)
    if pair.array.name:
        return pair.array.name
    if event.value is pair.array and event.value_node is not None:
        return ctx.code(event.value_node, 30)  # a computation's result: step(x), x[:4]
    return "<array>"


def sides(ctx: FileContext, pair: Pair) -> str:
    assert pair.src is not None and pair.dst is not None
    return f"from mesh {describe_mesh(ctx, pair.src)} to {describe_mesh(ctx, pair.dst)}"


_PLATFORM_NAMES = {"tpu": "multi-host TPU", "gpu": "GPU", "cpu": "CPU"}


def order_phrase(d: DevVal, platform: str) -> str:
    """What orders the devices of ``d`` on ``platform`` (jax/_src/mesh_utils.py, docs/platforms.md)."""
    if d.order_by == "builder":
        shape = f"shape {d.builder_shape}" if d.builder_shape else "its shape"
        return {"tpu": f"physical position for {shape}", "gpu": "device id"}.get(
            platform, "enumeration")
    if d.order_by == "id":
        return "device id"
    if d.order_by == "written":
        return f"the reordering written in the code ({d.desc})"
    return "enumeration (process by process)"


def reorder_clause(ctx: FileContext, pair: Pair) -> str:
    """' on TPU (mesh 'a' orders devices by ..., 'b' by ...)' when the orders differ on some
    target platforms only; empty when they differ on every one (a reorder in the code)."""
    assert pair.src is not None and pair.dst is not None
    on = ctx.reordered_on(pair.src, pair.dst)
    if not on or set(on) == set(PLATFORMS):
        return ""  # a reordering written in the code: the same on every platform
    where = " and ".join(_PLATFORM_NAMES[p] for p in on)
    a, b = pair.src, pair.dst
    label_a, label_b = mesh_label(ctx, a), mesh_label(ctx, b)
    return (f" on {where} ({label_a} orders devices by {order_phrase(a.devices, on[0])}, "
            f"{label_b} by {order_phrase(b.devices, on[0])})")


def related(ctx: FileContext, *meshes: Optional[MeshVal]) -> tuple[Related, ...]:
    out = []
    for m in meshes:
        if m is None:
            continue
        where = ctx.locate(m.node)
        if where is None:
            continue
        label = mesh_label(ctx, m, 30)
        out.append(Related(where[1], where[2], f"mesh {label} is built here", where[0]))
    return tuple(out)


def report(code: str, event: Transfer, pair: Pair, message: str, fix: Optional[Fix] = None) -> Diagnostic:
    """A crossing diagnostic at the call, pointing back at where both meshes are built."""
    line, col, end_line, end_col = event.ctx.span(event.node)
    return Diagnostic(code, line, col, message, end_line, end_col, fix=fix,
                      related=related(event.ctx, pair.src, pair.dst))


def is_device(v: Value) -> TypeGuard[DevVal]:
    return isinstance(v, DevVal) and v.single


def spec_code(ctx: FileContext, target: Value) -> Optional[str]:
    """The PartitionSpec of a target, if it can be written at any call site of the file."""
    if not isinstance(target, ShardingVal) or target.spec is None:
        return None
    node = target.spec.node
    # The spec may only use names the module imports (P, jax ...) and literals.
    imported = set(ctx.spellings.values())
    ok = True

    todo: list[ast.AST] = [node]
    while todo and ok:
        n = todo.pop()
        if isinstance(n, ast.Name):
            ok = n.id in imported
        elif isinstance(n, ast.Attribute):
            todo.append(n.value)  # P.UNCONSTRAINED: the attribute's name is not a name of the file
        else:
            # A keyword's or a lambda parameter's name counts as a name the spec reads:
            # a spec with keywords (P('x', unreduced={'y'})) is not written into a fix.
            name = n.arg if isinstance(n, (ast.keyword, ast.arg)) else None
            if name is not None:
                ok = name in imported
            todo.extend(ast.iter_child_nodes(n))
    return ctx.code(node, 10_000) if ok else None


def spec_hint(ctx: FileContext, target: Value) -> Optional[str]:
    """The target's PartitionSpec as a message writes it (``P('x', None)``): a spec of
    literal axes wherever it was built, another where the file can write it at the call
    (``spec_code``)."""
    if not isinstance(target, ShardingVal) or target.spec is None:
        return None
    node = target.spec.node
    literal = isinstance(node, ast.Call) and not node.keywords and all(_axis_literal(a) for a in node.args)
    return spec_label(target.spec) if literal or spec_code(ctx, target) is not None else None


def spec_text(ctx: FileContext, target: Value) -> Optional[tuple[str, tuple[Import, ...]]]:
    """The target's PartitionSpec as this file can write it, with the import it needs.

    The spec's own code where the file can write it (``spec_code``); else, for a spec of
    literal axes (``P('x', None)``, built in another module of the project or with names
    this file lacks), the same call spelled with this file's name for PartitionSpec, or
    with ``P`` and the import ``from jax.sharding import PartitionSpec as P``.
    """
    code = spec_code(ctx, target)
    if code is not None:
        return code, ()
    if not isinstance(target, ShardingVal) or target.spec is None:
        return None
    node = target.spec.node
    if not isinstance(node, ast.Call) or node.keywords or not all(_axis_literal(a) for a in node.args):
        return None
    args = ", ".join(ast.unparse(a) for a in node.args)
    name = spelled(ctx, api.PARTITION_SPEC) or ctx.spell(api.PARTITION_SPEC_SHORT)
    if name is not None:
        return f"{name}({args})", ()
    imports = (Import(api.SHARDING_MODULE, api.PARTITION_SPEC_WORD, api.PARTITION_SPEC_ALIAS),)
    return (f"{api.PARTITION_SPEC_ALIAS}({args})", imports) if can_import(ctx, imports) else None


def _axis_literal(node: ast.AST) -> bool:
    """An axis of a spec as a literal: 'x', None, ('x', 'y')."""
    if isinstance(node, ast.Constant):
        return node.value is None or type(node.value) is str
    if isinstance(node, ast.Tuple):
        return all(isinstance(e, ast.Constant) and type(e.value) is str for e in node.elts)
    return False


def rebuild_on_own_mesh(ctx: FileContext, event: Transfer, pair: Pair) -> Optional[Fix]:
    """``device_put(x, s)`` -> ``device_put(x, NamedSharding(x.sharding.mesh, spec))``.

    Unsafe, as ruff defines it: the result then stays on the array's devices, where the
    user may have meant to move it to the target's (weights to the rollout devices).
    Offered only when every axis the target's spec names is an axis of the array's own
    mesh (``spec_fits_own_mesh``): else JAX raises "Resource axis ... not found in mesh".
    """
    if not pair.single_leaf or event.target_node is None or event.value_node is None:
        return None
    if not spec_fits_own_mesh(pair):
        return None
    if not isinstance(event.value_node, (ast.Name, ast.Attribute)):
        return None
    x = ctx.code(event.value_node, 10_000)
    target = event.target_node
    while isinstance(target, ast.Call) and isinstance(target.func, ast.Attribute) \
            and target.func.attr == "with_memory_kind":
        target = target.func.value  # the sharding itself: the memory kind stays as written
    mesh_arg = _written_mesh_arg(pair.target, target)
    line, col, end_line, end_col = ctx.span(target)
    if mesh_arg is not None and end_line != line:
        # NamedSharding(...) over several lines, written here: only its mesh argument is
        # replaced, so the spec, other arguments and the comments between them stay.
        a_line, a_col, a_end_line, a_end_col = ctx.span(mesh_arg)
        text = f"{x}.sharding.mesh"
        return Fix(title=f"Build the target on the array's own mesh: {text} as its mesh",
                   edits=(Edit(a_line, a_col, a_end_line, a_end_col, text),), safe=False)
    written = spec_text(ctx, pair.target)
    if written is None:
        return None
    spec, spec_imports = written
    imports: list[Import] = list(spec_imports)
    ns = spelled(ctx, api.NAMED_SHARDING) or ctx.spell(api.NAMED_SHARDING_SHORT)
    if ns is None:  # the fix adds `from jax.sharding import NamedSharding`
        ns = api.NAMED_SHARDING_WORD
        imports.append(Import(api.SHARDING_MODULE, api.NAMED_SHARDING_WORD))
    if not can_import(ctx, imports):
        return None
    text = f"{ns}({x}.sharding.mesh, {spec})"
    return Fix(title=f"Build the target on the array's own mesh: {text}{import_note(imports)}",
               edits=(Edit(line, col, end_line, end_col, text),), safe=False, imports=tuple(imports))


def spec_fits_own_mesh(pair: Pair) -> bool:
    """Every axis the target's PartitionSpec names is an axis of the array's own mesh.

    Both are read from literals (``analysis.partition``): the mesh's axis names as its
    ``Mesh(devs, names)`` or ``jax.make_mesh(shape, names)`` call writes them, the spec's
    axes as its ``P(...)`` call does. Anything unknown is not known to fit.
    """
    target, src = pair.target, pair.src
    if not isinstance(target, ShardingVal) or target.spec is None or src is None:
        return False
    used = spec_axes(target.spec)
    if used is None:
        return False
    if not used:
        return True  # P(): replicated, on any mesh
    names = axis_names(src)
    return names is not None and used <= set(names)


def _spec_misses_own_mesh(pair: Pair) -> bool:
    """The target's spec names an axis known not to be one of the array's own mesh."""
    target, src = pair.target, pair.src
    if not isinstance(target, ShardingVal) or target.spec is None or src is None:
        return False
    used, names = spec_axes(target.spec), axis_names(src)
    return used is not None and names is not None and not used <= set(names)


def _written_mesh_arg(target: Value, node: ast.AST) -> Optional[ast.expr]:
    """The mesh argument of ``node`` when ``node`` is the NamedSharding call that built
    ``target`` (first positional argument or ``mesh=``); None otherwise."""
    if not (isinstance(target, ShardingVal) and target.node is node and target.mesh is not None
            and isinstance(node, ast.Call)):
        return None
    args = tree.call_args(node)
    if any(tree.arg_star(a) for a in args):
        return None
    if args and tree.arg_keyword(args[0]) is None:
        return tree.arg_value(args[0])
    for a in args:
        if tree.arg_keyword(a) == api.MESH_KEYWORD:
            return tree.arg_value(a)
    return None


def fix_hint(ctx: FileContext, event: Transfer, pair: Pair) -> str:
    x = array_label(ctx, event, pair)
    spec = spec_hint(ctx, pair.target) or "spec"
    if _spec_misses_own_mesh(pair):
        spec = "spec"  # the target's spec names an axis the array's mesh lacks: not written
    if pair.array.derived == "tree" and pair.src is not None and pair.src.name:
        return f"NamedSharding({pair.src.name}, {spec})"  # a jitted call's results: no .sharding
    return f"NamedSharding({x}.sharding.mesh, {spec})"
