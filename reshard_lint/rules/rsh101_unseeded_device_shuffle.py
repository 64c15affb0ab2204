"""RSH101: a mesh built from devices shuffled differently on every process."""

from __future__ import annotations

import ast
from typing import Iterable

from ..analysis import tree
from ..analysis.context import FileContext
from ..analysis.render import describe_mesh
from ..core.diagnostic import Diagnostic, Edit, Fix
from ..analysis.events import MeshBuilt
from .base import Grounding, Invalid, Outcome, Rule, Valid

_HEAD = """\
import random
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
"""


class UnseededDeviceShuffle(Rule):
    code = "RSH101"
    name = "unseeded-device-shuffle"
    summary = "mesh built from devices shuffled by an unseeded or per-process random generator"
    priority = 20
    fix_safety = "unsafe"
    events = (MeshBuilt,)
    runtimes = ("multi-controller",)
    what = 'Flags a `Mesh` built from a device list that was shuffled or permuted by a random generator that is unseeded (`random.shuffle`, `np.random.permutation` without `np.random.seed(const)`, `np.random.default_rng()`) or seeded per process (`default_rng(jax.process_index())`), also as indices (`np.array(devs)[np.random.permutation(n)]`); and a list made from a set of devices (`list(x.devices())`, `list(s.device_set)`, whatever `x` is), whose order follows the hashes of the devices: with 2 processes of 4 CPU devices each process listed the same set in its own order. Devices handed to `jax.make_mesh(..., devices=...)` or `mesh_utils.create_device_mesh` are not flagged: GPU and TPU reorder them by id or physical coordinates.'
    why = 'In multi-controller JAX every process runs the same program and must build the same mesh. A shuffle that is not seeded identically everywhere gives each process its own device order, so the processes disagree on which device holds which shard. Nothing fails at construction; the first collective then waits for peers that never join and ends in a deadline error (gloo `DEADLINE_EXCEEDED` on CPU) after tens of seconds, or hangs a TPU job.'
    fix_text = 'Unsafe. The fix removes the shuffle (an in-place `random.shuffle(devs)` statement is deleted, a permutation call is replaced by its input), which changes which device holds which shard. Review it when the shuffle was meant to spread load; a fixed seed shared by all processes is the alternative.'
    references = ('RUNTIME-FACTS.md: unseeded `random.shuffle(devs)` before building the mesh', 'Observed with jax 0.10.2, 2 processes x 4 CPU devices: `list(x.devices())` is `[0, 2051, 2050, 2, ...]` on process 0 and `[2, 2050, 2048, 2051, ...]` on process 1; a mesh built from it fails its first collective with gloo `DEADLINE_EXCEEDED`')

    # The event type narrower than Rule.check's: the engine hands a rule only the events
    # its `events` names (mypy takes that for an unsafe override).
    def check(self, event: MeshBuilt) -> Iterable[Diagnostic]:  # type: ignore[override]
        ctx, mesh = event.ctx, event.mesh
        shuffle = mesh.devices.shuffle
        if shuffle is None or shuffle.agreed:
            return
        line, col, end_line, end_col = ctx.span(event.node)
        if _lists_a_set(shuffle.node):
            msg = (
                f"mesh {describe_mesh(ctx, mesh)} is built from {shuffle.how} ("
                f"{ctx.at(shuffle.node)}), a set listed in its iteration order, which follows the "
                "devices' hashes and differs between processes: every process builds a different mesh "
                "and the first collective hangs until a deadline error; list the devices in a fixed "
                "order, e.g. x.sharding.mesh.devices or sorted(..., key=lambda d: d.id)"
            )
            yield Diagnostic(self.code, line, col, msg, end_line, end_col)
            return
        msg = (
            f"mesh {describe_mesh(ctx, mesh)} is built from devices shuffled by "
            f"{shuffle.how} ({ctx.at(shuffle.node)}) with no seed shared by all processes: "
            "every process builds a different mesh and the first collective hangs until a "
            "deadline error; do not shuffle devices, or permute them with a fixed seed shared "
            "by all processes"
        )
        yield Diagnostic(self.code, line, col, msg, end_line, end_col, fix=_drop_shuffle(ctx, shuffle.node))

    examples = (
        Invalid(_HEAD + """
devs = jax.devices()
random.shuffle(devs)
mesh = Mesh(np.array(devs), ('x',))  # RSH101:8
x = jax.device_put(np.arange(8.0), NamedSharding(mesh, P('x')))
print(jax.jit(lambda a: a.sum())(x))
""", fixed=_HEAD + """
devs = jax.devices()
mesh = Mesh(np.array(devs), ('x',))  # RSH101:8
x = jax.device_put(np.arange(8.0), NamedSharding(mesh, P('x')))
print(jax.jit(lambda a: a.sum())(x))
"""),
        Invalid(_HEAD + """
rng = np.random.default_rng(jax.process_index())
mesh = Mesh(rng.permutation(jax.devices()), ('x',))  # RSH101:8
x = jax.device_put(np.arange(8.0), NamedSharding(mesh, P('x')))
print(jax.jit(lambda a: a.sum())(x))
""", fixed=_HEAD + """
rng = np.random.default_rng(jax.process_index())
mesh = Mesh(jax.devices(), ('x',))  # RSH101:8
x = jax.device_put(np.arange(8.0), NamedSharding(mesh, P('x')))
print(jax.jit(lambda a: a.sum())(x))
"""),
        Invalid(_HEAD + """
order = np.random.permutation(jax.devices())
mesh = Mesh(order, ('x',))  # RSH101:8
x = jax.device_put(np.arange(8.0), NamedSharding(mesh, P('x')))
print(jax.jit(lambda a: a.sum())(x))
""", fixed=_HEAD + """
order = jax.devices()
mesh = Mesh(order, ('x',))  # RSH101:8
x = jax.device_put(np.arange(8.0), NamedSharding(mesh, P('x')))
print(jax.jit(lambda a: a.sum())(x))
"""),
        Invalid(_HEAD + """
devs = np.array(jax.devices())
mesh = Mesh(devs[np.random.permutation(jax.device_count())], ('x',))  # RSH101:8
x = jax.device_put(np.arange(8.0), NamedSharding(mesh, P('x')))
print(jax.jit(lambda a: a.sum())(x))
""", fixed=_HEAD + """
devs = np.array(jax.devices())
mesh = Mesh(devs, ('x',))  # RSH101:8
x = jax.device_put(np.arange(8.0), NamedSharding(mesh, P('x')))
print(jax.jit(lambda a: a.sum())(x))
"""),
        Invalid(_HEAD + """
# x comes out of a jitted call the linter does not follow; list() of its device set
# gives each process its own (hash) order: observed [0, 2051, 2050, 2, ...] on
# process 0 and [2, 2050, 2048, 2051, ...] on process 1.
base = Mesh(np.array(jax.devices()), ('x',))
x = jax.jit(lambda a: a + 1)(jax.device_put(np.arange(8.0), NamedSharding(base, P('x'))))
mesh = Mesh(np.array(list(x.devices())), ('x',))  # RSH101:8
y = jax.device_put(np.arange(8.0), NamedSharding(mesh, P('x')))
print(jax.jit(lambda a: a.sum())(y))
"""),
        Invalid(_HEAD + """
def mesh_of(arr):
    return Mesh(np.array(list(arr.sharding.device_set)), ('x',))  # RSH101:12

base = Mesh(np.array(jax.devices()), ('x',))
x = jax.device_put(np.arange(8.0), NamedSharding(base, P('x')))
m = mesh_of(x)
print('order:', [d.id for d in m.devices.flat], flush=True)
y = jax.device_put(np.arange(8.0), NamedSharding(m, P('x')))
print(jax.jit(lambda a: a.sum())(y))
""", hash_order=True),
        Valid(_HEAD + """
# A set sorted by device id has one order on every process.
base = Mesh(np.array(jax.devices()), ('x',))
x = jax.jit(lambda a: a + 1)(jax.device_put(np.arange(8.0), NamedSharding(base, P('x'))))
mesh = Mesh(np.array(sorted(x.devices(), key=lambda d: d.id)), ('x',))
y = jax.device_put(np.arange(8.0), NamedSharding(mesh, P('x')))
print(jax.jit(lambda a: a.sum())(y), len(list(x.devices())))
"""),
        Valid(_HEAD + """
# A permutation of the data (seeded: the same data on every process), not of the devices.
np.random.seed(0)
mesh = Mesh(np.array(jax.devices()), ('x',))
order = np.random.permutation(8)
x = jax.device_put(np.arange(8.0)[order], NamedSharding(mesh, P('x')))
print(jax.jit(lambda a: a.sum())(x))
"""),
        Valid(_HEAD + """
# A shared seed: every process builds the same (reordered) mesh.
rng = np.random.default_rng(0)
mesh = Mesh(rng.permutation(jax.devices()), ('x',))  # RSH102:8
x = jax.device_put(np.arange(8.0), NamedSharding(mesh, P('x')))
print(jax.jit(lambda a: a.sum())(x))
"""),
        Valid(_HEAD + """
random.seed(1234)
devs = jax.devices()
random.shuffle(devs)
mesh = Mesh(np.array(devs), ('x',))  # RSH102:8
print(mesh.shape)
"""),
        Valid(_HEAD + """
# Shuffling the data, not the devices.
indices = list(range(8))
random.shuffle(indices)
mesh = Mesh(np.array(jax.devices()), ('x',))
x = jax.device_put(np.array(indices, dtype=np.float32), NamedSharding(mesh, P('x')))
print(x.sum())
"""),
        Valid(_HEAD + """
devs = jax.devices()
print('a random device order, for the log only:', random.sample(devs, len(devs)))
mesh = Mesh(np.array(devs), ('x',))
print(mesh.shape)
"""),
        Valid(_HEAD + """
devs = jax.devices()
shuffled = list(devs)
random.shuffle(shuffled)
print(shuffled[0])
mesh = Mesh(np.array(devs), ('x',))
print(mesh.shape)
"""),
        Valid(_HEAD + """
devs = jax.devices()
random.shuffle(devs)
devs = sorted(devs, key=lambda d: d.id)
mesh = Mesh(np.array(devs), ('x',))
print(mesh.shape)
"""),
        Valid(_HEAD + """
devs = jax.devices()
random.shuffle(devs)
mesh = jax.make_mesh((8,), ('x',))
print(mesh.shape)
"""),
        Valid(_HEAD + '''
def build(seed):
    """random.shuffle(devs) would give every process its own mesh; we take a seed."""
    rng = np.random.default_rng(seed)
    return Mesh(rng.permutation(jax.devices()), ('x',))  # RSH102:12

mesh = build(7)
print(mesh.shape)
'''),
        Valid(_HEAD + """
import jax.numpy as jnp
key = jax.random.key(0)
perm = jax.random.permutation(key, jnp.arange(8))
mesh = Mesh(np.array(jax.devices()), ('x',))
x = jax.device_put(perm, NamedSharding(mesh, P('x')))
print(x)
"""),
        Valid(_HEAD + """
# np.random.permutation(jax.devices()) here would be unseeded: keep the natural order.
mesh = Mesh(np.array(jax.devices()), ('x',))
steps = np.random.permutation(10)
print(mesh.shape, steps.shape)
"""),
        Valid("""
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

mesh = Mesh(np.array(jax.devices()), ('x',))
x = jax.device_put(np.arange(8.0), NamedSharding(mesh, P('x')))
print(jax.jit(lambda a: a.sum())(x))
""", note="the page's Use instead", instead=True),
    )

    grounding = Grounding(
        multi=Outcome("error", r"DEADLINE_EXCEEDED|[Dd]eadline|timed out|Timed out|Gloo|gloo"),
        single=Outcome("ok"),
        timeout=90.0,
    )


def _lists_a_set(node: object) -> bool:
    """``list(x.devices())`` / ``tuple(s.device_set)``: the order of a set, not a shuffle call."""
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("list", "tuple")


def _alone_in_block(module: ast.Module, call: ast.AST) -> bool:
    """``call`` is the statement of a block that holds nothing else."""
    for node in ast.walk(module):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if isinstance(block, list) and len(block) == 1 and isinstance(block[0], ast.Expr) \
                    and block[0].value is call:
                return True
    return False


def _drop_shuffle(ctx: FileContext, node: ast.AST) -> Fix | None:
    """Undo the shuffle: drop an in-place shuffle statement, or keep a permutation's input."""
    line, col, end_line, end_col = ctx.span(node)
    lines = ctx.source.splitlines(keepends=True)
    if isinstance(node, ast.Subscript):  # devs[np.random.permutation(n)]
        base_text = ctx.module.code_for_node(node.value)
        return Fix(f"Use {base_text} in its own order", (Edit(line, col, end_line, end_col, base_text),),
                   safe=False)
    if not isinstance(node, ast.Call):
        return None
    args = tree.call_args(node)
    if not args:
        return None
    call_text = ctx.module.code_for_node(node)
    func_text = ctx.module.code_for_node(node.func)
    in_place = func_text.endswith("shuffle")
    if in_place:
        if line == end_line and lines[line - 1].strip() == call_text.strip():
            if _alone_in_block(ctx.module.tree, node):
                # the only statement of its block: `pass` keeps the block (an empty one
                # does not parse)
                return Fix("Remove the shuffle (keeps jax.devices() order)",
                           (Edit(line, col, end_line, end_col, "pass"),), safe=False)
            return Fix("Remove the shuffle (keeps jax.devices() order)",
                       (Edit(line, 0, line + 1, 0, ""),), safe=False)
        return None
    arg_text = ctx.module.code_for_node(tree.arg_value(args[0]))
    return Fix(f"Use {arg_text} in its own order", (Edit(line, col, end_line, end_col, arg_text),), safe=False)
