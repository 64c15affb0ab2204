"""RSH102: a mesh built from a reordered device list."""

from __future__ import annotations

import ast
from typing import Iterable

from ..analysis.context import FileContext
from ..analysis.render import describe_mesh
from ..core.diagnostic import Diagnostic, Edit, Fix
from ..analysis.events import MeshBuilt
from ..analysis.values import DevVal
from .base import Grounding, Invalid, Outcome, Rule, Valid
from .helpers.jax_version import project_jax

_HEAD = """\
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
"""

# Reshaping and transposing a fresh device grid is how topology-aware builders lay out
# the program's only mesh; it is a reordering worth flagging only next to other meshes.
_TRANSPOSES = {".T", ".transpose()", "np.transpose()", ".swapaxes()", "np.swapaxes()", "np.moveaxis()"}


class ReorderedDeviceList(Rule):
    code = "RSH102"
    name = "reordered-device-list"
    summary = "mesh built from a reordered jax.devices() list or another mesh's devices reordered"
    priority = 10
    fix_safety = "unsafe"
    events = (MeshBuilt,)
    what = "Flags a mesh built from a reordered device list: `jax.devices()` reversed (`[::-1]`, `reversed()`, `np.flip`), rotated (`d[k:] + d[:k]`, `np.concatenate([d[k:], d[:k]])`), rolled (`np.roll`), permuted with a shared seed (`rng.permutation(devs)`, `devs[rng.permutation(len(devs))]`), sorted by a key other than the device id, an axis of a grid reversed (`grid[:, ::-1]`), or another mesh's devices transposed or reordered (`mesh.devices.T`). A list made from a set (`list(x.devices())`) is RSH101: its order differs between processes. A reordered list handed to a builder, `jax.make_mesh(shape, names, devices=jax.devices()[::-1])` or `Mesh(mesh_utils.create_device_mesh(shape, devices=reversed_list), names)`, is flagged too, as a reordering on CPU: there the builders keep the order they are given, while GPU sorts the devices by id and TPU lays them out by physical coordinates (`create_device_mesh` in jax/_src/mesh_utils.py, jax 0.10.2), and on GPU in JAX before 0.10.2 (the first release whose `create_device_mesh` sorts a GPU list by id), so it is silent when the project's `platforms` leave out CPU, and GPU or its JAX is 0.10.2 or later (the version read as RSH308 reads it). A topology builder that reshapes and transposes a fresh `jax.devices()` grid for the program's only mesh stays silent, and so do lists sorted by physical coordinates or by id, and a list shuffled with no seed all processes share handed to a builder (its order is the platform's on GPU and TPU)."
    why = 'JAX treats meshes with the same devices in another order as different device assignments. Arrays on a reordered mesh cannot meet arrays on natural-order meshes (`jax.make_mesh`, library code) inside `jit`: JAX raises `ValueError: Received incompatible devices for jitted computation`. A `device_put` between the two orders moves every shard the order places on another device (RSH202 counts them); reversing `jax.devices()` on a real cluster sends every shard of an array split over the mesh to another host.'
    fix_text = 'Unsafe. When the reordering is written inside the mesh construction (for example `Mesh(np.array(jax.devices()[::-1]), ...)`), the fix removes that one step. This changes which device holds which shard, so it is applied only with `--unsafe-fixes`.'
    platforms_text = "Judged where the code writes the order: a reordered `jax.devices()` list is reordered on every platform. Handed to `jax.make_mesh(..., devices=...)` or `mesh_utils.create_device_mesh(shape, devices=...)`, it is reordered on CPU, and on GPU before JAX 0.10.2 (from 0.10.2 GPU builders sort by device id; TPU builders lay devices out by physical coordinates): the rule fires only when the project's `platforms` include one of those, and its message names them."
    references = ('jax-ml/jax#15903 (ops between meshes with transposed device order fail)', 'AI-Hypercomputer/maxtext#2863 (set_mesh changed device order, then incompatible devices)')

    def start(self, ctx: FileContext) -> None:
        self._topology: list[tuple[ast.AST, Diagnostic]] = []

    # The event type narrower than Rule.check's: the engine hands a rule only the events
    # its `events` names (mypy takes that for an unsafe override).
    def check(self, event: MeshBuilt) -> Iterable[Diagnostic]:  # type: ignore[override]
        ctx, mesh = event.ctx, event.mesh
        devs = mesh.devices
        if not devs.reorders or (devs.shuffle is not None and not devs.shuffle.agreed):
            return
        if not ctx.is_reordered(devs):
            return
        where = _builder_platforms(ctx) if devs.order_by == "builder" else ""
        if devs.order_by == "builder" and not where:
            return  # the target platforms' builders re-sort what they are given
        diag = self._diagnostic(ctx, event, devs, where)
        if devs.fresh and set(devs.reorders) <= _TRANSPOSES:
            self._topology.append((event.node, diag))
            return
        yield diag

    def finish(self, ctx: FileContext) -> Iterable[tuple[object, Diagnostic]]:
        if len(ctx.mesh_roots) > 1:
            return list(self._topology)
        return []

    def _diagnostic(self, ctx: FileContext, event: MeshBuilt, devs: DevVal, where: str = "") -> Diagnostic:
        line, col, end_line, end_col = ctx.span(event.node)
        if devs.from_mesh is not None and not devs.fresh:
            origin = f"the devices of mesh {describe_mesh(ctx, devs.from_mesh)} reordered by {', '.join(devs.reorders)}"
        else:
            origin = f"a reordered device list ({devs.desc})"
        if devs.order_by == "builder":
            if devs.from_mesh is None or devs.fresh:
                origin = f"a reordered device list ({devs.builder_input or devs.desc})"
            msg = (
                f"mesh {describe_mesh(ctx, event.mesh)} is laid out by a mesh builder from {origin}, whose "
                f"order the builder keeps {where}: there arrays on it cannot meet arrays on natural-order "
                "meshes inside jit (\"Received incompatible devices for jitted computation\") and a device_put "
                "between the two moves every shard the order places on another device (TPU lays the devices "
                "out by physical coordinates); pass the devices in natural order (jax.devices()), or leave "
                "devices= out"
            )
            return Diagnostic(self.code, line, col, msg, end_line, end_col, fix=_undo(ctx, event, devs))
        msg = (
            f"mesh {describe_mesh(ctx, event.mesh)} is built from {origin}: arrays on it cannot meet "
            "arrays on natural-order meshes inside jit (\"Received incompatible devices for jitted "
            "computation\") and a device_put between the two moves every shard the order places on "
            "another device; build it from "
            "jax.devices() in natural order, or with jax.make_mesh"
        )
        return Diagnostic(self.code, line, col, msg, end_line, end_col, fix=_undo(ctx, event, devs))

    examples = (
        Invalid(_HEAD + """
mesh = Mesh(np.array(jax.devices()[::-1]), ('x',))  # RSH102:8
natural = Mesh(np.array(jax.devices()), ('x',))
a = jax.device_put(np.arange(8.0), NamedSharding(mesh, P('x')))
b = jax.device_put(np.arange(8.0), NamedSharding(natural, P('x')))
print(a + b)  # RSH203:7
""", fixed=_HEAD + """
mesh = Mesh(np.array(jax.devices()), ('x',))  # RSH102:8
natural = Mesh(np.array(jax.devices()), ('x',))
a = jax.device_put(np.arange(8.0), NamedSharding(mesh, P('x')))
b = jax.device_put(np.arange(8.0), NamedSharding(natural, P('x')))
print(a + b)  # RSH203:7
"""),
        Invalid(_HEAD + """
devs = jax.devices()
rotated = devs[2:] + devs[:2]
ring = Mesh(np.array(rotated), ('x',))  # RSH102:8
natural = Mesh(np.array(devs), ('x',))
a = jax.device_put(np.arange(8.0), NamedSharding(ring, P('x')))
b = jax.device_put(np.arange(8.0), NamedSharding(natural, P('x')))
print(a * b)  # RSH203:7
"""),
        Invalid(_HEAD + """
mesh = Mesh(np.array(jax.devices()).reshape(2, 4), ('data', 'model'))
swapped = Mesh(mesh.devices.T, ('model', 'data'))  # RSH102:11
a = jax.device_put(np.ones((4, 4)), NamedSharding(mesh, P('data', 'model')))
b = jax.device_put(np.ones((4, 4)), NamedSharding(swapped, P('model', 'data')))
print(a + b)  # RSH203:7
""", fixed=_HEAD + """
mesh = Mesh(np.array(jax.devices()).reshape(2, 4), ('data', 'model'))
swapped = Mesh(mesh.devices, ('model', 'data'))  # RSH102:11
a = jax.device_put(np.ones((4, 4)), NamedSharding(mesh, P('data', 'model')))
b = jax.device_put(np.ones((4, 4)), NamedSharding(swapped, P('model', 'data')))
print(a + b)  # RSH203:7
"""),
        Invalid(_HEAD + """
shifted = Mesh(np.roll(np.array(jax.devices()), 1), ('x',))  # RSH102:11
natural = Mesh(np.array(jax.devices()), ('x',))
a = jax.device_put(np.arange(8.0), NamedSharding(shifted, P('x')))
b = jax.device_put(np.arange(8.0), NamedSharding(natural, P('x')))
print(a - b)  # RSH203:7
""", fixed=_HEAD + """
shifted = Mesh(np.array(jax.devices()), ('x',))  # RSH102:11
natural = Mesh(np.array(jax.devices()), ('x',))
a = jax.device_put(np.arange(8.0), NamedSharding(shifted, P('x')))
b = jax.device_put(np.arange(8.0), NamedSharding(natural, P('x')))
print(a - b)  # RSH203:7
"""),
        Invalid(_HEAD + """
devs = np.array(jax.devices())
rng = np.random.default_rng(0)
mesh = Mesh(devs[rng.permutation(len(devs))], ('x',))  # RSH102:8
natural = Mesh(devs, ('x',))
a = jax.device_put(np.arange(8.0), NamedSharding(mesh, P('x')))
b = jax.device_put(np.arange(8.0), NamedSharding(natural, P('x')))
print(a + b)  # RSH203:7
""", fixed=_HEAD + """
devs = np.array(jax.devices())
rng = np.random.default_rng(0)
mesh = Mesh(devs, ('x',))  # RSH102:8
natural = Mesh(devs, ('x',))
a = jax.device_put(np.arange(8.0), NamedSharding(mesh, P('x')))
b = jax.device_put(np.arange(8.0), NamedSharding(natural, P('x')))
print(a + b)  # RSH203:7
"""),
        Invalid(_HEAD + """
devs = np.array(jax.devices())
ring = Mesh(np.concatenate([devs[2:], devs[:2]]), ('x',))  # RSH102:8
natural = Mesh(devs, ('x',))
a = jax.device_put(np.arange(8.0), NamedSharding(ring, P('x')))
b = jax.device_put(np.arange(8.0), NamedSharding(natural, P('x')))
print(a * b)  # RSH203:7
"""),
        Invalid(_HEAD + """
hosts = sorted(jax.devices(), key=lambda d: (d.process_index, d.id), reverse=True)
mesh = Mesh(np.array(hosts), ('x',))  # RSH102:8
natural = Mesh(np.array(jax.devices()), ('x',))
a = jax.device_put(np.arange(8.0), NamedSharding(mesh, P('x')))
b = jax.device_put(np.arange(8.0), NamedSharding(natural, P('x')))
print(a + b)  # RSH203:7
"""),
        Valid(_HEAD + """
# (process, id) is jax.devices()'s own order (2 processes x 4 CPU devices: the same list).
hosts = Mesh(np.array(sorted(jax.devices(), key=lambda d: (d.process_index, d.id))), ('x',))
natural = Mesh(np.array(jax.devices()), ('x',))
a = jax.device_put(np.arange(8.0), NamedSharding(natural, P('x')))
b = jax.device_put(a, NamedSharding(hosts, P('x')))
print(a + b)
"""),
        Invalid(_HEAD + """
mesh = jax.make_mesh((8,), ('x',), devices=jax.devices()[::-1])  # RSH102:8
natural = jax.make_mesh((8,), ('x',))
a = jax.device_put(np.arange(8.0), NamedSharding(mesh, P('x')))
b = jax.device_put(np.arange(8.0), NamedSharding(natural, P('x')))
print(a + b)  # RSH203:7
""", fixed=_HEAD + """
mesh = jax.make_mesh((8,), ('x',), devices=jax.devices())  # RSH102:8
natural = jax.make_mesh((8,), ('x',))
a = jax.device_put(np.arange(8.0), NamedSharding(mesh, P('x')))
b = jax.device_put(np.arange(8.0), NamedSharding(natural, P('x')))
print(a + b)  # RSH203:7
""", note="a builder keeps the order given on CPU (GPU and TPU re-sort it)"),
        Invalid(_HEAD + """
from jax.experimental import mesh_utils
devs = list(reversed(jax.devices()))
grid = Mesh(mesh_utils.create_device_mesh((2, 4), devices=devs), ('a', 'b'))  # RSH102:8
natural = Mesh(np.array(jax.devices()).reshape(2, 4), ('a', 'b'))
a = jax.device_put(np.ones((2, 4)), NamedSharding(grid, P('a', 'b')))
b = jax.device_put(np.ones((2, 4)), NamedSharding(natural, P('a', 'b')))
print(a + b)  # RSH203:7
"""),
        Valid(_HEAD + """
# Sorted by id, or shuffled with no shared seed: handed to a builder, the order is
# the platform's on GPU and TPU (RSH101 leaves builders alone).
import random
devs = list(jax.devices())
random.shuffle(devs)
mesh = jax.make_mesh((8,), ('x',), devices=sorted(devs, key=lambda d: d.id))
print(mesh.shape)
"""),
        Valid(_HEAD + """
devs = np.array(jax.devices())
rng = np.random.default_rng(0)
batch = np.arange(8.0)[rng.permutation(8)]
mesh = Mesh(devs, ('x',))
x = jax.device_put(batch, NamedSharding(mesh, P('x')))
print(x.sum())
"""),
        Valid(_HEAD + """
mesh = Mesh(np.array(sorted(jax.devices(), key=lambda d: d.id)), ('x',))
x = jax.device_put(np.arange(8.0), NamedSharding(mesh, P('x')))
print(x.sum())
"""),
        Valid(_HEAD + """
# Physical order (coordinates on TPU) is the platform's choice, not a reordering.
devs = sorted(jax.devices(), key=lambda d: (d.process_index, getattr(d, 'coords', d.id)))
mesh = Mesh(np.array(devs), ('x',))
print(mesh.shape)
"""),
        Valid(_HEAD + """
names = ('data', 'model')
mesh = Mesh(np.array(jax.devices()).reshape(2, 4), names[::-1])
print(mesh.shape)
"""),
        Valid(_HEAD + """
mesh = jax.make_mesh((2, 4), ('data', 'model'))
spec = P(*reversed(('data', 'model')))
x = jax.device_put(np.ones((4, 2)), NamedSharding(mesh, spec))
print(x.shape)
"""),
        Valid(_HEAD + """
coords = [(0, 0), (0, 1), (1, 0), (1, 1)][::-1]
schedule = list(reversed(range(4)))
mesh = Mesh(np.array(jax.devices()), ('x',))
print(coords, schedule, mesh.shape)
"""),
        Valid(_HEAD + """
import jax.numpy as jnp
mesh = Mesh(np.array(jax.devices()), ('x',))
tokens = jnp.arange(8)[::-1]
x = jax.device_put(tokens, NamedSharding(mesh, P('x')))
print(x)
"""),
        Valid(_HEAD + """
print('devices, last first:', jax.devices()[::-1])
mesh = Mesh(np.array(jax.devices()), ('x',))
print(mesh.shape)
"""),
        Valid(_HEAD + """
# A one-device test mesh cannot be out of order.
test_mesh = Mesh(np.array(jax.devices()[:1]), ('x',))
print(test_mesh.shape)
"""),
        Valid(_HEAD + """
# The program's only mesh, laid out by transposing a fresh device grid.
grid = np.array(jax.devices()).reshape(2, 4).T
mesh = Mesh(grid, ('model', 'data'))
x = jax.device_put(np.ones((4, 2)), NamedSharding(mesh, P('model', 'data')))
print(x.sum())
"""),
        Valid(_HEAD + '''
def describe():
    """Never write Mesh(np.array(jax.devices()[::-1]), ('x',)): it reorders the devices."""
    return "Mesh(np.array(jax.devices()[::-1]), ('x',))"

mesh = Mesh(np.array(jax.devices()), ('x',))  # not Mesh(jax.devices()[::-1], ...)
print(describe(), mesh.shape)
'''),
        Valid(_HEAD + """
mesh = Mesh(np.array(jax.devices()).reshape(2, 4), ('a', 'b'))
flat = Mesh(mesh.devices.reshape(-1), ('x',))
again = Mesh(mesh.devices, ('c', 'd'))
a = jax.device_put(np.arange(8.0), NamedSharding(flat, P('x')))
b = jax.device_put(np.arange(8.0), NamedSharding(flat, P('x')))
print(a + b, again.shape)
"""),
        Valid(_HEAD + """
devs = np.array(jax.devices())[::-1]
devs[:] = np.array(jax.devices())  # set back in place, in enumeration order
mesh = Mesh(devs, ('x',))
x = jax.device_put(np.arange(8.0), NamedSharding(Mesh(np.array(jax.devices()), ('x',)), P('x')))
print(jax.device_put(x, NamedSharding(mesh, P('x'))).sharding)
""", note="a device array changed in place: its order is not known afterwards"),
        Valid(_HEAD + """
devs = list(jax.devices())[::-1]
devs.sort(key=lambda d: d.id)
mesh = Mesh(np.array(devs), ('x',))
print(mesh.shape)
""", note="a device list sorted in place: not followed, so not called reversed"),
    )

    grounding = Grounding(
        multi=Outcome("error", r"incompatible devices"),
        single=Outcome("error", r"incompatible devices"),
    )


# The first JAX whose create_device_mesh sorts a GPU list by device id (jax/_src/mesh_utils.py:
# the `platform == 'gpu'` branch is in the 0.10.2 wheel, not in 0.7.2 to 0.10.1); before it,
# GPU keeps the order given, as CPU does.
GPU_SORTS_FROM = (0, 10, 2)


def _builder_platforms(ctx: FileContext) -> str:
    """Where a builder keeps a reordered list's order, among the target platforms: CPU
    always, GPU when the project may run a JAX before 0.10.2 (project/pins.py); '' for none."""
    platforms = ctx.devices.platforms
    cpu = "cpu" in platforms
    gpu = "gpu" in platforms and not (
        (versions := project_jax(ctx)) is not None and versions.all_from(GPU_SORTS_FROM))
    if cpu and gpu:
        return "on CPU, and on GPU before JAX 0.10.2 (which sorts a GPU list by device id)"
    if gpu:
        return "on GPU before JAX 0.10.2 (which sorts a GPU list by device id)"
    return "on CPU (GPU sorts by device id from JAX 0.10.2)" if cpu else ""


def _undo(ctx: FileContext, event: MeshBuilt, devs: DevVal) -> Fix | None:
    """Undo a single reordering step written inside the mesh construction itself."""
    if len(devs.steps) != 1 or len(devs.reorders) != 1:
        return None
    outer, inner = devs.steps[0]
    if inner is None or ctx.module.owner(outer) is not ctx.module:
        return None  # (a step another module wrote is placed in that module's lines)
    o_line, o_col, o_end_line, o_end_col = ctx.span(outer)
    m_line, m_col, m_end_line, m_end_col = ctx.span(event.node)
    if (o_line, o_col) < (m_line, m_col) or (o_end_line, o_end_col) > (m_end_line, m_end_col):
        return None  # the step is elsewhere (a name bound earlier): not rewritten here
    text = ctx.module.code_for_node(inner)
    return Fix(f"Use the devices in natural order: {ctx.code(inner, 40)}",
               (Edit(o_line, o_col, o_end_line, o_end_col, text),), safe=False)
