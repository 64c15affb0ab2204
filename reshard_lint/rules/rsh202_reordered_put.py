"""RSH202: device_put between meshes with the same devices in another order."""

from __future__ import annotations

from typing import Iterable

from .helpers.crossing import (PUT_KINDS, array_label, fix_hint, pairs, rebuild_on_own_mesh, reorder_clause,
                               report, sides)
from ..core.diagnostic import Diagnostic
from ..analysis.events import Transfer
from ..analysis.reorder_cost import OrderCost, order_cost
from .base import Grounding, Invalid, Outcome, Rule, Valid

_HEAD = """\
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

mesh = Mesh(np.array(jax.devices()), ('x',))
x = jax.device_put(np.arange(8.0), NamedSharding(mesh, P('x')))
"""


class ReorderedPut(Rule):
    code = "RSH202"
    name = "reordered-put"
    summary = "device_put of an array to a mesh with the same devices in another order"
    priority = 10
    fix_safety = "unsafe"
    severity = "warning"
    events = (Transfer,)
    what = "Flags the same calls as RSH201 when the two meshes hold the **same devices in a different order** (a target mesh on `jax.devices()[::-1]`, a seeded permutation, builders that order devices differently on TPU) and that order makes devices receive data. Each device's piece of the array is computed from the two shardings' literal `PartitionSpec`s and axis names, as JAX's `devices_indices_map` gives it, on model topologies of each platform; the rule fires when some device must receive a piece that the same spec on the array's own mesh would leave where it is, and says how many. Where the target's spec names axes the array's mesh lacks, the move counts as a reorder only when the two shardings lay the array out alike position by position (`P('x')` on 8 devices and `P(('a', 'b'))` on a 2 x 4 grid); otherwise the spec's change is the move. A replicated target or source, a reorder along a mesh axis the spec does not split, a grid transposed together with its axis names, and a layout the analysis does not know stay silent."
    why = 'JAX accepts the move but takes its different-device-order reshard: every shard is permuted, about a full copy of the array, over the network when the devices are on several hosts (on 8 CPU devices a reversed 256 MB `device_put` took ~205 ms against ~140 ms, plus ~200 ms of compile). It is almost always an accident of how the second mesh was built.'
    fix_text = "Unsafe. Same as RSH201: the target is rebuilt on the array's own mesh (per leaf for a pytree moved to one spec) where the result is well-formed for what the analysis knows (the array written as a name or an attribute chain, the spec's axes on the array's mesh and every dimension still divisible, no context mesh that would refuse the reshard, a spec the same on every run of a call run more than once; adding the `NamedSharding`, `PartitionSpec` or `jax` import the file lacks), so the result keeps the array's device order instead of the order the code asked for. Applied only with `--unsafe-fixes`."
    platforms_text = "Compares device order on each target platform (`platforms`, default TPU, GPU and CPU): besides orders written in the code, it fires where two ordinary builders agree on CPU but not on multi-host TPU (`jax.make_mesh((16,))`, `jax.make_mesh((4, 4))` and `np.array(jax.devices())` are three orders there; `sorted(devs, key=lambda d: d.id)` is not enumeration order there), and the message says 'on multi-host TPU' and what orders each side. The TPU orders are checked against JAX's own builders on mock TPU topologies; the `jit` failure between two orders is read from JAX's source and observed on CPU with orders written by hand. See [platforms](../platforms.md)."
    references = ('RUNTIME-FACTS.md: device_put with the same devices in another order',)

    # The event type narrower than Rule.check's: the engine hands a rule only the events
    # its `events` names (mypy takes that for an unsafe override).
    def check(self, event: Transfer) -> Iterable[Diagnostic]:  # type: ignore[override]
        if event.kind not in PUT_KINDS:
            return
        ctx = event.ctx
        for pair in pairs(event):
            if pair.src is None or pair.dst is None or ctx.compare(pair.src, pair.dst) != "reordered":
                continue
            cost = order_cost(ctx, pair.array, pair.target)
            if cost is None:
                continue
            x = array_label(ctx, event, pair)
            msg = (
                f"{event.spelled} moves '{x}' {sides(ctx, pair)}, the same devices in another order"
                f"{reorder_clause(ctx, pair)}: {_effect(cost)}; "
                f"build the target on the array's own mesh: {fix_hint(ctx, event, pair)}"
            )
            yield report(self.code, event, pair, msg, fix=rebuild_on_own_mesh(ctx, event, pair))
            return

    examples = (
        Invalid(_HEAD + """
rev = Mesh(np.array(jax.devices()[::-1]), ('x',))  # RSH102:7
y = jax.device_put(x, NamedSharding(rev, P('x')))  # RSH202:5
print(float(y.sum()))
""", fixed=_HEAD + """
rev = Mesh(np.array(jax.devices()[::-1]), ('x',))  # RSH102:7
y = jax.device_put(x, NamedSharding(x.sharding.mesh, P('x')))  # RSH202:5
print(float(y.sum()))
"""),
        Invalid(_HEAD + """
# Only the first row of devices is reversed: four of eight devices receive another piece.
devs = jax.devices()
grid = Mesh(np.array(devs).reshape(2, 4), ('a', 'b'))
z = jax.device_put(np.ones((4, 4)), NamedSharding(grid, P('a', 'b')))
part = Mesh(np.array(devs[:4][::-1] + devs[4:]).reshape(2, 4), ('a', 'b'))  # RSH102:8
w = jax.device_put(z, NamedSharding(part, P('a', 'b')))  # RSH202:5
print(float(w.sum()))
"""),
        Invalid(_HEAD + """
rng = np.random.default_rng(0)
shuffled = Mesh(rng.permutation(jax.devices()), ('x',))  # RSH102:12
y = jax.device_put(x, NamedSharding(shuffled, P('x')))  # RSH202:5
print(float(y.sum()))
"""),
        Invalid(_HEAD + """
grid = mesh.devices.reshape(2, 4)
mirrored = Mesh(grid[:, ::-1], ('a', 'b'))  # RSH102:12
y = jax.device_put(x, NamedSharding(mirrored, P(('a', 'b'))))  # RSH202:5
print(float(y.sum()))
"""),
        Invalid(_HEAD + """
devs = jax.devices()
ring = Mesh(np.concatenate([np.array(devs[2:]), np.array(devs[:2])]), ('x',))  # RSH102:8
y = jax.device_put(x, NamedSharding(ring, P('x')))  # RSH202:5
print(float(y.sum()))
"""),
        Invalid(_HEAD + """
# create_device_mesh / make_mesh order the devices they are given by platform (TPU:
# physical coordinates, GPU: device id, CPU: as given): reordered on CPU and TPU.
from jax.experimental import mesh_utils
rev = Mesh(mesh_utils.create_device_mesh((jax.device_count(),), devices=jax.devices()[::-1]), ('x',))  # RSH102:7
y = jax.device_put(x, NamedSharding(rev, P('x')))  # RSH202:5
print(float(y.sum()))
"""),
        Invalid(_HEAD + """
# On TPU make_mesh orders the devices by physical position for the shape, and
# np.array(jax.devices()) by enumeration (docs/platforms.md); on CPU they agree.
made = jax.make_mesh((2, 4), ('a', 'b'))
y = jax.device_put(x, NamedSharding(made, P(('a', 'b'))))  # RSH202:5
print(float(y.sum()))
""", note="Reordered on multi-host TPU only: on CPU, where this runs, the orders agree.",
            platform="tpu"),
        Invalid(_HEAD + """
# Two shapes, two TPU orders (levanter#635: [0, 4, 8, 12, 1, ...] against [0, 1, 4, 5, ...]).
flat = jax.make_mesh((8,), ('x',))
grid = jax.make_mesh((2, 4), ('a', 'b'))
z = jax.device_put(np.arange(8.0), NamedSharding(flat, P('x')))
y = jax.device_put(z, NamedSharding(grid, P(('a', 'b'))))  # RSH202:5
print(float(y.sum()))
""", note="Reordered on multi-host TPU only: on CPU, where this runs, the orders agree.",
            platform="tpu"),
        Invalid(_HEAD + """
# One helper called with two shapes builds two meshes, in two TPU orders.
def make(shape):
    return jax.make_mesh(shape, ('a', 'b'))
z = jax.device_put(np.arange(8.0), NamedSharding(make((4, 2)), P(('a', 'b'))))
y = jax.device_put(z, NamedSharding(make((2, 4)), P(('a', 'b'))))  # RSH202:5
print(float(y.sum()))
""", note="Reordered on multi-host TPU only: on CPU, where this runs, the orders agree.",
            platform="tpu"),
        Invalid(_HEAD + """
# Multi-host TPU enumerates process by process while ids follow physical coordinates
# (keras#19968: [0, 1, 4, 5, 2, 3, 6, 7]): sorting by id is a reordering there.
by_id = Mesh(np.array(sorted(jax.devices(), key=lambda d: d.id)), ('x',))
y = jax.device_put(x, NamedSharding(by_id, P('x')))  # RSH202:5
print(float(y.sum()))
""", note="Reordered on multi-host TPU only: on CPU ids follow enumeration.", platform="tpu"),
        Valid(_HEAD + """
y = jax.device_put(x, NamedSharding(mesh, P()))
print(float(y.sum()))
"""),
        Valid(_HEAD + """
# The grid transposed together with its axis names: every device keeps its coordinates
# on 'a' and 'b', so P('b', 'a') gives it the piece it would get on the array's own
# mesh. The data moves because the spec changes, not because of the order.
grid = Mesh(np.array(jax.devices()).reshape(2, 4), ('a', 'b'))
swapped = Mesh(grid.devices.T, ('b', 'a'))  # RSH102:11
z = jax.device_put(np.ones((4, 4)), NamedSharding(grid, P('a', 'b')))
w = jax.device_put(z, NamedSharding(swapped, P('b', 'a')))
print(float(w.sum()))
"""),
        Valid(_HEAD + """
# Columns become a 2 x 4 grid of blocks: every device receives data whatever the order
# (its new block is not inside its column), so the reversed order adds nothing.
grid = Mesh(np.array(jax.devices()[::-1]).reshape(2, 4), ('a', 'b'))  # RSH102:8
cols = jax.device_put(np.ones((8, 8)), NamedSharding(mesh, P(None, 'x')))
y = jax.device_put(cols, NamedSharding(grid, P('a', 'b')))
print(float(y.sum()))
"""),
        Valid(_HEAD + """
# Reversed along an axis the spec does not split: every device needs the piece it holds.
grid = Mesh(np.array(jax.devices()).reshape(2, 4), ('a', 'b'))
cols = Mesh(grid.devices[:, ::-1], ('a', 'b'))  # RSH102:8
z = jax.device_put(np.ones((4, 4)), NamedSharding(grid, P('a', None)))
w = jax.device_put(z, NamedSharding(cols, P('a', None)))
print(float(w.sum()))
"""),
        Valid(_HEAD + """
rev = Mesh(np.array(jax.devices()[::-1]), ('x',))  # RSH102:7
y = jax.device_put(np.arange(8.0), NamedSharding(rev, P('x')))
print(float(y.sum()))
"""),
        Valid(_HEAD + """
# The same builder with the same shape gives the same order on every platform.
a = jax.make_mesh((2, 4), ('a', 'b'))
b = jax.make_mesh((2, 4), ('data', 'model'))
z = jax.device_put(np.arange(8.0), NamedSharding(a, P(('a', 'b'))))
y = jax.device_put(z, NamedSharding(b, P(('data', 'model'))))
print(float(y.sum()))
"""),
        Valid(_HEAD + """
# One device array reshaped keeps its order everywhere, whatever built it.
made = jax.make_mesh((8,), ('x',))
grid = Mesh(made.devices.reshape(2, 4), ('a', 'b'))
z = jax.device_put(np.arange(8.0), NamedSharding(made, P('x')))
y = jax.device_put(z, NamedSharding(grid, P(('a', 'b'))))
print(float(y.sum()))
"""),
        Valid(_HEAD + """
# make_mesh is create_device_mesh of the same shape: the same order on every platform.
from jax.experimental import mesh_utils
made = jax.make_mesh((2, 4), ('a', 'b'))
built = Mesh(mesh_utils.create_device_mesh((2, 4)), ('a', 'b'))
z = jax.device_put(np.arange(8.0), NamedSharding(made, P(('a', 'b'))))
y = jax.device_put(z, NamedSharding(built, P(('a', 'b'))))
print(float(y.sum()))
"""),
        Valid(_HEAD + """
def reshard(a, m):
    return jax.device_put(a, NamedSharding(m, P('x')))

rev = Mesh(np.array(jax.devices()[::-1]), ('x',))  # RSH102:7
print(float(reshard(np.arange(8.0), rev).sum()))
"""),
        Valid(_HEAD + """
grid = Mesh(mesh.devices.reshape(4, 2), ('a', 'b'))
y = jax.device_put(x, NamedSharding(grid, P(('a', 'b'))))
print(float(y.sum()))
"""),
        Valid(_HEAD + """
names = ('x',)[::-1]
other = Mesh(np.array(jax.devices()), names)
y = jax.device_put(x, NamedSharding(other, P('x')))
print(float(y.sum()))
"""),
        Valid(_HEAD + """
for step in range(2):
    x = jax.device_put(x, NamedSharding(mesh, P('x')))
print(float(x.sum()))
"""),
        Valid(_HEAD + """
y = jax.device_put(x, NamedSharding(Mesh(mesh.devices, ('x',)), P('x')))
print(float(y.sum()))
"""),
        Valid(_HEAD + """
rev = Mesh(np.array(jax.devices()[::-1]), ('x',))  # RSH102:7
data = np.arange(8.0) * 2
y = jax.device_put(data, NamedSharding(rev, P('x')))
print(float(y.sum()))
"""),
        Valid(_HEAD + """
rev = Mesh(np.array(jax.devices()[::-1]), ('x',))  # RSH102:7
whole = jax.device_put(np.arange(8.0), NamedSharding(mesh, P()))
y = jax.device_put(whole, NamedSharding(rev, P()))
z = jax.device_put(whole, NamedSharding(rev, P('x')))
print(float(y.sum()), float(z.sum()))
""", note="A replicated array is relabelled, not permuted: every device holds all of it"),
        Valid("""
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

mesh = Mesh(np.array(jax.devices()), ('x',))
x = jax.device_put(np.arange(8.0), NamedSharding(mesh, P('x')))

y = jax.device_put(x, NamedSharding(x.sharding.mesh, P()))  # replicated, in x's device order
print(float(y.sum()))
""", note="the page's Use instead: a real move in the array's own device order", instead=True),
    )

    grounding = Grounding(multi=Outcome("ok", where="all"), single=Outcome("ok"))


def _effect(cost: OrderCost) -> str:
    """How much the order moves (``order_cost``): every shard, or the share of devices."""
    if cost.every:
        return "JAX permutes every shard (about a full copy, over the network across hosts)"
    return (f"JAX moves a shard onto {cost.moved} of the {cost.devices} devices (over the network "
            "across hosts), where the same spec on the array's own mesh leaves theirs in place")
