"""RSH302: device_put of a process-local array to a global sharding."""

from __future__ import annotations

from typing import Iterable

from ..analysis.render import describe_mesh
from ..analysis.models.commitments import single_device
from .helpers.crossing import PUT_KINDS, array_label, pairs, report, sides
from ..core.diagnostic import Diagnostic
from ..analysis.events import Transfer
from .base import Grounding, Invalid, Outcome, Rule, Valid

_HEAD = """\
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

local = Mesh(np.array(jax.local_devices()), ('x',))
glob = Mesh(np.array(jax.devices()), ('x',))
x = jax.device_put(np.arange(8.0), NamedSharding(local, P('x')))
"""


class LocalToGlobalPut(Rule):
    code = "RSH302"
    name = "local-to-global-put"
    summary = "device_put of an array on jax.local_devices() to a sharding over all processes"
    priority = 30
    events = (Transfer,)
    runtimes = ("multi-controller",)
    what = 'Flags `jax.device_put(x, s)` where `x` lives on a mesh built from `jax.local_devices()`, or is committed to one of this process\'s devices (`jax.device_put(a, jax.local_devices()[0])`, a shard\'s `.data`, `x.addressable_data(i)`), and `s` spans all processes.'
    why = "`device_put` of a committed array cannot reach devices the process does not own: multi-controller JAX raises `ValueError: device_put's second argument must be a Device or a Sharding which represents addressable devices`."
    fix_text = 'No automatic fix (unsafe to automate: which part of the global array each process holds is the caller\'s decision). Assemble the global array from per-process data with `multihost_utils.host_local_array_to_global_array(x, mesh, spec)`, `jax.make_array_from_process_local_data(sharding, local_data)` or `jax.make_array_from_callback(shape, sharding, callback)`.'
    references = ('RUNTIME-FACTS.md: committed array on `jax.local_devices()` to a global sharding',)

    # The event type narrower than Rule.check's: the engine hands a rule only the events
    # its `events` names (mypy takes that for an unsafe override).
    def check(self, event: Transfer) -> Iterable[Diagnostic]:  # type: ignore[override]
        if event.kind not in PUT_KINDS:
            return
        ctx = event.ctx
        for pair in pairs(event):
            if pair.dst is None or ctx.locality(pair.dst) != "global":
                continue
            own = single_device(pair.array)
            if pair.src is None and own is not None and ctx.locality(own) == "local":
                x = array_label(ctx, event, pair)
                yield report(self.code, event, pair, (
                    f"{event.spelled} moves '{x}', committed to one device of this process ({own.desc}, "
                    f"{ctx.at(pair.array.node)}), to mesh {describe_mesh(ctx, pair.dst)}, which spans all "
                    "processes: multi-controller JAX raises \"device_put's second argument must be a Device or "
                    "a Sharding which represents addressable devices\" (for a replicated target: \"does not "
                    "support cross-host device transfers\"); assemble the global array with "
                    "jax.make_array_from_process_local_data(sharding, local_data) or "
                    "jax.make_array_from_callback(shape, sharding, callback)"))
                return
            if pair.src is None or ctx.locality(pair.src) != "local":
                continue
            x = array_label(ctx, event, pair)
            msg = (
                f"{event.spelled} moves '{x}', a process-local array, {sides(ctx, pair)}, which spans all "
                "processes: multi-controller JAX raises \"device_put's second argument must be a Device "
                "or a Sharding which represents addressable devices\"; assemble the global array with "
                f"multihost_utils.host_local_array_to_global_array({x}, mesh, spec) or "
                "jax.make_array_from_process_local_data(sharding, local_data)"
            )
            yield report(self.code, event, pair, msg)
            return

    examples = (
        Invalid(_HEAD + """
y = jax.device_put(x, NamedSharding(glob, P('x')))  # RSH302:5
"""),
        Invalid(_HEAD + """
everywhere = jax.make_mesh((jax.device_count(),), ('x',))
y = jax.device_put(x, NamedSharding(everywhere, P()))  # RSH302:5
"""),
        Invalid(_HEAD + """
one = jax.device_put(np.arange(8.0), jax.local_devices()[0])
y = jax.device_put(one, NamedSharding(glob, P('x')))  # RSH302:5
""", note="an array committed to one local device"),
        Invalid(_HEAD + """
g = jax.device_put(np.arange(8.0), NamedSharding(glob, P('x')))
y = jax.device_put(g.addressable_shards[0].data, NamedSharding(glob, P()))  # RSH302:5
""", note="a shard's data, onto a replicated global sharding"),
        Valid(_HEAD + """
from jax.experimental import multihost_utils
y = multihost_utils.host_local_array_to_global_array(np.arange(8.0), glob, P('x'))
print(y.shape)
"""),
        Valid(_HEAD + """
y = jax.make_array_from_process_local_data(NamedSharding(glob, P('x')), np.arange(float(jax.local_device_count())))
print(y.shape)
"""),
        Valid(_HEAD + """
y = jax.device_put(np.arange(8.0), NamedSharding(glob, P('x')))
print(y.shape)
"""),
        Valid(_HEAD + """
y = jax.device_put(x, NamedSharding(local, P()))
print(y.sharding)
"""),
        Valid(_HEAD + """
def put(a, s):
    return jax.device_put(a, s)

print(put(np.arange(8.0), NamedSharding(glob, P('x'))).shape)
"""),
        Valid(_HEAD + """
local_again = Mesh(local.devices, ('y',))
print(jax.device_put(x, NamedSharding(local_again, P('y'))).sharding)
"""),
        Valid(_HEAD + """
import jax.numpy as jnp
print(jax.device_put(jnp.arange(8.0), NamedSharding(glob, P('x'))).shape)
"""),
        Valid(_HEAD + """
print(jax.device_put(x, jax.local_devices()[0]).shape)
"""),
        Valid(_HEAD + """
print((x * 2).sharding)
"""),
        Valid(_HEAD + """
one = jax.device_put(np.arange(8.0), jax.local_devices()[0])
print(jax.device_put(one, NamedSharding(local, P('x'))).sharding)
""", note="one local device onto this process's mesh"),
        Valid(_HEAD + """
one = jax.device_put(np.arange(8.0), jax.local_devices()[0])
y = jax.make_array_from_callback((8 * jax.process_count(),), NamedSharding(glob, P('x')),
                                 lambda idx: np.arange(8.0 * jax.process_count())[idx])
print(y.shape, one.shape)
""", note="the fix: assemble the global array from a callback"),
        Valid(_HEAD + """
host = np.arange(8.0) * 3
print(jax.device_put(host, NamedSharding(local, P('x'))).shape)
"""),
        Valid("""
import jax
import numpy as np
from jax.sharding import Mesh, PartitionSpec as P
from jax.experimental import multihost_utils

glob = Mesh(np.array(jax.devices()), ('x',))
per_host = np.arange(8.0)
y = multihost_utils.host_local_array_to_global_array(per_host, glob, P('x'))
print(y.shape)
""", note="the page's Use instead", instead=True),
    )

    grounding = Grounding(
        multi=Outcome("error", r"represents addressable devices|does not support cross-host device transfers",
                      where="all"),
        single=Outcome("ok"),
    )
