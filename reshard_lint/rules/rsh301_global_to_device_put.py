"""RSH301: device_put of a global array to a single Device."""

from __future__ import annotations

from typing import Iterable

from ..analysis.render import describe_mesh
from .helpers.crossing import PUT_KINDS, array_label, is_device, pairs, report
from ..core.diagnostic import Diagnostic
from ..analysis.events import Event, Transfer
from .base import Grounding, Invalid, Outcome, Rule, Valid

_HEAD = """\
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

print('process', jax.process_index())
mesh = Mesh(np.array(jax.devices()), ('x',))
x = jax.device_put(np.arange(8.0), NamedSharding(mesh, P('x')))
"""


def multicontroller(event: Event) -> bool:
    """Single-host code moves arrays to one device all the time: with ``runtime = "auto"``
    flag only files that use what multi-process code uses (``jax.process_index()``,
    ``jax.distributed``, ``multihost_utils.process_allgather(...)``: an import is no use);
    ``"multi-controller"`` says every file is. A use counts for the code that runs in one
    program with it (stages/program_units.py). Asked only of a candidate finding."""
    return event.ctx.runtime_explicit or event.ctx.multicontroller_signs_at(event.node)


class GlobalToDevicePut(Rule):
    code = "RSH301"
    name = "global-to-device-put"
    summary = "device_put of an array spanning several processes to a single Device, or to no target"
    priority = 30
    events = (Transfer,)
    what = 'Flags `jax.device_put(x, device)` where `device` is a single `Device` (`jax.devices()[0]`, `jax.local_devices()[i]`), and `jax.device_put(x)` without a target (JAX takes the single-device path for it), where `x` is a global array spanning several processes. Fires only in files that use what multi-process code uses (`jax.distributed`, `jax.process_index()`, `multihost_utils.process_allgather(...)` ...; an import alone is no such use), unless the project sets `runtime = "multi-controller"`.'
    why = 'A process can only copy what it holds. Multi-controller JAX raises `ValueError: When the second argument to device_put is a Device, the first argument must be a fully addressable array`.'
    fix_text = "No automatic fix. Gather the whole array with `multihost_utils.process_allgather(x, tiled=True)`, or take this process's shard with `x.addressable_data(i)`."
    references = ('RUNTIME-FACTS.md: `device_put(global_array, jax.devices()[0])`',)
    runtimes = ("multi-controller",)

    # The event type narrower than Rule.check's: the engine hands a rule only the events
    # its `events` names (mypy takes that for an unsafe override).
    def check(self, event: Transfer) -> Iterable[Diagnostic]:  # type: ignore[override]
        if event.kind not in PUT_KINDS:
            return
        ctx = event.ctx
        for pair in pairs(event):
            if pair.src is None or ctx.locality(pair.src) != "global":
                continue
            if not multicontroller(event):
                return
            x = array_label(ctx, event, pair)
            if event.untargeted:
                # No target takes the single-device path (observed, jax 0.10.2).
                msg = (
                    f"{event.spelled} without a target, of '{x}', a global array on mesh "
                    f"{describe_mesh(ctx, pair.src)}: JAX takes that for a single device, and "
                    "multi-controller JAX raises \"When the second argument to device_put is a Device, "
                    "the first argument must be a fully addressable array\"; keep it where it is with "
                    f"jax.device_put({x}, {x}.sharding), or copy it with jnp.copy({x})"
                )
                yield report(self.code, event, pair, msg)
                return
            if not is_device(pair.target):
                continue
            msg = (
                f"{event.spelled} moves '{x}', a global array on mesh {describe_mesh(ctx, pair.src)}, to "
                f"a single device ({pair.target.desc}): multi-controller JAX raises \"When the second "
                "argument to device_put is a Device, the first argument must be a fully addressable "
                f"array\"; gather it with multihost_utils.process_allgather({x}, tiled=True), or take this "
                f"process's shard with {x}.addressable_data(0)"
            )
            yield report(self.code, event, pair, msg)
            return

    examples = (
        Invalid(_HEAD + """
y = jax.device_put(x, jax.devices()[0])  # RSH301:5
"""),
        Invalid(_HEAD + """
first = jax.local_devices()[0]
y = jax.device_put(x, first)  # RSH301:5
"""),
        Invalid(_HEAD + """
first, second = jax.local_devices()[:2]
y = jax.device_put(x, second)  # RSH301:5
"""),
        Invalid(_HEAD + """
y = jax.device_put(x)  # RSH301:5
"""),
        Valid(_HEAD + """
y = jax.device_put(np.arange(8.0), jax.local_devices()[0])
print(y)
"""),
        Valid(_HEAD + """
from jax.experimental import multihost_utils
y = multihost_utils.process_allgather(x, tiled=True)
print(y.shape)
"""),
        Valid(_HEAD + """
shard = x.addressable_data(0)
print(jax.device_put(shard, jax.local_devices()[0]))
"""),
        Valid(_HEAD + """
local = Mesh(np.array(jax.local_devices()), ('x',))
mine = jax.device_put(np.arange(8.0), NamedSharding(local, P('x')))
print(jax.device_put(mine, jax.local_devices()[0]))
"""),
        Valid(_HEAD + """
def to_device(a, d):
    return jax.device_put(a, d)

print(to_device(np.ones(2), jax.local_devices()[0]))
"""),
        Valid(_HEAD + """
import jax.numpy as jnp
print(jax.device_put(jnp.ones(3), jax.local_devices()[0]))
"""),
        Valid(_HEAD + """
y = jax.device_put(x, NamedSharding(mesh, P()))
print(y.sharding)
"""),
        Valid(_HEAD + """
for d in jax.local_devices():
    print(jax.device_put(np.float32(1.0), d))
"""),
        Valid(_HEAD + """
single = jax.device_put(np.ones(4), jax.local_devices()[0])
again = jax.device_put(single, jax.local_devices()[-1])
print(again)
"""),
        Valid(_HEAD + """
y = jax.device_put(x, x.sharding)
print(y.sharding)
"""),
        Valid(_HEAD + """
y = jax.device_put(np.arange(8.0))
print(y)
"""),
        Valid(_HEAD + """
first, second = jax.local_devices()[:2]
single = jax.device_put(np.ones(4), first)
print(jax.device_put(single, second))
"""),
        Valid(_HEAD + """
print([s.device for s in x.addressable_shards])
"""),
        Valid("""
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
from jax.experimental import multihost_utils

mesh = Mesh(np.array(jax.devices()), ('x',))
x = jax.device_put(np.arange(8.0), NamedSharding(mesh, P('x')))

y = multihost_utils.process_allgather(x, tiled=True)
print('process', jax.process_index(), y.shape)
""", note="the page's Use instead", instead=True),
    )

    grounding = Grounding(
        multi=Outcome("error", r"first argument must be a fully addressable array", where="all"),
        single=Outcome("ok"),
    )
