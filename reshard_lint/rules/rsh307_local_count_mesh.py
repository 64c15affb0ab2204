"""RSH307: a mesh shaped by this process's device count over every process's devices."""

from __future__ import annotations

from typing import Iterable

from ..analysis import devices as dv
from ..analysis.context import FileContext
from ..analysis.events import BuilderShape
from ..analysis.guards import ONE_PROCESS_TEST, pinned
from ..core.diagnostic import Diagnostic
from .base import Grounding, Invalid, Outcome, Rule, Valid
from .rsh301_global_to_device_put import multicontroller

_HEAD = """\
import jax
import numpy as np
from jax.experimental import mesh_utils
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

print('process', jax.process_index())
"""


def local_count_over_all(ctx: FileContext, event: BuilderShape) -> bool:
    """On every model topology (all of them multi-process), the shape holds this process's
    device count and the devices laid out are every process's: a literal shape that
    matches one topology's count, or any shape the analysis cannot evaluate, is not one."""
    seen = False
    for model in ctx.devices.models(event.sizes):
        try:
            size = event.size(model)
        except (dv.ModelError, dv.Undecided, ValueError, TypeError, IndexError, ZeroDivisionError):
            return False
        arr = ctx.devices.run(event.devices, model)
        if arr is None or not arr.flat:
            return False
        processes = {model.process_of(i) for i in arr.flat}
        if size != model.per_process or len(arr.flat) != model.n or len(processes) != model.processes \
                or model.processes < 2:
            return False
        seen = True
    return seen


class LocalCountMesh(Rule):
    code = "RSH307"
    name = "local-count-mesh"
    summary = "a mesh shaped by this process's device count over every process's devices"
    priority = 30
    events = (BuilderShape,)
    runtimes = ("multi-controller",)
    what = "Flags `mesh_utils.create_device_mesh(shape)` and `jax.make_mesh(shape, names)` whose shape holds this process's device count (`(jax.local_device_count(),)`, `(len(jax.local_devices()),)`, on every topology the analysis tries) while the devices they lay out are every process's (none given: `jax.devices()`; or `devices=jax.devices()`). A shape of the global count (`jax.device_count()`, `(jax.process_count(), jax.local_device_count())`), `devices=jax.local_devices()`, a literal shape, a shape the analysis cannot evaluate, and a call inside `if jax.process_count() == 1:` stay silent. Fires only in files that use what multi-process code uses (`jax.distributed`, `jax.process_index()`, `multihost_utils.process_allgather(...)` ...; an import alone is no such use), unless the project sets `runtime = \"multi-controller\"`: in one process the local count is the global count."
    why = "Every process has fewer devices than the job. `create_device_mesh` needs exactly as many devices as the shape holds and raises `ValueError: Number of devices 8 must equal the product of mesh_shape (4,)` on every process (2 processes of 4 CPU devices). `jax.make_mesh` takes the first devices of the list: a mesh over process 0's devices only, on every process; the other processes hold none of its devices, so an array placed on it cannot be read there (`RuntimeError: Fetching value for jax.Array that spans non-addressable (non process local) devices is not possible`) and their share of the work runs on process 0's devices."
    fix_text = "No automatic fix: which mesh was meant is the author's choice. For one mesh over the job, use the global count (`jax.make_mesh((jax.device_count(),), ('x',))`); for a mesh of this process's devices, pass them: `jax.make_mesh((jax.local_device_count(),), ('x',), devices=jax.local_devices())`."
    references = ("RUNTIME-FACTS.md: 'Process-local data and other processes' devices'",
                  "jax/_src/mesh_utils.py create_device_mesh and jax/_src/sharding_impls.py make_mesh (jax 0.10.2)")

    # The event type narrower than Rule.check's: the engine hands a rule only the events
    # its `events` names (mypy takes that for an unsafe override).
    def check(self, event: BuilderShape) -> Iterable[Diagnostic]:  # type: ignore[override]
        ctx = event.ctx
        if not local_count_over_all(ctx, event):
            return
        if pinned(ctx.module, event.node, ONE_PROCESS_TEST) or not multicontroller(event):
            return
        if event.exact:
            happens = (
                "create_device_mesh needs exactly that many devices, so every process raises "
                "\"ValueError: Number of devices N must equal the product of mesh_shape\""
            )
        else:
            happens = (
                "jax.make_mesh takes the first devices of the list, so on every process the mesh holds "
                "process 0's devices only: the other processes hold none of it, and an array placed on it "
                "cannot be read there (\"Fetching value for jax.Array that spans non-addressable ... "
                "devices\")"
            )
        msg = (
            f"{event.spelled}(...) is shaped by this process's device count but lays out every process's "
            f"devices (jax.devices()): {happens}; shape it by the global count (jax.device_count()), or pass "
            "devices=jax.local_devices() when a mesh of this process's devices is meant"
        )
        line, col, end_line, end_col = ctx.span(event.node)
        yield Diagnostic(self.code, line, col, msg, end_line, end_col)

    examples = (
        Invalid(_HEAD + """
grid = mesh_utils.create_device_mesh((jax.local_device_count(),))  # RSH307:8
print(Mesh(grid, ('x',)).shape)
"""),
        Invalid(_HEAD + """
grid = mesh_utils.create_device_mesh((len(jax.local_devices()),), devices=jax.devices())  # RSH307:8
print(grid.shape)
""", note="the global list given explicitly"),
        Invalid(_HEAD + """
mesh = jax.make_mesh((jax.local_device_count(),), ('x',))  # RSH307:8
x = jax.device_put(np.arange(8.0), NamedSharding(mesh, P('x')))
print(np.asarray(jax.jit(lambda a: a * 2)(x)))
""", note="a mesh over process 0's devices: process 1 cannot read the result"),
        Invalid(_HEAD + """
n = len(jax.local_devices())
mesh = jax.make_mesh((n,), ('x',))  # RSH307:8
print(jax.device_get(jax.device_put(np.arange(8.0), NamedSharding(mesh, P()))))
"""),
        Valid("""
import jax

print('process', jax.process_index())
mesh = jax.make_mesh((jax.device_count(),), ('x',))
print(mesh.shape)
""", note="the fix: the global count", instead=True),
        Valid(_HEAD + """
mesh = jax.make_mesh((jax.local_device_count(),), ('x',), devices=jax.local_devices())
x = jax.device_put(np.arange(8.0), NamedSharding(mesh, P('x')))
print(np.asarray(x * 2))
""", note="a mesh of this process's devices, as meant"),
        Valid(_HEAD + """
grid = mesh_utils.create_device_mesh((jax.local_device_count(),), devices=jax.local_devices())
print(grid.shape)
"""),
        Valid(_HEAD + """
grid = mesh_utils.create_device_mesh((jax.process_count(), jax.local_device_count()))
print(Mesh(grid, ('hosts', 'local')).shape)
""", note="processes times local devices: the global count"),
        Valid(_HEAD + """
if jax.process_count() == 1:
    print(jax.make_mesh((jax.local_device_count(),), ('x',)).shape)
""", note="only a one-process run builds it"),
        Valid(_HEAD + """
mesh = jax.make_mesh((2, jax.device_count() // 2), ('a', 'b'))
print(mesh.shape)
"""),
        Valid(_HEAD + """
grid = mesh_utils.create_device_mesh((jax.device_count(),))
print(Mesh(grid, ('x',)).shape)
"""),
        Valid(_HEAD + """
mesh = jax.make_mesh((jax.local_device_count(), jax.process_count()), ('local', 'hosts'))
print(mesh.shape)
"""),
        Valid(_HEAD + """
local = Mesh(np.array(jax.local_devices()).reshape(jax.local_device_count()), ('x',))
print(np.asarray(jax.device_put(np.arange(8.0), NamedSharding(local, P('x')))).sum())
""", note="a Mesh of this process's devices"),
        Valid(_HEAD + """
per_host = jax.local_device_count()
mesh = jax.make_mesh((jax.device_count(),), ('x',))
print(per_host, mesh.shape)
""", note="the local count read, not used as the shape"),
    )

    grounding = Grounding(
        multi=Outcome("error", r"Number of devices \d+ must equal the product of mesh_shape"
                               r"|Fetching value for `?jax\.Array`? that spans non-addressable"),
        single=Outcome("ok"),
    )
