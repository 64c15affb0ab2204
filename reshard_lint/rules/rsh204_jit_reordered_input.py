"""RSH204: jit with in_shardings on a reordering of the argument's mesh."""

from __future__ import annotations

from typing import Iterable

from .helpers.crossing import array_label, pairs, reorder_clause, report, sides
from ..core.diagnostic import Diagnostic
from ..analysis.events import Transfer
from .base import Grounding, Invalid, Outcome, Rule, Valid

_HEAD = """\
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

mesh = Mesh(np.array(jax.devices()), ('x',))
x = jax.device_put(np.arange(8.0), NamedSharding(mesh, P('x')))
"""


class JitReorderedInput(Rule):
    code = "RSH204"
    name = "jit-reordered-input"
    summary = "jit in_shardings on a reordering of the committed argument's mesh"
    priority = 20
    events = (Transfer,)
    what = 'Flags `jax.jit(f, in_shardings=s)(x)` (call and decorator forms) when `x` is committed to a mesh and `s` is on the same devices in another order.'
    why = 'On one process the first call works: JAX silently copies the argument into the new order. The second call of the same jitted function crashes the process: XLA logs `INVALID_ARGUMENT: Buffer passed to Execute() as argument 0 to replica 0 is on device cpu:0, but replica is assigned to device cpu:7` and the process dies with SIGSEGV (observed with jax 0.10.2, 1 process x 8 CPU devices, `in_shardings` on the reversed device order; tests/runtime/test_strict_jit.py runs that program). In multi-controller JAX the processes crash the same way (`... is on device cpu:0, but replica is assigned to device cpu:3`). Runtime strict mode (`reshard_lint.runtime.strict()`, `pytest --reshard-strict`) raises `ReshardError` RSH204 at the first call instead, before JAX runs anything.'
    fix_text = "No automatic fix. Put the argument on the jit's sharding first (`x = jax.device_put(x, s)`, which RSH202 then reports as a reshuffle), or build `in_shardings` on the argument's mesh."
    platforms_text = "Compares device order on each target platform (`platforms`, default TPU, GPU and CPU): besides orders written in the code, it fires where two ordinary builders agree on CPU but not on multi-host TPU (`jax.make_mesh((16,))`, `jax.make_mesh((4, 4))` and `np.array(jax.devices())` are three orders there; `sorted(devs, key=lambda d: d.id)` is not enumeration order there), and the message says 'on multi-host TPU' and what orders each side. The TPU orders are checked against JAX's own builders on mock TPU topologies; the `jit` failure between two orders is read from JAX's source and observed on CPU with orders written by hand. See [platforms](../platforms.md)."
    references = ('RUNTIME-FACTS.md: jit with in_shardings on a reversed mesh',)

    # The event type narrower than Rule.check's: the engine hands a rule only the events
    # its `events` names (mypy takes that for an unsafe override).
    def check(self, event: Transfer) -> Iterable[Diagnostic]:  # type: ignore[override]
        if event.kind != "jit_in":
            return
        ctx = event.ctx
        for pair in pairs(event):
            if pair.src is None or pair.dst is None or ctx.compare(pair.src, pair.dst) != "reordered":
                continue
            x = array_label(ctx, event, pair)
            msg = (
                f"{event.spelled} gets '{x}' {sides(ctx, pair)} through in_shardings, the same devices in "
                f"another order{reorder_clause(ctx, pair)}: on one host the first call copies it and the second call crashes the "
                "process, multi-controller JAX crashes at once (SIGSEGV after XLA INVALID_ARGUMENT "
                "\"Buffer passed to Execute() ... is on device\"); "
                f"jax.device_put('{x}' onto in_shardings) before the call, or build in_shardings on "
                "the argument's mesh"
            )
            yield report(self.code, event, pair, msg)
            return

    examples = (
        Invalid(_HEAD + """
rev = Mesh(np.array(jax.devices()[::-1]), ('x',))  # RSH102:7
f = jax.jit(lambda a: a * 2, in_shardings=NamedSharding(rev, P('x')))
y = f(x)  # RSH204:5
print(float(y.sum()))
"""),
        Invalid(_HEAD + """
from functools import partial
rev = Mesh(np.array(jax.devices()[::-1]), ('x',))  # RSH102:7

@partial(jax.jit, in_shardings=NamedSharding(rev, P('x')))
def step(a):
    return a + 1

y = step(x)  # RSH204:5
print(float(y.sum()))
"""),
        Valid(_HEAD + """
rev = Mesh(np.array(jax.devices()[::-1]), ('x',))  # RSH102:7
s = NamedSharding(rev, P('x'))
x = jax.device_put(x, s)  # RSH202:5
y = jax.jit(lambda a: a * 2, in_shardings=s)(x)
print(float(y.sum()))
"""),
        Valid(_HEAD + """
y = jax.jit(lambda a: a * 2, in_shardings=NamedSharding(mesh, P('x')))(x)
print(float(y.sum()))
"""),
        Valid(_HEAD + """
rev = Mesh(np.array(jax.devices()[::-1]), ('x',))  # RSH102:7
r = jax.device_put(np.arange(8.0), NamedSharding(rev, P('x')))
y = jax.jit(lambda a: a * 2, in_shardings=NamedSharding(rev, P('x')))(r)
print(float(y.sum()))
"""),
        Valid(_HEAD + """
same = Mesh(mesh.devices, ('x',))
y = jax.jit(lambda a: a * 2, in_shardings=NamedSharding(same, P('x')))(x)
print(float(y.sum()))
"""),
        Valid(_HEAD + """
def run(a, s):
    return jax.jit(lambda v: v * 2, in_shardings=s)(a)

print(float(run(x, NamedSharding(mesh, P('x'))).sum()))
"""),
        Valid(_HEAD + """
y = jax.jit(lambda a: a * 2)(x)
print(float(y.sum()))
"""),
        Invalid(_HEAD + """
# On TPU make_mesh orders the devices by physical position, np.array(jax.devices()) by
# enumeration: on one CPU host the two agree and this runs (docs/platforms.md).
made = jax.make_mesh((8,), ('x',))
y = jax.jit(lambda a: a * 2, in_shardings=NamedSharding(made, P('x')))(x)  # RSH204:5
print(float(y.sum()))
""", note="Reordered on multi-host TPU only: on CPU, where this runs, the orders agree.",
            platform="tpu"),
        Valid(_HEAD + """
# One builder call, one order on every platform.
made = jax.make_mesh((8,), ('x',))
z = jax.device_put(np.arange(8.0), NamedSharding(made, P('x')))
y = jax.jit(lambda a: a * 2, in_shardings=NamedSharding(made, P('x')))(z)
print(float(y.sum()))
"""),
        Valid(_HEAD + """
grid = Mesh(mesh.devices.reshape(2, 4), ('a', 'b'))
y = jax.jit(lambda a: a * 2, in_shardings=NamedSharding(grid, P(('a', 'b'))))(x)
print(float(y.sum()))
"""),
        Valid(_HEAD + """
f = jax.jit(lambda a: a * 2, in_shardings=NamedSharding(mesh, P('x')))
for _ in range(2):
    x = f(x)
print(float(x.sum()))
"""),
        Valid(_HEAD + """
rev = Mesh(np.array(jax.devices()[::-1]), ('x',))  # RSH102:7
f = jax.jit(lambda a: a * 2, out_shardings=NamedSharding(mesh, P('x')))
print(float(f(np.arange(8.0)).sum()), rev.shape)
"""),
        Valid("""
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

mesh = Mesh(np.array(jax.devices()), ('x',))
x = jax.device_put(np.arange(8.0), NamedSharding(mesh, P('x')))

f = jax.jit(lambda a: a * 2, in_shardings=NamedSharding(mesh, P('x')))
y = f(x)
print(float(y.sum()))
""", note="the page's Use instead", instead=True),
    )

    grounding = Grounding(multi=Outcome("crash"), single=Outcome("ok"), timeout=60.0)
