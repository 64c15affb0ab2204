"""RSH306: device_put of a process's own array onto a device another process owns."""

from __future__ import annotations

import ast
from typing import Iterable

from ..analysis import devices as dv
from ..analysis.context import FileContext
from ..analysis.events import Fetch, Transfer
from ..analysis.guards import pinned
from ..analysis.models.commitments import single_device
from ..analysis.values import ArrayVal, DevVal
from .helpers.crossing import PUT_KINDS, array_label, is_device, pairs, report
from ..core.diagnostic import Diagnostic
from .base import Grounding, Invalid, Outcome, Rule, Valid
from .rsh301_global_to_device_put import multicontroller

_HEAD = """\
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

print('process', jax.process_index())
a = jax.device_put(np.arange(8.0), jax.local_devices()[0])
"""


def foreign_somewhere(ctx: FileContext, device: DevVal) -> bool:
    """True when the device is known on every topology and some process does not own it."""
    foreign = False
    for model in dv.models_for(device.sizes):
        arr = ctx.devices.run(device.fn, model)
        if arr is None or len(arr.flat) != 1:
            return False
        if model.process_of(arr.flat[0]) != model.proc:
            foreign = True
    return foreign


class NonAddressableDevicePut(Rule):
    code = "RSH306"
    name = "non-addressable-device-put"
    summary = "device_put of a process's own array onto a device from jax.devices() that other processes do not own"
    priority = 30
    events = (Transfer, Fetch)
    runtimes = ("multi-controller",)
    what = "Flags `jax.device_put(x, jax.devices(...)[k])`, a device taken from the global device list, when `x` is committed to this process's devices (one local device, a shard's data, a mesh of `jax.local_devices()`), outside an `if` that reads `jax.process_index()` or `jax.process_count()` (which may pin the call to the owning process). Host data put there raises nothing (the other processes get an array they cannot read), so that is flagged where it is read: `jax.device_get`, `np.asarray`, `np.array`, `.tolist()`. Fires only in files that use what multi-process code uses (`jax.distributed`, `jax.process_index()`, `multihost_utils.process_allgather(...)` ...; an import alone is no such use), unless the project sets `runtime = \"multi-controller\"`. (A global array put on one device is RSH301.)"
    why = "Every process runs the call, and all but the device's owner would have to send their data to another host. Multi-controller JAX raises `Cross-host transfers are not supported by this backend` on CPU and `Cannot copy array to non-addressable device` on TPU (big_vision#101), on every process but the owner."
    fix_text = "No automatic fix. Take the device from this process's list: `jax.local_devices(backend=...)[k]` (the same device on the owner, a local one elsewhere), or pin the call to the owning process."
    references = ('google-research/big_vision#101', "RUNTIME-FACTS.md: 'Process-local data and other processes' devices'")

    def start(self, ctx: FileContext) -> None:
        self.reported: set[int] = set()  # ids of the device_put calls flagged here

    # The event type narrower than Rule.check's: the engine hands a rule only the events
    # its `events` names (mypy takes that for an unsafe override).
    def check(self, event: Transfer | Fetch) -> Iterable[Diagnostic]:  # type: ignore[override]
        if isinstance(event, Fetch):
            yield from self._read(event)
            return
        if event.kind not in PUT_KINDS:
            return
        ctx = event.ctx
        for pair in pairs(event):
            target = pair.target
            if not is_device(target) or not isinstance(target, DevVal) or not target.fresh:
                continue
            own = single_device(pair.array)
            if own is not None:
                if ctx.locality(own) != "local":
                    continue
            elif pair.src is None or ctx.locality(pair.src) != "local":
                continue
            if not foreign_somewhere(ctx, target) or pinned(ctx.module, event.node):
                continue
            if not multicontroller(event):
                return
            x = array_label(ctx, event, pair)
            msg = (
                f"{event.spelled} moves '{x}', committed to this process's devices, to {target.desc}, a device "
                "of the global list that other processes do not own: every process but its owner raises "
                "\"Cross-host transfers are not supported by this backend\" (TPU: \"Cannot copy array to "
                "non-addressable device\"); take the device from this process's list "
                "(jax.local_devices(backend=...)[k]) or pin the call to the owning process"
            )
            self.reported.add(id(event.node))
            yield report(self.code, event, pair, msg)
            return

    def _read(self, event: Fetch) -> Iterable[Diagnostic]:
        """A read of an array that device_put placed on a device other processes do not own."""
        ctx = event.ctx
        device = single_device(event.value)
        if device is None or not isinstance(event.value, ArrayVal) or not device.fresh:
            return
        # An array computed from the put one (``b + 1``) names the put, not the computation.
        put = event.value.sharding.node if event.value.derived and event.value.sharding.node is not None \
            else event.value.node
        if id(put) in self.reported or not foreign_somewhere(ctx, device):
            return
        if pinned(ctx.module, event.node) or pinned(ctx.module, put) or not multicontroller(event):
            return
        x = ctx.code(event.value_node, 30) if isinstance(event.value_node, (ast.Name, ast.Attribute)) \
            else "the array"
        msg = (
            f"{event.spelled} reads '{x}', put on {device.desc} ({ctx.at(put)}), a device of the global "
            "list that other processes do not own: there the array is not addressable, and JAX raises "
            "\"RuntimeError: Fetching value for jax.Array that spans non-addressable (non process local) "
            "devices is not possible\"; put it on this process's device (jax.local_devices(backend=...)[k]), "
            "or pin the put and the read to the owning process"
        )
        line, col, end_line, end_col = ctx.span(event.node)
        yield Diagnostic(self.code, line, col, msg, end_line, end_col)

    examples = (
        Invalid(_HEAD + """
print(jax.device_put(a, jax.devices('cpu')[0]))  # RSH306:7
"""),
        Invalid(_HEAD + """
first = jax.devices()[0]
b = jax.device_put(a, first)  # RSH306:5
print(b)
"""),
        Invalid(_HEAD + """
mesh = Mesh(np.array(jax.devices()), ('x',))
x = jax.device_put(np.arange(16.0), NamedSharding(mesh, P('x')))
print(jax.device_put(x.addressable_data(0), jax.devices()[0]))  # RSH306:7
""", note="a shard's data lives on this process's device"),
        Invalid(_HEAD + """
b = jax.device_put(np.arange(8.0), jax.devices()[0])
print(np.asarray(b))  # RSH306:7
""", note="host data put there raises nothing; reading it does, on the other processes"),
        Invalid(_HEAD + """
try:
    first = jax.devices()[0]
except IndexError:
    raise SystemExit('no devices')
b = jax.device_put(np.arange(8.0), first)
print(np.asarray(b + 1))  # RSH306:7
""", note="computed from the put array, and read: the message names the put's line"),
        Valid(_HEAD + """
print(jax.device_put(a, jax.local_devices(backend='cpu')[0]))
""", note="the fix: this process's device"),
        Valid(_HEAD + """
if jax.process_index() == 0:
    print(jax.device_put(a, jax.devices()[0]))
""", note="pinned to the owning process"),
        Valid(_HEAD + """
b = jax.device_put(np.arange(8.0), jax.devices()[0])
print(b.shape, (b + 1).shape)
""", note="host data: no transfer, and the result is not read"),
        Valid(_HEAD + """
b = jax.device_put(np.arange(8.0), jax.devices()[0])
if jax.process_index() == 0:
    print(jax.device_get(b))
""", note="read only on the owning process"),
        Valid(_HEAD + """
print(jax.device_put(a, jax.local_devices()[-1]))
"""),
        Valid(_HEAD + """
print(jax.devices()[0].platform, a.devices())
"""),
        Valid(_HEAD + """
for d in jax.local_devices():
    print(jax.device_put(a, d))
"""),
        Valid(_HEAD + """
mesh = Mesh(np.array(jax.devices()), ('x',))
print(jax.device_put(np.arange(16.0), NamedSharding(mesh, P('x'))).shape)
"""),
        Valid(_HEAD + """
def put(v, d):
    return jax.device_put(v, d)

print(put(np.ones(2), jax.local_devices()[0]))
"""),
        Valid(_HEAD + """
import jax.numpy as jnp
print(jax.device_put(jnp.ones(3), jax.local_devices()[0]))
"""),
        Valid(_HEAD + """
mine = jax.devices()[jax.process_index() * jax.local_device_count()]
print(jax.device_put(a, mine))
""", note="the first device of this process"),
        Valid("""
import jax
import numpy as np

print('process', jax.process_index())
a = jax.device_put(np.arange(8.0), jax.local_devices()[0])

print(jax.device_put(a, jax.local_devices()[1]))
""", note="the page's Use instead", instead=True),
    )

    grounding = Grounding(
        multi=Outcome("error", r"Cross-host transfers are not supported|Cannot copy array to non-addressable device"
                               r"|Fetching value for `?jax\.Array`? that spans non-addressable"),
        single=Outcome("ok"),
    )
