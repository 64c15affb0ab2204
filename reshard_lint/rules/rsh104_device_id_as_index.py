"""RSH104: a device id used as a position into jax.devices() or jax.local_devices()."""

from __future__ import annotations

from typing import Iterable

from ..analysis.events import IdAsIndex
from ..core.diagnostic import Diagnostic, Edit, Fix
from .base import Grounding, Invalid, Outcome, Rule, Valid

_HEAD = """\
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
"""


class DeviceIdAsIndex(Rule):
    code = "RSH104"
    name = "device-id-as-index"
    summary = "a device id used as a position into jax.devices() or jax.local_devices()"
    priority = 10
    fix_safety = "safe"
    events = (IdAsIndex,)
    what = 'Flags `jax.devices()[i]` and `jax.local_devices()[i]` (or a list bound to them) where `i` is a device id: `d.id`, an element of a list of ids built from devices (`[d.id for d in devs]`), or the number of a `"tpu:2"`-style device name. Positions from `range(len(devs))` or `enumerate`, and lookups by id, stay silent.'
    why = "A device id is a position only on one process. Multi-process CPU numbers process p's devices from p * 2048 (ids 0-3 and 2048-2051 on two processes of four), so the lookup raises `IndexError`; multi-host TPU ids follow the chips' coordinates while `jax.devices()` lists host by host (`[0, 1, 4, 5, 2, 3, 6, 7]`), so it silently picks another device and the mesh comes out permuted. On one host ids and positions coincide, so tests pass."
    fix_text = "Safe: the lookup becomes one by id, `{d.id: d for d in jax.devices()}[i]`, which picks exactly the device the code named by its id, on every host count."
    references = ("keras#19968 (multi-host TPU jax.devices() order [0, 1, 4, 5, 2, 3, 6, 7])",
                  "RUNTIME-FACTS.md: `[jax.devices()[i] for i in [d.id for d in jax.devices()]]`")
    platforms_text = ("Every platform with several processes: on multi-process CPU and GPU the ids of "
                      "later processes are past the end of the list, and on multi-host TPU ids follow "
                      "physical coordinates, not enumeration. See [platforms](../platforms.md).")

    # The event type narrower than Rule.check's: the engine hands a rule only the events
    # its `events` names (mypy takes that for an unsafe override).
    def check(self, event: IdAsIndex) -> Iterable[Diagnostic]:  # type: ignore[override]
        ctx = event.ctx
        line, col, end_line, end_col = ctx.span(event.node)
        base = ctx.module.code_for_node(event.base_node)
        index = ctx.module.code_for_node(event.index_node)
        lookup = f"{{d.id: d for d in {base}}}[{index}]"
        msg = (
            f"'{ctx.code(event.node, 50)}' uses a device id (from {event.index.desc}, "
            f"{ctx.at(event.index.node)}) as a position in {event.devices.desc}: ids are positions "
            "on one process only (multi-process CPU: IndexError, ids 2048 and up; multi-host TPU: "
            f"another device, so the mesh comes out permuted); look the device up by id: {lookup}"
        )
        fix = Fix(f"Look the device up by id: {lookup}",
                  (Edit(line, col, end_line, end_col, lookup),), safe=True)
        yield Diagnostic(self.code, line, col, msg, end_line, end_col, fix=fix)

    examples = (
        Invalid(_HEAD + """
ids = [d.id for d in jax.devices()]
devs = [jax.devices()[i] for i in ids]  # RSH104:9
mesh = Mesh(np.array(devs), ('x',))
print(mesh.devices.shape)
""", fixed=_HEAD + """
ids = [d.id for d in jax.devices()]
devs = [{d.id: d for d in jax.devices()}[i] for i in ids]  # RSH104:9
mesh = Mesh(np.array(devs), ('x',))
print(mesh.devices.shape)
"""),
        Invalid(_HEAD + """
for d in jax.local_devices():
    print(jax.local_devices()[d.id])  # RSH104:11
"""),
        Invalid(_HEAD + """
name = "cpu:5"
k = int(name.split(":")[1])
dev = jax.devices()[k]  # RSH104:7
assert dev.id == k, f"asked for device {name}, got {dev}"
"""),
        Valid(_HEAD + """
devs = jax.devices()
ordered = [devs[i] for i in range(len(devs))]
print(ordered[0])
"""),
        Valid(_HEAD + """
for i, d in enumerate(jax.devices()):
    assert jax.devices()[i] is d
"""),
        Valid(_HEAD + """
by_id = {d.id: d for d in jax.devices()}
ids = [d.id for d in jax.devices()]
print([by_id[i] for i in ids])
"""),
        Valid(_HEAD + """
first = jax.local_devices()[0]
print(first.id, jax.local_devices()[jax.local_device_count() - 1])
"""),
        Valid(_HEAD + """
print([jax.devices()[i] for i in range(jax.device_count())])
"""),
        Valid(_HEAD + """
ids = sorted(d.id for d in jax.devices())
print(ids[0], ids[-1])
"""),
        Valid(_HEAD + """
by_id = {d.id: d for d in jax.devices()}
print([by_id[d.id] for d in jax.local_devices()])
"""),
        Valid(_HEAD + """
first_local = jax.devices()[jax.process_index() * jax.local_device_count()]
print(first_local in jax.local_devices())
"""),
        Valid(_HEAD + """
local = jax.local_devices()
print([local[i] for i, _ in enumerate(local)])
"""),
        Valid(_HEAD + """
port = int("localhost:1234".split(":")[1])
print(jax.devices()[port % jax.device_count()])
"""),
        Valid("""
import jax
import numpy as np
from jax.sharding import Mesh

ids = [d.id for d in jax.devices()]
by_id = {d.id: d for d in jax.devices()}
mesh = Mesh(np.array([by_id[i] for i in ids]), ('x',))
print(mesh.devices.shape)
""", note="the page's Use instead", instead=True),
    )

    grounding = Grounding(
        multi=Outcome("error", r"IndexError|AssertionError", where="any"),
        single=Outcome("ok"),
    )
