"""RSH305: fetching the value of an array split across processes."""

from __future__ import annotations

import ast
from typing import Iterable

from ..analysis.render import describe_mesh, spec_label
from ..analysis.events import Fetch
from ..analysis.guards import ONE_PROCESS_TEST, pinned
from ..analysis.partition import split_across_processes
from ..analysis.values import ArrayVal
from .helpers.crossing import related
from ..core.diagnostic import Diagnostic
from .base import Grounding, Invalid, Outcome, Rule, Valid
from .rsh301_global_to_device_put import multicontroller

_HEAD = """\
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

print('process', jax.process_index())
mesh = Mesh(np.array(jax.devices()), ('x',))
x = jax.device_put(np.arange(16.0), NamedSharding(mesh, P('x')))
"""


class GlobalArrayFetch(Rule):
    code = "RSH305"
    name = "global-array-fetch"
    summary = "jax.device_get, np.asarray or .tolist() of an array split across processes"
    priority = 30
    events = (Fetch,)
    runtimes = ("multi-controller",)
    what = "Flags `jax.device_get(x)`, `np.asarray(x)`, `np.array(x)` and `x.tolist()` where `x` is provably split across processes: sharded (a literal `PartitionSpec`) over a mesh axis whose pieces are not all held by every process. Replicated arrays (`P()`), arrays sharded only over axes inside each process, arrays of unknown sharding and fetches inside `if jax.process_count() == 1:` stay silent. Fires only in files that use what multi-process code uses (`jax.distributed`, `jax.process_index()`, `multihost_utils.process_allgather(...)` ...; an import alone is no such use), unless the project sets `runtime = \"multi-controller\"`: on one host every array is fetchable. (`float(x)`, `int(x)` and `x.item()` need a one-element array, which no axis splits, so they are not flagged.)"
    why = "A process can read only the shards it holds. Multi-controller JAX raises `RuntimeError: Fetching value for jax.Array that spans non-addressable (non process local) devices is not possible` on every process; one host never sees it, so the bug surfaces on the first multi-host run."
    fix_text = "No automatic fix: `multihost_utils.process_allgather(x, tiled=True)` gathers the whole value, but it is a collective that every process must call (inside a branch that only one process takes, it hangs); reading `x.addressable_shards` gives this process's pieces. Which one fits is the caller's decision."
    references = ('vllm-project/tpu-inference#3570', 'RUNTIME-FACTS.md: `jax.device_get(x)` with x sharded over all processes')

    # The event type narrower than Rule.check's: the engine hands a rule only the events
    # its `events` names (mypy takes that for an unsafe override).
    def check(self, event: Fetch) -> Iterable[Diagnostic]:  # type: ignore[override]
        array = event.value
        if not isinstance(array, ArrayVal) or array.mesh is None:
            return
        ctx = event.ctx
        if not split_across_processes(ctx, array):
            return
        if pinned(ctx.module, event.node, ONE_PROCESS_TEST) or not multicontroller(event):
            return
        if isinstance(event.value_node, (ast.Name, ast.Attribute)):
            x = ctx.code(event.value_node, 30)
        else:
            x = array.name or "the array"
        spec = spec_label(array.sharding.spec) if array.sharding.spec is not None else "?"
        msg = (
            f"{event.spelled} fetches '{x}', sharded {spec} on mesh {describe_mesh(ctx, array.mesh)}, whose "
            "pieces are split across processes: multi-controller JAX raises \"RuntimeError: Fetching value "
            "for jax.Array that spans non-addressable (non process local) devices is not possible\" on every "
            f"process; gather it with multihost_utils.process_allgather({x}, tiled=True) (a collective: every "
            f"process must call it), or read this process's pieces from {x}.addressable_shards"
        )
        line, col, end_line, end_col = ctx.span(event.node)
        yield Diagnostic(self.code, line, col, msg, end_line, end_col, related=related(ctx, array.mesh))

    examples = (
        Invalid(_HEAD + """
print(jax.device_get(x))  # RSH305:7
"""),
        Invalid(_HEAD + """
print(np.asarray(x).sum())  # RSH305:7
"""),
        Invalid(_HEAD + """
values = np.array(x)  # RSH305:10
print(values)
"""),
        Invalid(_HEAD + """
print(x.tolist())  # RSH305:7
"""),
        Invalid(_HEAD + """
grid = Mesh(np.array(jax.devices()).reshape(2, -1), ('data', 'model'))
batch = jax.device_put(np.arange(16.0), NamedSharding(grid, P('data')))
print(jax.device_get(batch))  # RSH305:7
""", note="the 'data' axis runs across processes"),
        Invalid(_HEAD + """
step = jax.jit(lambda a: a * 2, out_shardings=NamedSharding(mesh, P('x')))
print(jax.device_get(step(x)))  # RSH305:7
""", note="a jitted result with a known output sharding"),
        Valid(_HEAD + """
from jax.experimental import multihost_utils
print(multihost_utils.process_allgather(x, tiled=True).shape)
""", note="the fix"),
        Valid(_HEAD + """
replicated = jax.device_put(np.arange(16.0), NamedSharding(mesh, P()))
print(jax.device_get(replicated), np.asarray(replicated).sum())
""", note="a fully replicated array is whole on every process"),
        Valid(_HEAD + """
grid = Mesh(np.array(jax.devices()).reshape(2, -1), ('data', 'model'))
inner = jax.device_put(np.arange(16.0), NamedSharding(grid, P('model')))
print(jax.device_get(inner))
""", note="sharded only over an axis inside each process: every process holds every piece"),
        Valid(_HEAD + """
local = Mesh(np.array(jax.local_devices()), ('x',))
mine = jax.device_put(np.arange(16.0), NamedSharding(local, P('x')))
print(jax.device_get(mine))
""", note="an array on this process's devices"),
        Valid(_HEAD + """
print([np.asarray(s.data).sum() for s in x.addressable_shards])
""", note="this process's shards"),
        Valid(_HEAD + """
if jax.process_count() == 1:
    print(jax.device_get(x))
""", note="only a one-process run fetches"),
        Valid(_HEAD + """
print(x.shape, x.sharding, np.asarray(np.arange(4.0)))
""", note="no fetch of x"),
        Valid(_HEAD + """
def fetch(a):
    return jax.device_get(a)

print(fetch(np.arange(4.0)))
""", note="a helper called with host data"),
        Valid(_HEAD + """
import jax.numpy as jnp
print(jax.device_get(jnp.arange(4.0)), np.asarray(jnp.ones(3)))
""", note="uncommitted arrays live on this process"),
        Valid(_HEAD + """
with jax.set_mesh(mesh):
    y = jax.device_put(np.arange(16.0), P())
print(jax.device_get(y))
""", note="a bare P() under the context mesh: replicated"),
    )

    grounding = Grounding(
        multi=Outcome("error", r"Fetching value for `?jax\.Array`? that spans non-addressable", where="all"),
        single=Outcome("ok"),
    )
