"""What the crossing rules share: pairing arrays with targets, and their messages.

A transfer event may carry a pytree on either side; ``pairs`` lines up each array
whose mesh is known with its target. Rules then compare the two meshes. The fix that
rebuilds the target on the array's own mesh is helpers/own_mesh.py's.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Iterator, Optional, TypeGuard

from ...analysis.context import FileContext
from ...analysis.render import describe_mesh, mesh_label
from ...analysis.devices import PLATFORMS
from ...core.diagnostic import Diagnostic, Fix, Related
from ...analysis.events import PUT_KINDS, Transfer
from ...analysis.values import ArrayVal, ConstVal, DevVal, MeshVal, SeqVal, ShardingVal, Value
from .own_mesh import Leaf, hint, own_mesh_fix



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
    """An identical layout moved to other processes' devices: JAX tries its cross-host
    transfer, which needs backend support (not CPU) or the transfer socket flag."""
    src, dst = pair.src, pair.dst
    target = pair.target
    if src is None or dst is None or not isinstance(target, ShardingVal):
        return False
    a_spec, t_spec = pair.array.sharding.spec, target.spec
    if pair.array.derived or a_spec is None or t_spec is None:
        pass  # computed, or a spec the analysis does not know: its layout may be the target's
    elif a_spec.code != t_spec.code:
        return False
    return ctx.devices.same_layout_other_processes(src.devices.fn, dst.devices.fn,
                                                   src.devices.sizes + dst.devices.sizes)


def array_label(ctx: FileContext, event: Transfer, pair: Pair) -> str:
    """The moved array as the call writes it (``x``, ``step(x)``, ``x[:4]``); a leaf of a
    pytree by the name it was made under, else ``<array>``."""
    node = event.value_node
    if event.value is pair.array and node is not None and ctx.module.holds(node):
        return ctx.code(node, 30)
    if pair.array.name:
        return pair.array.name
    if node is not None and ctx.module.holds(node):
        path = _leaf_path(event.value, pair.array)
        if path is not None:
            return ctx.code(node, 30) + path  # params[0], params['w']
    return "<array>"


def _leaf_path(tree: Value, leaf: Value, depth: int = 0) -> Optional[str]:
    """Where ``leaf`` sits in ``tree``, as subscripts (``[0]``, ``['w']``); None if not."""
    if not isinstance(tree, SeqVal) or depth > 4:
        return None
    keys = tree.keys if tree.kind == "dict" and len(tree.keys) == len(tree.items) else range(len(tree.items))
    for key, item in zip(keys, tree.items):
        if not isinstance(key, (int, str)):
            return None
        here = f"[{key!r}]"
        if item is leaf:
            return here
        deeper = _leaf_path(item, leaf, depth + 1)
        if deeper is not None:
            return here + deeper
    return None


def sides(ctx: FileContext, pair: Pair) -> str:
    assert pair.src is not None and pair.dst is not None
    return f"from mesh {describe_mesh(ctx, pair.src)} to {describe_mesh(ctx, pair.dst)}"


_PLATFORM_NAMES = {"tpu": "multi-host TPU", "gpu": "GPU", "cpu": "CPU"}


def order_phrase(d: DevVal, platform: str) -> str:
    """What orders the devices of ``d`` on ``platform`` (jax/_src/mesh_utils.py, docs/platforms.md)."""
    if d.order_by == "builder":
        shape = f"shape {d.builder_shape}" if d.builder_shape else "its shape"
        # CPU's builder reshapes the list it is given as it is (jax/_src/mesh_utils.py).
        given = f"the order of the list it is given ({d.builder_input})" if d.builder_input else "enumeration"
        return {"tpu": f"physical position for {shape}", "gpu": "device id"}.get(platform, given)
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


def different_clause(ctx: FileContext, pair: Pair) -> str:
    """' on TPU and GPU (not certain on CPU)' when the sets differ on some target
    platforms only (a filter by device id, whose result depends on how the job numbers its
    devices); empty when they differ on every one."""
    assert pair.src is not None and pair.dst is not None
    on = ctx.different_on(pair.src, pair.dst)
    if not on or set(on) >= set(ctx.platforms):
        return ""
    rest = [p for p in ctx.platforms if p not in on]
    name = {"tpu": "TPU", "gpu": "GPU", "cpu": "CPU"}
    return (f" on {' and '.join(name[p] for p in on)} (not certain on "
            f"{' and '.join(name[p] for p in rest)})")


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


def leaves(event: Transfer) -> tuple[Optional[list[Leaf]], bool]:
    """Every leaf of the moved value with its target, when each is an array on a known mesh
    (else None); and whether the value is, or may be, a pytree (a jitted call's result)."""
    value = event.value
    if isinstance(value, ArrayVal):
        per_leaf = value.derived == "tree"
        if isinstance(event.target, SeqVal) or value.mesh is None:
            return None, per_leaf
        return [(value, event.target)], per_leaf
    if not isinstance(value, SeqVal):
        return None, True
    got = [(p.array, p.target) for p in pairs(event)]
    count = sum(1 for v in _flatten(value) if not (isinstance(v, ConstVal) and v.value is None))
    if not got or len(got) != count or any(a.mesh is None for a, _ in got):
        return None, True  # a leaf that is not an array on a known mesh: no .sharding.mesh to read
    return got, True


def rebuild_on_own_mesh(ctx: FileContext, event: Transfer, pair: Pair) -> Optional[Fix]:
    """The unsafe fix of RSH201 and RSH202: the target built on the array's own mesh
    (per leaf for a pytree), where the result is well-formed (helpers/own_mesh.py).

    Unsafe, as ruff defines it: the result then stays on the array's devices, where the
    user may have meant to move it to the target's (weights to the rollout devices).
    """
    found, per_leaf = leaves(event)
    return own_mesh_fix(ctx, event, found, per_leaf)


def fix_hint(ctx: FileContext, event: Transfer, pair: Pair) -> str:
    found, per_leaf = leaves(event)
    inner = event.through_value
    if event.through is not None and event.value_node is None and inner is not None:
        # A transfer inside another module's function, reported at the call here: the
        # target to rebuild is that function's, on the array as it names it there.
        there = ctx.home(inner)
        if there is not ctx:
            return f"{hint(there, replace(event, value_node=inner), found, per_leaf)} at {ctx.at(event.through)}"
    return hint(ctx, event, found, per_leaf)
