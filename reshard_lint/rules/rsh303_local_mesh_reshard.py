"""RSH303: device_put of a global array onto a jax.local_devices() mesh."""

from __future__ import annotations

from typing import Iterable

from .helpers.crossing import PUT_KINDS, array_label, pairs, report, sides
from ..core.diagnostic import Diagnostic
from ..analysis.events import Transfer
from .base import Grounding, Invalid, Outcome, Rule, Valid

_HEAD = """\
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

glob = Mesh(np.array(jax.devices()), ('x',))
local = Mesh(np.array(jax.local_devices()), ('x',))
x = jax.device_put(np.arange(8.0), NamedSharding(glob, P('x')))
"""


class LocalMeshReshard(Rule):
    code = "RSH303"
    name = "local-mesh-reshard"
    summary = "device_put of an array spanning all processes onto a jax.local_devices() mesh"
    priority = 30
    events = (Transfer,)
    runtimes = ("multi-controller",)
    what = 'Flags `jax.device_put(x, s)` where `x` is a global array (spanning several processes) and `s` is built on `jax.local_devices()`.'
    why = 'JAX cannot reshard an array it does not fully hold: multi-controller JAX raises `NotImplementedError: Cannot reshard an input that is not fully addressable`.'
    fix_text = "No automatic fix. Take this process's part with `multihost_utils.global_array_to_host_local_array(x, mesh, spec)`."
    references = ('RUNTIME-FACTS.md: global array to a mesh on `jax.local_devices()`',)

    # The event type narrower than Rule.check's: the engine hands a rule only the events
    # its `events` names (mypy takes that for an unsafe override).
    def check(self, event: Transfer) -> Iterable[Diagnostic]:  # type: ignore[override]
        if event.kind not in PUT_KINDS:
            return
        ctx = event.ctx
        for pair in pairs(event):
            if pair.src is None or pair.dst is None:
                continue
            if ctx.locality(pair.src) != "global" or ctx.locality(pair.dst) != "local":
                continue
            x = array_label(ctx, event, pair)
            msg = (
                f"{event.spelled} moves '{x}', a global array, {sides(ctx, pair)}, which holds only this "
                "process's devices: multi-controller JAX raises \"NotImplementedError: Cannot reshard an "
                "input that is not fully addressable\"; take the local part with "
                f"multihost_utils.global_array_to_host_local_array({x}, mesh, spec)"
            )
            yield report(self.code, event, pair, msg)
            return

    examples = (
        Invalid(_HEAD + """
y = jax.device_put(x, NamedSharding(local, P('x')))  # RSH303:5
"""),
        Invalid(_HEAD + """
mine = jax.make_mesh((jax.local_device_count(),), ('x',), devices=jax.local_devices())
y = jax.device_put(x, NamedSharding(mine, P()))  # RSH303:5
"""),
        Valid(_HEAD + """
from jax.experimental import multihost_utils
y = multihost_utils.global_array_to_host_local_array(x, glob, P('x'))
print(y.shape)
"""),
        Valid(_HEAD + """
y = jax.device_put(np.arange(8.0), NamedSharding(local, P('x')))
print(y.shape)
"""),
        Valid(_HEAD + """
y = jax.device_put(x, NamedSharding(glob, P()))
print(y.sharding)
"""),
        Valid(_HEAD + """
def move(a, m):
    return jax.device_put(a, NamedSharding(m, P()))

print(move(np.ones(4), local).shape)
"""),
        Valid(_HEAD + """
shards = [s.data for s in x.addressable_shards]
print(len(shards))
"""),
        Valid(_HEAD + """
print(jax.device_put(x, NamedSharding(Mesh(glob.devices, ('y',)), P('y'))).sharding)
"""),
        Valid(_HEAD + """
import jax.numpy as jnp
print(jax.device_put(jnp.ones(8), NamedSharding(local, P('x'))).shape)
"""),
        Valid(_HEAD + """
mine = jax.device_put(np.arange(8.0), NamedSharding(local, P('x')))
print(jax.device_put(mine, NamedSharding(local, P())).shape)
"""),
        Valid(_HEAD + """
grid = Mesh(glob.devices.reshape(2, 4), ('a', 'b'))
print(jax.device_put(x, NamedSharding(grid, P(('a', 'b')))).sharding)
"""),
        Valid(_HEAD + """
print(local.shape, x.sharding)
"""),
        Valid("""
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
from jax.experimental import multihost_utils

glob = Mesh(np.array(jax.devices()), ('x',))
x = jax.device_put(np.arange(8.0), NamedSharding(glob, P('x')))

y = multihost_utils.global_array_to_host_local_array(x, glob, P('x'))
print(y.shape)
""", note="the page's Use instead", instead=True),
    )

    grounding = Grounding(
        multi=Outcome("error", r"not fully addressable", where="all"),
        single=Outcome("ok"),
    )
