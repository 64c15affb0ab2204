"""RSH201: device_put between meshes with different device sets."""

from __future__ import annotations

from typing import Iterable

from .helpers.crossing import (
    PUT_KINDS, array_label, cross_host_path, different_clause, fix_hint, pairs, rebuild_on_own_mesh, report, sides,
)
from ..core.diagnostic import Diagnostic
from ..analysis.events import Transfer
from .base import Grounding, Invalid, Outcome, Rule, Valid
from .helpers.rsh201_flow_examples import FLOW_EXAMPLES, HEAD as _HEAD


class CrossDeviceSetPut(Rule):
    code = "RSH201"
    name = "cross-device-set-put"
    summary = "device_put of an array to a sharding on a different set of devices"
    priority = 10
    fix_safety = "unsafe"
    events = (Transfer,)
    runtimes = ("multi-controller",)
    what = 'Flags `jax.device_put(x, s)`, its pytree form, `x.to_device(s)` and `device_put(x, P(...))` under `jax.set_mesh` (also in a function every call of which runs there), when the array `x` was made on one mesh and `s` is on a mesh with a **different set of devices** (in any memory: `s.with_memory_kind(...)` is on the devices of s; a subset, a superset, other devices, another platform), including a row or column of a device grid (`grid[1]`, `grid[:, 0]`) and the first `prod(shape)` devices that `jax.make_mesh(shape, names, devices=...)` keeps from the list it is given (on every platform; the platform decides only their order). The array may be computed: JAX commits what it computes from an array (a slice, arithmetic with host data, `jnp`, `jax.random`, `jax.lax` and `jax.nn` functions, array methods, a jitted call given no shardings, `jax.grad`, `jax.value_and_grad` and `jax.vmap` of a function) to the devices of that array, so such a result is on the mesh of its operand. The results of `jax.shard_map(f, mesh=m, ..., out_specs=...)` are on m, placed by `out_specs`. A move of the same layout between disjoint device groups (`P()` on the trainer half to `P()` on the rollout half) is a different set too, where CPU is among the target `platforms`; a file that sets `jax_cross_host_transfer_socket_address` (the experimental cross-host transfer of JAX) is left alone.'
    why = 'On one host this works, so tests never see it. In multi-controller JAX the move crosses hosts and JAX raises `ValueError: For a cross-host reshard in multi-controller JAX, input and target sharding should have the same set of devices` (some processes raise `NotImplementedError: Cannot reshard an input that is not fully addressable` instead), when the expensive multi-host job starts. The same layout moved to the devices of other processes (the trainer half to the rollout half, `P()` to `P()`) takes the experimental cross-host transfer of JAX instead, which needs backend support or the `jax_cross_host_transfer_socket_address` flag: under 2 processes x 4 CPU devices (jax 0.10.2), `jax.device_put(x, NamedSharding(rollout, P()))` of an array replicated on the devices of process 0 raises `ValueError: The backend ({backend.platform}, {backend.platform_version}) does not support cross-host device transfers` on both processes (JAX prints the braces literally; tests/multicontroller/test_global_device.py). A GPU or TPU backend that supports cross-host transfers moves it (the cross-host transfer tests of JAX itself run on GPU and TPU only), so this case is reported only where CPU is among the target `platforms` (the default), and a file that sets that flag is left alone.'
    fix_text = "Unsafe. The fix rebuilds the target on the array's own mesh: `jax.device_put(x, NamedSharding(x.sharding.mesh, P('x')))`; for a pytree moved to one spec (a list, tuple or dict of arrays, or a jitted call's result), a target per leaf: `jax.device_put(tree, jax.tree.map(lambda a: NamedSharding(a.sharding.mesh, P('x')), tree))`. It is offered only where the result is well-formed for what the analysis knows: the array is written again as the call writes it, and only when that is a name or an attribute chain (evaluated twice at no cost and with no side effect); every leaf is an array on a known mesh and every leaf goes to the same spec; the target is a `NamedSharding` whose `PartitionSpec` can be written at the call and names only axes of the array's own mesh (both read from literals: the mesh's `Mesh(devs, names)` or `jax.make_mesh(shape, names)`, the spec's `P(...)`; else JAX would raise \"Resource axis ... not found in mesh\"); every dimension the spec splits stays divisible (it splits the array as the array is split already, or as finely as the target's mesh did on every topology the model runs; else JAX's `IndivisibleError`); under a context mesh (`jax.set_mesh`, or in a function that may be called under one) only a target that keeps the array's sharding, since multi-controller JAX refuses a reshard on another mesh there (\"Received incompatible devices for jitted computation ... jit's context mesh\"); and the names it writes are not rebound in the function around the call; at a call the analysis runs more than once with other values (a loop over a sequence it knows, a `jax.tree.map` callback run per leaf), only a spec written in the target's own code, which is the same on every run (`NamedSharding(m, P('x'))`, not a name bound to a sharding per run). A spec of literal axes built in another module of the project is written again at the call; where the file imports no `NamedSharding`, `PartitionSpec` or `jax`, the fix adds `from jax.sharding import NamedSharding`, `from jax.sharding import PartitionSpec as P` or `import jax` with libcst's import codemod, unless the name is already used for something else in the file. A `NamedSharding(...)` written at the call over several lines or with more arguments (`memory_kind=`) keeps its spec, its other arguments and its comments: only its mesh argument becomes `x.sharding.mesh`. That changes which devices hold the result: where the code meant to move the data to the target's devices (weights to the rollout devices), the fixed code keeps them where they are. So it is applied only with `--unsafe-fixes`, and offered as unsafe in the editor. Moving data between device groups on purpose needs a host transfer or `jax.make_array_from_process_local_data`, which the fix does not attempt. Every fix offered on the rule's examples and the test fixtures is applied and run under JAX, on one process and on two (tests/oracle/test_fix_runs.py)."
    references = ('jax-ml/jax#26645', 'jax-ml/jax#34264', 'sgl-project/sglang-jax#470', 'google/tunix#843')

    # The event type narrower than Rule.check's: the engine hands a rule only the events
    # its `events` names (mypy takes that for an unsafe override).
    def check(self, event: Transfer) -> Iterable[Diagnostic]:  # type: ignore[override]
        ctx = event.ctx
        if event.kind not in PUT_KINDS or ctx.cross_host_transfers:
            return
        for pair in pairs(event):
            if pair.src is None or pair.dst is None or ctx.compare(pair.src, pair.dst) != "different":
                continue
            x = array_label(ctx, event, pair)
            if cross_host_path(ctx, pair):
                # The same layout on other processes' devices (trainer and rollout halves):
                # JAX takes its cross-host transfer path, which needs backend support
                # (jax 0.10.2 dispatch.py _is_supported_cross_host_transfer: CPU has none,
                # jax's own cross-host tests run on GPU and TPU) or the socket flag, whose
                # presence silences the rule above. Claimed only where CPU is a target.
                if "cpu" not in ctx.platforms:
                    continue
                raised = ("multi-controller JAX tries its "
                          "cross-host transfer (the same layout on other processes' devices), which the CPU backend lacks, so "
                          "there every process raises "
                          "\"The backend ... does not support cross-host device transfers\" (a GPU or TPU "
                          "backend with cross-host transfers, or jax_cross_host_transfer_socket_address, "
                          "moves it)")
            else:
                raised = ("multi-controller JAX raises \"input and target sharding should have the same set of "
                          "devices\"")
            msg = (
                f"{event.spelled} moves '{x}' {sides(ctx, pair)}, a different device set"
                f"{different_clause(ctx, pair)}: {raised}; build the target on the array's own mesh: "
                f"{fix_hint(ctx, event, pair)}, or move the data between device groups through the host "
                "(jax.make_array_from_process_local_data)"
            )
            yield report(self.code, event, pair, msg, fix=rebuild_on_own_mesh(ctx, event, pair))
            return

    examples = (
        Invalid(_HEAD + """
half = Mesh(np.array(jax.devices()[:4]), ('x',))
y = jax.device_put(x, NamedSharding(half, P('x')))  # RSH201:5
""", fixed=_HEAD + """
half = Mesh(np.array(jax.devices()[:4]), ('x',))
y = jax.device_put(x, NamedSharding(x.sharding.mesh, P('x')))  # RSH201:5
"""),
        Invalid(_HEAD + """
middle = Mesh(np.array(jax.devices()[2:6]), ('x',))
y = jax.device_put(x, NamedSharding(middle, P('x')))  # RSH201:5
""", fixed=_HEAD + """
middle = Mesh(np.array(jax.devices()[2:6]), ('x',))
y = jax.device_put(x, NamedSharding(x.sharding.mesh, P('x')))  # RSH201:5
"""),
        Invalid(_HEAD + """
from jax import device_put
evens = Mesh(np.array(jax.devices()[::2]), ('x',))
odds = Mesh(np.array(jax.devices()[1::2]), ('x',))
a = device_put(np.arange(4.0), NamedSharding(evens, P('x')))
b = device_put(a, NamedSharding(odds, P('x')))  # RSH201:5
"""),
        Invalid(_HEAD + """
sub = Mesh(np.array(jax.devices()[:4]), ('x',))
z = jax.make_array_from_callback((8,), NamedSharding(mesh, P('x')), lambda idx: np.arange(8.0)[idx])
with jax.set_mesh(sub):
    y = jax.device_put(z, P('x'))  # RSH201:9
"""),
        Invalid(_HEAD + """
sub = Mesh(np.array(jax.devices()[:4]), ('x',))


def replicate(a):
    return jax.device_put(a, P())  # RSH201:12


with jax.set_mesh(sub):
    y = replicate(x)
""", note="a helper every call runs under one context mesh places a bare PartitionSpec on it"),
        Valid(_HEAD + """
@jax.jit
def replicate(a):
    return jax.device_put(a, P())


with jax.set_mesh(mesh):
    y = replicate(x)
print(y.sharding)
""", note="traced at its call, under the context mesh x is on"),
        Invalid(_HEAD + """
import sys
half = Mesh(np.array(jax.devices()[:4]), ('x',))
if sys.argv[-1] == 'replicated':
    w = jax.device_put(np.ones(8), NamedSharding(mesh, P()))
else:
    w = x * 2
y = jax.device_put(w, NamedSharding(half, P('x')))  # RSH201:5
""", note="bound on two paths, on one mesh either way"),
        Invalid(_HEAD + """
half = Mesh(np.array(jax.devices()[:4]), ('x',))
h = jax.lax.fori_loop(0, 3, lambda i, c: jax.nn.relu(c) * 2, jax.lax.dynamic_slice(x, (0,), (8,)))
y = jax.device_put(h, NamedSharding(half, P('x')))  # RSH201:5
""", note="jax.lax and jax.nn compute on their operands' devices, as jnp does"),
        Valid(_HEAD + """
half = Mesh(np.array(jax.devices()[:4]), ('x',))
h = jax.lax.full_like(x, 1.0, shape=(4,))
y = jax.device_put(h, NamedSharding(half, P('x')))
print(y.sharding)
""", note="full_like with another shape makes an uncommitted array"),
        Invalid(_HEAD + """
half = Mesh(np.array(jax.devices()[:4]), ('x',))
y = jax.device_put(x, jax.memory.Space.Host)
z = jax.device_put(y, NamedSharding(half, P('x')))  # RSH201:5
""", note="jax.memory.Space.Host moves x to host memory of its own devices"),
        Invalid(_HEAD + """
half = Mesh(np.array(jax.devices()[:4]), ('x',))
y = jax.device_put(x, NamedSharding(half, P('x')).with_memory_kind('pinned_host'))  # RSH201:5
""", fixed=_HEAD + """
half = Mesh(np.array(jax.devices()[:4]), ('x',))
y = jax.device_put(x, NamedSharding(x.sharding.mesh, P('x')).with_memory_kind('pinned_host'))  # RSH201:5
""", note="another memory of the same devices: with_memory_kind keeps the mesh"),
        Valid(_HEAD + """
s = NamedSharding(mesh, P('x'))
y = jax.device_put(x, s.with_memory_kind('pinned_host'))
print(y.sharding)
"""),
        Valid(_HEAD + """
half = Mesh(np.array(jax.devices()[:4]), ('x',))
h = jax.device_put(np.arange(8.0))
z = jax.device_put(h, NamedSharding(half, P('x')))
print(z.sharding)
""", note="device_put of host data without a target makes an uncommitted array"),
        Invalid(_HEAD + """
half = Mesh(np.array(jax.devices()[:4]), ('x',))
tree = {'w': x, 'b': x}
out = jax.device_put(tree, NamedSharding(half, P('x')))  # RSH201:7
"""),
        Invalid(_HEAD + """
half = Mesh(np.array(jax.devices()[:4]), ('x',))
y = x.to_device(NamedSharding(half, P('x')))  # RSH201:5
"""),
        Invalid(_HEAD + """
half = Mesh(np.array(jax.devices()[:4]), ('x',))
params = {'w': x, 'b': x * 2}
to_half = NamedSharding(half, P('x'))
targets = {'w': to_half, 'b': to_half}
moved = jax.tree.map(lambda a, t: jax.device_put(a, t), params, targets)  # RSH201:35
""", note="jax.tree.map over the arrays and their target shardings, leaf by leaf"),
        Valid(_HEAD + """
half = Mesh(np.array(jax.devices()[:4]), ('x',))
host = {'w': np.ones(8), 'b': np.zeros(8)}
placed = jax.tree.map(lambda a: jax.device_put(a, NamedSharding(half, P('x'))), host)
print(placed['w'].sharding)
""", note="host data put onto any mesh, leaf by leaf"),
        Invalid(_HEAD + """
# make_mesh takes the first prod(shape) devices of the list it is given, on every
# platform (only their order is the platform's): here the last half of jax.devices().
flipped = jax.make_mesh((jax.device_count() // 2,), ('x',), devices=jax.devices()[::-1])  # RSH102:11
y = jax.device_put(x, NamedSharding(flipped, P('x')))  # RSH201:5
"""),
        Invalid(_HEAD + """
grid = mesh.devices.reshape(2, 4)
column = Mesh(grid[:, 0], ('x',))
y = jax.device_put(x, NamedSharding(column, P('x')))  # RSH201:5
"""),
        Invalid(_HEAD + """
grid = np.array(jax.devices()).reshape(2, 4)
row = Mesh(grid[1], ('x',))
y = jax.device_put(x, NamedSharding(row, P('x')))  # RSH201:5
"""),
        Valid(_HEAD + """
y = jax.device_put(x, NamedSharding(mesh, P()))
print(y.sharding)
"""),
        Valid(_HEAD + """
grid = mesh.devices.reshape(2, 4)
whole = Mesh(grid[:, :], ('a', 'b'))
first = grid[0, 0]
y = jax.device_put(x, NamedSharding(whole, P(('a', 'b'))))
print(y.sharding, first)
"""),
        Valid(_HEAD + """
# The same devices in the platform's order: reordered on CPU and TPU (RSH202), never a new set.
flipped = jax.make_mesh((jax.device_count(),), ('x',), devices=jax.devices()[::-1])  # RSH102:11
y = jax.device_put(x, NamedSharding(flipped, P('x')))  # RSH202:5
print(y.sharding)
"""),
        Valid(_HEAD + """
def move(a, sharding):
    return jax.device_put(a, sharding)

half = Mesh(np.array(jax.devices()[:4]), ('x',))
print(move(np.arange(4.0), NamedSharding(half, P('x'))))
"""),
        Valid(_HEAD + """
again = Mesh(mesh.devices, ('data',))
y = jax.device_put(x, NamedSharding(again, P('data')))
print(y.sharding)
"""),
        Valid(_HEAD + """
grid = Mesh(mesh.devices.reshape(2, 4), ('a', 'b'))
y = jax.device_put(x, NamedSharding(grid, P(('a', 'b'))))
print(y.sharding)
"""),
        Valid(_HEAD + """
half = Mesh(np.array(jax.devices()[:4]), ('x',))
host = np.arange(4.0)
y = jax.device_put(host, NamedSharding(half, P('x')))
print(y.sharding)
"""),
        Valid(_HEAD + """
import jax.numpy as jnp
half = Mesh(np.array(jax.devices()[:4]), ('x',))
y = jax.device_put(jnp.arange(4.0), NamedSharding(half, P('x')))
print(y.sharding)
"""),
        Valid(_HEAD + """
local = Mesh(np.array(jax.local_devices()), ('x',))
mine = jax.device_put(np.arange(8.0), NamedSharding(local, P('x')))
again = jax.device_put(mine, NamedSharding(local, P()))
print(again.sharding)
"""),
        Valid(_HEAD + """
one = jax.device_put(np.ones(2), jax.local_devices()[0])
print(one)
"""),
        Valid(_HEAD + """
devs = jax.devices()
stage0, stage1 = devs[:4], devs[4:]
full = Mesh(np.array(stage0 + stage1), ('x',))
y = jax.device_put(x, NamedSharding(full, P('x')))
print(y.sharding)
"""),
        Valid(_HEAD + """
# The same eight devices: on TPU in another order (RSH202), never another set.
made = jax.make_mesh((8,), ('x',))
y = jax.device_put(x, NamedSharding(made, P('x')))  # RSH202:5
print(y.sharding)
"""),
        Valid(_HEAD + """
import sys
half = Mesh(np.array(jax.devices()[:4]), ('x',))
target = mesh if len(sys.argv) < 5 else half
y = jax.device_put(x, NamedSharding(target, P('x')))
print(y.sharding)
"""),
        Valid(_HEAD + """
y = jax.device_put(x, NamedSharding(x.sharding.mesh, P()))
print(y.sharding)
"""),
        Invalid(_HEAD + """
n = jax.device_count() // 2
trainer = Mesh(np.array(jax.devices()[:n]), ('x',))
rollout = Mesh(np.array(jax.devices()[n:]), ('x',))
a = jax.device_put(np.arange(8.0), NamedSharding(trainer, P()))
b = jax.device_put(a, NamedSharding(rollout, P()))  # RSH201:5
""", note="the same layout moved to the other processes' devices (trainer and rollout halves): "
                "JAX's cross-host transfer path, which CPU does not support"),
        Invalid(_HEAD + """
def split_meshes():
    devs = jax.devices()
    return Mesh(np.array(devs[:6]), ('x',)), Mesh(np.array(devs[6:]), ('x',))


def sync(weights, target):
    return jax.device_put(weights, NamedSharding(target, P('x')))  # RSH201:12


trainer, rollout = split_meshes()
params = jax.device_put(np.arange(12.0), NamedSharding(trainer, P('x')))
print(sync(params, rollout))
""", note="a tuple of meshes from a helper, and an array and a mesh through parameters"),
        Invalid(_HEAD + """
half = Mesh(np.array(jax.devices()[:4]), ('x',))


class Evaluator:
    def __init__(self, mesh):
        self.eval_mesh = mesh

    def evaluate(self, params):
        return jax.device_put(params, NamedSharding(self.eval_mesh, P('x')))  # RSH201:16


print(Evaluator(half).evaluate(x))
""", note="a mesh held by an instance, set from a constructor argument"),
        Valid(_HEAD + """
half = Mesh(np.array(jax.devices()[:4]), ('x',))


def move(a, target):
    # Called with two different meshes: the parameter is unknown, nothing fires.
    return jax.device_put(a, NamedSharding(target, P('x')))


print(move(x, mesh).sharding)
print(move(jax.device_put(np.arange(4.0), NamedSharding(half, P('x'))), half).sharding)
"""),
        Valid(_HEAD + """
def build(devs=jax.devices()[:4]):
    return Mesh(np.array(devs), ('x',))


full = build(jax.devices())
y = jax.device_put(x, NamedSharding(full, P('x')))
print(y.sharding)
""", note="the default would be a subset, but the only call passes every device"),
        Invalid(_HEAD + """
@jax.jit
def step(a):
    return a * 2


half = Mesh(np.array(jax.devices()[:4]), ('x',))
out = step(x)
y = jax.device_put(out, NamedSharding(half, P('x')))  # RSH201:5
""", note="a jitted call's result is committed to its arguments' devices"),
        Invalid(_HEAD + """
import jax.numpy as jnp
half = Mesh(np.array(jax.devices()[:4]), ('x',))
y = jax.device_put(jnp.sin(x)[:4], NamedSharding(half, P('x')))  # RSH201:5
""", note="an eager computation's result stays on its operand's devices"),
        Invalid(_HEAD + """
half = Mesh(np.array(jax.devices()[:4]), ('x',))
y = jax.device_put(-x, NamedSharding(half, P('x')))  # RSH201:5
""", note="so does a negation's"),
        Invalid(_HEAD + """
half = Mesh(np.array(jax.devices()[:4]), ('x',))
grads = jax.grad(lambda w: (w * w).sum())(x)
y = jax.device_put(grads, NamedSharding(half, P('x')))  # RSH201:5
""", note="gradients are computed where the arguments are"),
        Invalid(_HEAD + """
half = Mesh(np.array(jax.devices()[:4]), ('x',))
w = jax.device_put(np.ones(8), NamedSharding(mesh, P('x')))
gx, gw = jax.jit(jax.grad(lambda a, b: (a * b).sum(), argnums=(0, 1)))(x, w)
y = jax.device_put(gw, NamedSharding(half, P('x')))  # RSH201:5
""", note="argnums=(0, 1) gives a tuple of gradients, each where the arguments are"),
        Valid(_HEAD + """
@jax.jit
def step(a):
    return a * 2


y = jax.device_put(step(x) + np.ones(8), NamedSharding(mesh, P()))
print(y.sharding)
"""),
        Valid(_HEAD + """
half = Mesh(np.array(jax.devices()[:4]), ('x',))
k0, k1 = jax.random.split(jax.random.key(0))
y = jax.device_put(jax.random.normal(k0, (4,)), NamedSharding(half, P('x')))
print(y.sharding)
""", note="keys split from a fresh key are uncommitted, and so is what is drawn from them"),
        Valid(_HEAD + """
w = jax.device_put(np.ones(8), NamedSharding(mesh, P('x')))
gx, gw = jax.value_and_grad(lambda a, b: (a * b).sum(), argnums=(0, 1))(x, w)[1]
y = jax.device_put(gw, NamedSharding(mesh, P()))
print(y.sharding)
"""),
        Invalid(_HEAD + """
import jax.numpy as jnp
half = Mesh(np.array(jax.devices()[:4]), ('x',))
with jax.set_mesh(mesh):
    w = jnp.zeros(8) + 1.0
y = jax.device_put(w, NamedSharding(half, P('x')))  # RSH201:5
""", note="under jax.set_mesh an array jnp makes is committed to the context mesh, replicated"),
        Valid(_HEAD + """
import jax.numpy as jnp
half = Mesh(np.array(jax.devices()[:4]), ('x',))
with mesh:
    w = jnp.zeros(8) + 1.0
y = jax.device_put(w, NamedSharding(half, P('x')))
print(y.sharding)
""", note="under the legacy `with mesh:` it stays uncommitted and moves anywhere"),
        Invalid(_HEAD + """
half = Mesh(np.array(jax.devices()[:4]), ('x',))
with jax.set_mesh(mesh):
    gate = jax.nn.sigmoid(np.ones(8))
y = jax.device_put(gate, NamedSharding(half, P('x')))  # RSH201:5
""", note="so is what jax.nn and jax.lax compute from host data there"),
        Valid(_HEAD + """
half = Mesh(np.array(jax.devices()[:4]), ('x',))
peak = jax.lax.reduce_max(np.ones((2, 4)), (1,))
y = jax.device_put(jax.nn.relu(peak), NamedSharding(half, P()))
print(y.sharding)
""", note="outside a mesh context it is uncommitted and moves anywhere"),
        Valid(_HEAD + """
from jax.experimental import multihost_utils
half = Mesh(np.array(jax.devices()[:4]), ('x',))
gathered = multihost_utils.process_allgather(x, tiled=True)
y = jax.device_put(gathered, NamedSharding(half, P('x')))
first = multihost_utils.broadcast_one_to_all(np.arange(4.0))
z = jax.device_put(first, NamedSharding(half, P('x')))
print(y.sharding, z.sharding)
""", note="process_allgather and broadcast_one_to_all give every process NumPy arrays"),
        Invalid(_HEAD + """
from functools import partial
half = Mesh(np.array(jax.devices()[:4]), ('x',))


@partial(jax.shard_map, mesh=mesh, in_specs=P('x'), out_specs=(P('x'), P()))
def stats(a):
    return a * 2, jax.lax.pmax(a.max(), 'x')


doubled, peak = stats(np.arange(8.0))
y = jax.device_put(doubled, NamedSharding(half, P('x')))  # RSH201:5
""", note="jax.shard_map's results are on its mesh, placed by out_specs"),
        Valid(_HEAD + """
from functools import partial


@partial(jax.shard_map, mesh=mesh, in_specs=P('x'), out_specs=P('x'))
def double(a):
    return a * 2


y = jax.device_put(double(x), NamedSharding(mesh, P()))
print(y.sharding)
"""),
        Valid("""
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

mesh = Mesh(np.array(jax.devices()), ('x',))
x = jax.device_put(np.arange(8.0), NamedSharding(mesh, P('x')))

y = jax.device_put(x, NamedSharding(x.sharding.mesh, P()))  # replicated on x's devices
print(y.sharding.spec)
""", note="the page's Use instead: a real move on the array's own devices", instead=True),
    ) + FLOW_EXAMPLES

    grounding = Grounding(
        multi=Outcome("error", r"same set of devices|not fully addressable|addressable devices"
                               r"|does not support cross-host device transfers"),
        single=Outcome("ok"),
    )
