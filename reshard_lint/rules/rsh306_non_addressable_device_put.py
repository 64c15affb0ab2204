"""RSH306: a device of the global list, which other processes do not own, used as this process's."""

from __future__ import annotations

import ast
from typing import Iterable

from ..analysis import devices as dv
from ..analysis.context import FileContext
from ..analysis.events import PUT_KINDS, Fetch, Placement, Transfer
from ..analysis.guards import pinned
from ..analysis.models.commitments import one_device, single_device
from ..analysis.models.host import is_host
from ..analysis.values import ArrayVal, DevVal
from .helpers.crossing import pairs
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


# What the other processes see, by what is put there (2 processes x 4 CPU devices, jax
# 0.10.2: tests/multicontroller/test_global_device.py).
_COMMITTED = ("every process but {owner} raises \"Cross-host transfers are not supported by this "
              "backend\" (TPU: \"Cannot copy array to non-addressable device\")")
_HOST = ("on every process but {owner} the result is an array that process cannot read "
         "(\"Fetching value for jax.Array that spans non-addressable (non process local) devices is not "
         "possible\")")
_EITHER = ("on every process but {owner} a committed array raises \"Cross-host transfers are not supported "
           "by this backend\" and host data becomes an array that process cannot read")
_FIX = ("take the device from this process's list (jax.local_devices(backend=...)[k]) or guard the code with "
        "if jax.process_index() == {index}")
_PLACED = {
    "context": ("makes what the block computes from no committed array (jnp.ones, jnp.stack ...) on {dev}, "
                "a device of the global list that other processes do not own: on every process but its "
                "owner those arrays cannot be read (\"Fetching value for jax.Array that spans "
                "non-addressable (non process local) devices is not possible\")"),
    "jit_out": ("places the result on {dev}, a device of the global list that other processes do not own: on "
                "every process but {owner} the call returns an array that process cannot read (\"Fetching "
                "value for jax.Array that spans non-addressable (non process local) devices is not possible\"), "
                "so results and timings taken there are not this process's"),
    "keyword": ("makes the array on {dev}, a device of the global list that other processes do not own: on "
                "every process but {owner} it cannot be read (\"Fetching value for jax.Array that spans "
                "non-addressable (non process local) devices is not possible\")"),
}


def owner_of(ctx: FileContext, device: DevVal) -> int | None:
    """The process that owns the device on every topology (``jax.devices()[0]``: process 0),
    or None where that depends on the topology."""
    owners = set()
    for model in dv.models_for(device.sizes):
        arr = ctx.devices.run(device.fn, model)
        if arr is None or len(arr.flat) != 1:
            return None
        owners.add(model.process_of(arr.flat[0]))
    return owners.pop() if len(owners) == 1 else None


def _fill(ctx: FileContext, device: DevVal, text: str) -> str:
    owner = owner_of(ctx, device)
    return text.format(owner="its owner" if owner is None else f"process {owner} (its owner)",
                       index="owner" if owner is None else owner, dev=device.desc)


class NonAddressableDevicePut(Rule):
    code = "RSH306"
    name = "non-addressable-device-put"
    summary = "a device from jax.devices() that other processes do not own, used as this process's device"
    priority = 30
    events = (Transfer, Placement, Fetch)
    runtimes = ("multi-controller",)
    what = "Flags a device taken from the global device list (`jax.devices(...)[k]`, `cpus = jax.devices('cpu'); cpus[0]`, `jax.devices()[cfg.device_id]` where the analysis knows the index), one that some process does not own, used as this process's device, whatever the array: the target of `jax.device_put(x, d)` (also `device=d`, a pytree, or `SingleDeviceSharding(d)`) and `x.to_device(d)`, `with jax.default_device(d):`, `jax.jit(f, out_shardings=SingleDeviceSharding(d))` where it is called, and a `device=d` keyword (`jnp.zeros(n, device=d)`). Not inside an `if` (or after an early exit) that reads `jax.process_index()` or `jax.process_count()`, which may pin the code to the owning process; not for `jax.local_devices()`, nor for an index built from `jax.process_index()` that gives this process's own device. A global array put on one device is RSH301. A read of an array put there (`jax.device_get`, `np.asarray`, `np.array`, `.tolist()`) is flagged where the put itself was not (the put pinned, the read not). Fires only in files that use what multi-process code uses (`jax.distributed`, `jax.process_index()`, `multihost_utils.process_allgather(...)` ...; an import alone is no such use), unless the project sets `runtime = \"multi-controller\"`."
    why = "Every process runs the line, and `jax.devices()[k]` is one process's device. Under 2 processes x 4 CPU devices (jax 0.10.2), on process 1 with `d = jax.devices()[0]`: `jax.device_put(a, d)` of an array committed to its own device raises `JaxRuntimeError: UNIMPLEMENTED: Cross-host transfers are not supported by this backend` (TPU: `Cannot copy array to non-addressable device`, big_vision#101); host data (`np.arange(8.0)`, `{'w': np.ones(3)}` with `device=`) or an uncommitted `jnp` array put on d raises nothing, but the result is not fully addressable and `np.asarray`/`jax.device_get` of it raise `RuntimeError: Fetching value for jax.Array that spans non-addressable (non process local) devices is not possible`; `jax.jit(f, out_shardings=SingleDeviceSharding(d))(x)` raises nothing there and returns an array on device 0 that process cannot read; under `with jax.default_device(d):` `jnp.stack([jnp.ones(3), jnp.zeros(3)])` is on device 0 and cannot be read there (an operand committed to a local device keeps its own device); `jnp.zeros(3, device=d)` the same. A global array put on d raises `When the second argument to device_put is a Device, the first argument must be a fully addressable array` on both processes (RSH301). Process 0, which owns d, runs all of it (tests/multicontroller/test_global_device.py)."
    fix_text = "No automatic fix. Take the device from this process's list: `jax.local_devices(backend=...)[k]` (the same device on the owner, a local one elsewhere), or guard the code with `if jax.process_index() == owner:`."
    references = ('google-research/big_vision#101', "RUNTIME-FACTS.md: 'Process-local data and other processes' devices'")

    def start(self, ctx: FileContext) -> None:
        self.reported: set[int] = set()  # ids of the calls flagged here

    # The event type narrower than Rule.check's: the engine hands a rule only the events
    # its `events` names (mypy takes that for an unsafe override).
    def check(self, event: Transfer | Placement | Fetch) -> Iterable[Diagnostic]:  # type: ignore[override]
        if isinstance(event, Fetch):
            yield from self._read(event)
        elif isinstance(event, Placement):
            yield from self._placed(event)
        else:
            yield from self._put(event)

    def _foreign(self, event: Transfer | Placement, device: DevVal) -> bool:
        """A device of the global list some process does not own, outside a guard."""
        ctx = event.ctx
        return device.fresh and foreign_somewhere(ctx, device) and not pinned(ctx.module, event.node) \
            and multicontroller(event)

    def _put(self, event: Transfer) -> Iterable[Diagnostic]:
        if event.kind not in PUT_KINDS or event.untargeted:
            return
        ctx = event.ctx
        device = one_device(event.target)
        if device is None:
            return
        committed = False
        for pair in pairs(event):
            own = single_device(pair.array)
            if own is not None and ctx.locality(own) != "local":
                return  # already on that device or another process's: its put is the finding
            if pair.src is not None and ctx.locality(pair.src) == "global":
                return  # a global array on one device raises everywhere: RSH301
            committed = committed or own is not None or pair.src is not None
        if not self._foreign(event, device):
            return
        what = _HOST if is_host(event.value) else _COMMITTED if committed and isinstance(event.value, ArrayVal) \
            else _EITHER
        moved = event.node.func.value if event.kind == "to_device" and isinstance(event.node, ast.Call) \
            and isinstance(event.node.func, ast.Attribute) else event.value_node  # x.to_device(d): x
        x = ctx.code(moved, 30) if moved is not None else "the value"
        msg = (f"{event.spelled} puts '{x}' on {device.desc}, a device of the global list that other processes "
               f"do not own: {_fill(ctx, device, what)}; {_fill(ctx, device, _FIX)}")
        self.reported.add(id(event.node))
        line, col, end_line, end_col = ctx.span(event.node)
        yield Diagnostic(self.code, line, col, msg, end_line, end_col)

    def _placed(self, event: Placement) -> Iterable[Diagnostic]:
        if not self._foreign(event, event.device):
            return
        ctx = event.ctx
        what = f"the jitted call {ctx.code(event.node, 40)}" if event.kind == "jit_out" else f"{event.spelled}(...)"
        msg = f"{what} {_fill(ctx, event.device, _PLACED[event.kind])}; {_fill(ctx, event.device, _FIX)}"
        self.reported.add(id(event.node))
        line, col, end_line, end_col = ctx.span(event.node)
        yield Diagnostic(self.code, line, col, msg, end_line, end_col)

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
b = jax.device_put(np.arange(8.0), jax.devices()[0])  # RSH306:5
print(np.asarray(b))
""", note="host data put there raises nothing; reading it does, on the other processes"),
        Invalid(_HEAD + """
try:
    first = jax.devices()[0]
except IndexError:
    raise SystemExit('no devices')
b = jax.device_put(np.arange(8.0), first)  # RSH306:5
print(np.asarray(b + 1))
"""),
        Invalid(_HEAD + """
cpus = jax.devices('cpu')
params = jax.device_put({'w': np.ones(3)}, device=cpus[0])  # RSH306:10
print(jax.device_get(params))
""", note="offloading a parameter tree to host memory"),
        Invalid(_HEAD + """
import jax.numpy as jnp
with jax.default_device(jax.devices('cpu')[0]):  # RSH306:6
    experts = jnp.stack([jnp.ones(3), jnp.zeros(3)])
print(np.asarray(experts))
""", note="computations with no committed operand run on that device"),
        Invalid(_HEAD + """
from jax.sharding import SingleDeviceSharding
dev = jax.devices()[0]
kernel = jax.jit(lambda v: v * 2, out_shardings=SingleDeviceSharding(dev))
out = kernel(np.ones(1024, np.float32))  # RSH306:7
print(np.asarray(out)[:3])
""", note="on other processes the call returns an array they cannot read"),
        Invalid(_HEAD + """
import jax.numpy as jnp
z = jnp.zeros(3, device=jax.devices()[0])  # RSH306:5
print(np.asarray(z))
"""),
        Invalid(_HEAD + """
b = jax.device_put(np.arange(8.0), jax.devices()[0])  # RSH306:5
print(b.shape, (b + 1).shape)
if jax.process_index() == 0:
    print(jax.device_get(b))
print(jax.device_get(b + 1))
""", note="read on the owning process, and also after the guard"),
        Valid(_HEAD + """
print(jax.device_put(a, jax.local_devices(backend='cpu')[0]))
""", note="the fix: this process's device"),
        Valid(_HEAD + """
if jax.process_index() == 0:
    print(jax.device_put(a, jax.devices()[0]))
""", note="pinned to the owning process"),
        Valid(_HEAD + """
import jax.numpy as jnp
from jax.sharding import SingleDeviceSharding
cpu = jax.local_devices(backend='cpu')[0]
with jax.default_device(cpu):
    experts = jnp.stack([jnp.ones(3), jnp.zeros(3)])
kernel = jax.jit(lambda v: v * 2, out_shardings=SingleDeviceSharding(jax.local_devices()[0]))
print(np.asarray(experts), np.asarray(kernel(np.ones(4))), jnp.zeros(2, device=cpu))
""", note="this process's devices"),
        Valid(_HEAD + """
import jax.numpy as jnp
if jax.process_index() == 0:
    with jax.default_device(jax.devices('cpu')[0]):
        experts = jnp.stack([jnp.ones(3), jnp.zeros(3)])
    print(np.asarray(experts), jax.device_get(jax.device_put(np.arange(8.0), jax.devices()[0])))
""", note="pinned to the owning process"),
        Valid(_HEAD + """
def report():
    if jax.process_index() != 0:
        return
    print(np.asarray(jax.device_put(np.arange(8.0), jax.devices()[0])))


report()
""", note="the other processes leave first"),
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
