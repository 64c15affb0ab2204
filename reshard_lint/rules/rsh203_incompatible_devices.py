"""RSH203: jit, sharding constraints, reshard, asarray or an eager op across meshes."""

from __future__ import annotations

from typing import Iterable

from .helpers.crossing import array_label, pairs, reorder_clause, report, sides
from ..core.diagnostic import Diagnostic
from ..analysis.events import ContextOp, Transfer
from .helpers.rsh203_axis_types import types_differ, types_message
from .helpers.rsh203_context_mesh import CONTEXT_EXAMPLES, context_diagnostic
from .base import Grounding, Invalid, Outcome, Rule, Valid

_HEAD = """\
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

mesh = Mesh(np.array(jax.devices()), ('x',))
x = jax.device_put(np.arange(8.0), NamedSharding(mesh, P('x')))
"""

_KINDS = ("jit_in", "jit_out", "constraint", "reshard", "asarray", "binop")


class IncompatibleDevices(Rule):
    code = "RSH203"
    name = "incompatible-devices"
    summary = "jit, with_sharding_constraint, reshard, asarray or an eager op mixing meshes"
    priority = 10
    events = (Transfer, ContextOp)
    what = "Flags `jax.jit(f, out_shardings=s)(x)` and `jax.jit(f, in_shardings=s)(x)` with a different device set, `jax.shard_map(f, mesh=m, ...)(x)` (also as `@partial(jax.shard_map, mesh=m, ...)`, and `jax.experimental.shard_map.shard_map`), `jax.lax.with_sharding_constraint(x, s)`, `jax.sharding.reshard(x, s)`, `jnp.asarray(x, device=s)` and eager binary operations `x + y`, when the array's mesh and the target's (or the other operand's) mesh differ in set or order; an operand may be computed from an array (a slice, a `jnp` function, a jitted call's result), which JAX keeps on that array's devices. Under the context mesh of `jax.set_mesh(m)` (or `use_mesh(m)`), it also flags a JAX computation (indexing or slicing, arithmetic, `jnp.*` and `jax.lax.*` calls, a jitted call) on an array committed to one device (`jax.device_put(x, device)`, `x.addressable_shards[i].data`, `x.addressable_data(i)`), and a jitted function with `out_shardings` on another mesh called there. The legacy `with mesh:` sets no such context and is not flagged."
    why = 'These run inside one computation, which needs one device assignment. JAX raises `ValueError: Received incompatible devices for jitted computation` (for `in_shardings` on another device set: `Sharding passed to jit does not match the sharding on the respective arg`), on one host and on many. An eager operation between an array on a `Mesh` (Auto axes unless `axis_types` says otherwise) and one on a `jax.make_mesh` mesh (Explicit axes by default in jax 0.10.2) raises `ValueError: Mesh for all inputs should be equal` first, on every platform: JAX compares the axis types of the meshes before their devices, and the message says so, with the fix (both meshes built the same way; `axis_types=(AxisType.Auto,)` on the `jax.make_mesh` side makes the types agree).'
    fix_text = 'No automatic fix: which mesh the computation should use is a design decision. Move the array first with `jax.device_put(x, s)`, or build both sides on one mesh. Under a context mesh: make the array on it (`jax.device_put(host_data, NamedSharding(m, P(...)))`, or `jax.make_array_from_process_local_data` in multi-controller code, where putting a committed single-device array onto a global sharding is RSH302), or leave the context (`with jax.set_mesh(other):`) for that computation.'
    platforms_text = "Compares device order on each target platform (`platforms`, default TPU, GPU and CPU): besides orders written in the code, it fires where two ordinary builders agree on CPU but not on multi-host TPU (`jax.make_mesh((16,))`, `jax.make_mesh((4, 4))` and `np.array(jax.devices())` are three orders there; `sorted(devs, key=lambda d: d.id)` is not enumeration order there), and the message says 'on multi-host TPU' and what orders each side. The TPU orders are checked against JAX's own builders on mock TPU topologies; the `jit` failure between two orders is read from JAX's source and observed on CPU with orders written by hand. See [platforms](../platforms.md)."
    references = ('jax-ml/jax#15903', 'AI-Hypercomputer/maxtext#2863 (incompatible devices under set_mesh)',
                  "RUNTIME-FACTS.md: 'The context mesh'")

    # The event type narrower than Rule.check's: the engine hands a rule only the events
    # its `events` names (mypy takes that for an unsafe override).
    def check(self, event: Transfer | ContextOp) -> Iterable[Diagnostic]:  # type: ignore[override]
        if isinstance(event, ContextOp):
            yield from context_diagnostic(self.code, event)
            return
        if event.kind not in _KINDS:
            return
        ctx = event.ctx
        for pair in pairs(event):
            if pair.src is None or pair.dst is None:
                continue
            verdict = ctx.compare(pair.src, pair.dst)
            if verdict != "reordered" and not ctx.differs(pair.src, pair.dst):
                continue
            if event.kind == "jit_in" and verdict == "reordered":
                continue  # RSH204
            how = {"different": "a different device set",
                   "reordered": "the same devices in another order"}.get(
                verdict, "a different device set or order (depending on the device count)")
            reorder = reorder_clause(ctx, pair) if verdict == "reordered" else ""
            how += reorder
            x = array_label(ctx, event, pair)
            if event.kind == "jit_in":
                raised = "ValueError: Sharding passed to jit does not match the sharding on the respective arg"
            else:
                raised = "ValueError: Received incompatible devices for jitted computation"
            if event.kind == "binop":
                what = f"'{ctx.code(event.node, 40)}' combines '{x}' with an array"
            else:
                what = f"{event.spelled} takes '{x}'"
            if event.kind == "binop" and types_differ(pair.src, pair.dst):
                msg = types_message(ctx, what, sides(ctx, pair), reorder, bool(reorder), x, pair.src, pair.dst)
            else:
                msg = (
                    f"{what} {sides(ctx, pair)}, {how}: JAX raises \"{raised}\" on one host and on many; "
                    f"jax.device_put('{x}' onto the target's sharding) first, or use one mesh for both"
                )
            yield report(self.code, event, pair, msg)
            return

    examples = (
        Invalid(_HEAD + """
half = Mesh(np.array(jax.devices()[:4]), ('x',))
f = jax.jit(lambda a: a * 2, out_shardings=NamedSharding(half, P('x')))
y = f(x)  # RSH203:5
"""),
        Invalid(_HEAD + """
half = Mesh(np.array(jax.devices()[:4]), ('x',))


@jax.jit
def f(a):
    return jax.lax.with_sharding_constraint(a, NamedSharding(half, P('x')))  # RSH203:12


lowered = f.lower(x)
""", note="f.lower(x) traces f with x, as a call does"),
        Invalid(_HEAD + """
rev = Mesh(np.array(jax.devices()[::-1]), ('x',))  # RSH102:7
y = jax.jit(lambda a: a + 1, out_shardings=NamedSharding(rev, P('x')))(x)  # RSH203:5
"""),
        Invalid(_HEAD + """
half = Mesh(np.array(jax.devices()[:4]), ('x',))
y = jax.jit(lambda a: a + 1, in_shardings=NamedSharding(half, P('x')))(x)  # RSH203:5
"""),
        Invalid(_HEAD + """
half = Mesh(np.array(jax.devices()[:4]), ('x',))
h = jax.device_put(np.arange(4.0), NamedSharding(half, P('x')))
step = jax.jit(lambda a: a * 2)
y = step(x)[:4] + h  # RSH203:5
""", note="computed arrays stay on their operands' devices: a jitted call's result, then a slice of it"),
        Invalid(_HEAD + """
half = Mesh(np.array(jax.devices()[:4]), ('x',))
y = jax.jit(lambda v: jax.lax.with_sharding_constraint(v, NamedSharding(half, P('x'))))(x)  # RSH203:23
""", note="a jitted lambda's body runs with the arguments of its call"),
        Invalid(_HEAD + """
from jax.sharding import AxisType
explicit = Mesh(np.array(jax.devices()), ('x',), axis_types=(AxisType.Explicit,))
rev = Mesh(np.array(jax.devices()[::-1]), ('x',), axis_types=(AxisType.Explicit,))  # RSH102:7
e = jax.device_put(np.arange(8.0), NamedSharding(explicit, P('x')))
y = jax.sharding.reshard(e, NamedSharding(rev, P('x')))  # RSH203:5
"""),
        Invalid(_HEAD + """
rev = Mesh(np.array(jax.devices()[::-1]), ('x',))  # RSH102:7
other = jax.device_put(np.ones(8), NamedSharding(rev, P('x')))
print(x + other)  # RSH203:7
"""),
        Invalid(_HEAD + """
half = Mesh(np.array(jax.devices()[:4]), ('x',))
y = jnp.asarray(x, device=NamedSharding(half, P('x')))  # RSH203:5
"""),
        Invalid(_HEAD + """
half = Mesh(np.array(jax.devices()[:4]), ('x',))
y = jax.lax.with_sharding_constraint(x, NamedSharding(half, P('x')))  # RSH203:5
"""),
        Valid(_HEAD + """
y = jax.jit(lambda a: a * 2, out_shardings=NamedSharding(mesh, P()))(x)
print(y.sharding)
"""),
        Valid(_HEAD + """
y = jax.jit(lambda a: a * 2, in_shardings=NamedSharding(mesh, P('x')))(x)
print(y.sharding)
"""),
        Valid(_HEAD + """
rev = Mesh(np.array(jax.devices()[::-1]), ('x',))  # RSH102:7
host = np.arange(8.0)
y = jax.jit(lambda a: a * 2, out_shardings=NamedSharding(rev, P('x')))(host)
print(y.sharding)
"""),
        Valid(_HEAD + """
other = jax.device_put(np.ones(8), NamedSharding(Mesh(mesh.devices, ('x',)), P()))
print((x + other).sharding)
"""),
        Valid(_HEAD + """
y = x * 2 + 1
print(y.sharding)
"""),
        Valid(_HEAD + """
y = jax.sharding.reshard(x, NamedSharding(mesh, P()))
print(y.sharding)
"""),
        Valid(_HEAD + """
def constrain(a, s):
    return jax.lax.with_sharding_constraint(a, s)

half = Mesh(np.array(jax.devices()[:4]), ('x',))
print(jax.jit(constrain, static_argnums=1)(np.arange(4.0), NamedSharding(half, P('x'))).sharding)
"""),
        Valid(_HEAD + """
y = jnp.asarray(x, device=NamedSharding(mesh, P()))
z = jnp.zeros(8, device=NamedSharding(mesh, P('x')))
print((y + z).sharding)
"""),
        Valid(_HEAD + """
grid = Mesh(mesh.devices.reshape(2, 4), ('a', 'b'))
other = jax.device_put(np.ones(8), NamedSharding(grid, P(('a', 'b'))))
print((x + other).sharding)
"""),
        Valid(_HEAD + """
half = Mesh(np.array(jax.devices()[:4]), ('x',))
small = jax.device_put(np.ones(4), NamedSharding(half, P('x')))
print(small.sharding, x.sharding)
"""),
        Invalid(_HEAD + """
half = Mesh(np.array(jax.devices()[:4]), ('x',))


@jax.jit
def step(a):
    return jax.lax.with_sharding_constraint(a, NamedSharding(half, P('x')))  # RSH203:12


print(step(x))
""", note="the jitted body sees the argument it is called with"),
        Valid(_HEAD + """
half = Mesh(np.array(jax.devices()[:4]), ('x',))


@jax.jit
def step(a):
    return jax.lax.with_sharding_constraint(a, NamedSharding(half, P('x')))


print(step(jax.device_put(np.arange(4.0), NamedSharding(half, P('x')))))
""", note="every call passes an array on the constraint's mesh"),
        Invalid(_HEAD + """
half = Mesh(np.array(jax.devices()[:4]), ('x',))
y = jax.shard_map(lambda a: a * 2, mesh=half, in_specs=P('x'), out_specs=P('x'))(x[:4])  # RSH203:5
""", note="jax.shard_map runs on its mesh's devices: an argument on others cannot enter"),
        Invalid(_HEAD + """
flipped = Mesh(np.array(jax.devices()[::-1]), ('x',))  # RSH102:11
y = jax.shard_map(lambda a: a * 2, mesh=flipped, in_specs=P('x'), out_specs=P('x'))(x)  # RSH203:5
""", note="nor one on its devices in another order"),
        Valid(_HEAD + """
half = Mesh(np.array(jax.devices()[:4]), ('x',))
y = jax.shard_map(lambda a: a * 2, mesh=half, in_specs=P('x'), out_specs=P('x'))(np.arange(4.0))
print(y.sharding)
""", note="host data enters any shard_map"),
        Valid("""
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

mesh = Mesh(np.array(jax.devices()), ('x',))
x = jax.device_put(np.arange(8.0), NamedSharding(mesh, P('x')))

f = jax.jit(lambda a: a * 2, out_shardings=NamedSharding(mesh, P()))
y = f(x)
print(y.sharding)
""", note="the page's Use instead", instead=True),
    ) + CONTEXT_EXAMPLES

    grounding = Grounding(
        multi=Outcome("error", r"incompatible devices|does not match the sharding"),
        single=Outcome("error", r"incompatible devices|does not match the sharding"),
    )
