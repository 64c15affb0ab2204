"""RSH304: a global array assembled on a jax.local_devices() mesh."""

from __future__ import annotations

from typing import Iterable

from ..analysis.render import describe_mesh
from ..core.diagnostic import Diagnostic
from ..analysis.events import Transfer
from ..analysis.values import ShardingVal
from .base import Grounding, Invalid, Outcome, Rule, Valid

_HEAD = """\
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
from jax.experimental import multihost_utils

local = Mesh(np.array(jax.local_devices()), ('x',))
glob = Mesh(np.array(jax.devices()), ('x',))
per_host = np.arange(4.0) + 4 * jax.process_index()
"""


class LocalMeshGlobalArray(Rule):
    code = "RSH304"
    name = "local-mesh-global-array"
    summary = "make_array_from_process_local_data with a global shape on a jax.local_devices() mesh"
    priority = 30
    events = (Transfer,)
    runtimes = ("multi-controller",)
    what = 'Flags `jax.make_array_from_process_local_data(s, data, global_shape)` when the sharding `s` is built on a mesh of `jax.local_devices()`. (`multihost_utils.host_local_array_to_global_array(x, mesh, spec)` on such a mesh does not raise: it returns a process-local array, so it is not flagged here.)'
    why = "These build one global array from every process's data; on a mesh that holds only this process's devices the shapes cannot agree, and multi-controller JAX raises `ValueError: Invalid host data, each dimension should match either global or process shape`."
    fix_text = "No automatic fix. Build the mesh from `jax.devices()` (all processes' devices)."
    references = ('RUNTIME-FACTS.md: `make_array_from_process_local_data` on a local mesh',)

    # The event type narrower than Rule.check's: the engine hands a rule only the events
    # its `events` names (mypy takes that for an unsafe override).
    def check(self, event: Transfer) -> Iterable[Diagnostic]:  # type: ignore[override]
        # host_local_array_to_global_array on a local mesh does not raise: it returns a
        # process-local array (observed with jax 0.10.2), so only this form is claimed.
        if event.kind != "local_data" or not event.has_global_shape:
            return
        target = event.target
        mesh = target.mesh if isinstance(target, ShardingVal) else None
        ctx = event.ctx
        if mesh is None or ctx.locality(mesh) != "local":
            return
        line, col, end_line, end_col = ctx.span(event.node)
        msg = (
            f"{event.spelled} assembles a global array on mesh {describe_mesh(ctx, mesh)}, which holds "
            "only this process's devices: multi-controller JAX raises \"ValueError: Invalid host data, "
            "each dimension should match either global or process shape\"; build the mesh from "
            "jax.devices() (all processes' devices)"
        )
        yield Diagnostic(self.code, line, col, msg, end_line, end_col)

    examples = (
        Invalid(_HEAD + """
y = jax.make_array_from_process_local_data(NamedSharding(local, P('x')), per_host, (8,))  # RSH304:5
"""),
        Invalid(_HEAD + """
s = NamedSharding(local, P('x'))
y = jax.make_array_from_process_local_data(s, per_host, global_shape=(8,))  # RSH304:5
"""),
        Valid(_HEAD + """
y = jax.make_array_from_process_local_data(NamedSharding(glob, P('x')), per_host, (8,))
print(y.shape)
"""),
        Valid(_HEAD + """
y = multihost_utils.host_local_array_to_global_array(per_host, glob, P('x'))
print(y.shape)
"""),
        Valid(_HEAD + """
y = jax.make_array_from_process_local_data(NamedSharding(glob, P('x')), per_host)
print(y.shape)
"""),
        Valid(_HEAD + """
mine = jax.make_array_from_process_local_data(NamedSharding(local, P('x')), per_host)
print(mine.shape)
"""),
        Valid(_HEAD + """
def assemble(data, mesh):
    return multihost_utils.host_local_array_to_global_array(data, mesh, P('x'))

print(assemble(per_host, glob).shape)
"""),
        Valid(_HEAD + """
made = jax.make_mesh((jax.device_count(),), ('x',))
print(multihost_utils.host_local_array_to_global_array(per_host, made, P('x')).shape)
"""),
        Valid(_HEAD + """
mine = jax.device_put(per_host, NamedSharding(local, P('x')))
print(mine.shape)
"""),
        Valid(_HEAD + """
print(jax.make_array_from_process_local_data(NamedSharding(Mesh(glob.devices, ('y',)), P('y')), per_host, (8,)).shape)
"""),
        Valid(_HEAD + """
print(multihost_utils.host_local_array_to_global_array(per_host, Mesh(np.array(jax.devices()), ('x',)), P('x')).shape)
"""),
        Valid(_HEAD + """
print(local.shape, glob.shape, per_host.shape)
"""),
        Valid("""
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

glob = Mesh(np.array(jax.devices()), ('x',))
n = 8 // jax.process_count()
per_host = np.arange(float(n)) + n * jax.process_index()

y = jax.make_array_from_process_local_data(NamedSharding(glob, P('x')), per_host, (8,))
print(y.shape)
""", note="the page's Use instead", instead=True),
    )

    grounding = Grounding(
        multi=Outcome("error", r"Invalid host data|should match either global or process shape"),
        single=None,
    )
