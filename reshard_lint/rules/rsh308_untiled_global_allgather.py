"""RSH308: process_allgather of a global array without tiled=True."""

from __future__ import annotations

import ast
from typing import Iterable

from ..analysis.events import Gather
from ..analysis.guards import ONE_PROCESS_TEST, pinned
from ..analysis.render import describe_mesh
from ..analysis.values import ArrayVal
from ..core.diagnostic import Diagnostic
from .base import Grounding, Invalid, Outcome, Rule, Valid
from .helpers.crossing import related
from .helpers.jax_version import project_jax
from .rsh301_global_to_device_put import multicontroller

# The first JAX release whose process_allgather refuses a global array without
# tiled=True (jax/experimental/multihost_utils.py: absent from the 0.7.2 wheel's
# _handle_array_process_allgather, present in 0.8.0's).
RAISES_FROM = (0, 8)

_HEAD = """\
import jax
import numpy as np
from jax.experimental import multihost_utils
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

print('process', jax.process_index())
mesh = Mesh(np.array(jax.devices()), ('x',))
x = jax.device_put(np.arange(8.0), NamedSharding(mesh, P('x')))
"""


class UntiledGlobalAllgather(Rule):
    code = "RSH308"
    name = "untiled-global-allgather"
    summary = "multihost_utils.process_allgather of an array on several processes' devices without tiled=True"
    priority = 30
    events = (Gather,)
    runtimes = ("multi-controller",)
    what = "Flags `multihost_utils.process_allgather(x)` (and `tiled=False`) where `x`, or a leaf of the pytree passed, is a global array: on a mesh whose devices belong to several processes, split or replicated. Arrays of unknown placement, arrays on this process's devices (a `jax.local_devices()` mesh), host data, `tiled=True`, a `tiled` the analysis cannot read, and calls inside `if jax.process_count() == 1:` stay silent, as does a project that installs or pins only JAX versions before 0.8 (an installed `jax-X.dist-info` in `.venv`, `venv` or `env` at the project root, else `jax` requirements in `pyproject.toml`, `requirements*.txt` or `setup.cfg`); the message names the version read, or says \"from JAX 0.8\" when none is. Fires only in files that use what multi-process code uses (`jax.distributed`, `jax.process_index()`, `multihost_utils` calls ...; an import alone is no such use), unless the project sets `runtime = \"multi-controller\"`."
    why = "From JAX 0.8, `process_allgather` gathers an array that is not fully addressable only into its own shape: without `tiled=True` every process raises `ValueError: Gathering global non-fully-addressable arrays only supports tiled=True` (observed with 2 processes of 4 CPU devices, jax 0.10.2, for split and for replicated arrays). One process holds every device, so one-host tests never see it; JAX 0.7 and earlier ignored `tiled` for such arrays."
    fix_text = "No automatic fix: `tiled=True` returns the array in its global shape, while `tiled=False` on process-local data stacks one copy per process; code written for the stacked shape must change with it. Pass `tiled=True`."
    references = ("jax/experimental/multihost_utils.py `_handle_array_process_allgather` (jax 0.8.0 and later)",
                  "jax tests/multiprocess: `process_allgather(arr, tiled=False)` asserted to raise")

    # The event type narrower than Rule.check's: the engine hands a rule only the events
    # its `events` names (mypy takes that for an unsafe override).
    def check(self, event: Gather) -> Iterable[Diagnostic]:  # type: ignore[override]
        array = event.value
        if event.tiled is not False or not isinstance(array, ArrayVal) or array.mesh is None:
            return
        ctx = event.ctx
        if ctx.locality(array.mesh) != "global":
            return
        if pinned(ctx.module, event.node, ONE_PROCESS_TEST) or not multicontroller(event):
            return
        versions = project_jax(ctx)
        if versions is not None and versions.none_from(RAISES_FROM):
            return  # before 0.8, tiled was ignored for such arrays: it works
        if versions is not None and versions.all_from(RAISES_FROM):
            when = f"with {versions.text}"
        else:
            when = "from JAX 0.8" + (f" (the project allows {versions.text})" if versions is not None else "")
        if isinstance(event.value_node, (ast.Name, ast.Attribute)):
            x = ctx.code(event.value_node, 30)
        else:
            x = array.name or "the array"
        msg = (
            f"{event.spelled} gathers '{x}', a global array on mesh {describe_mesh(ctx, array.mesh)} (devices "
            f"of several processes), without tiled=True: {when}, every process raises \"ValueError: Gathering "
            "global non-fully-addressable arrays only supports tiled=True\"; pass tiled=True, which returns "
            "the array in its global shape"
        )
        line, col, end_line, end_col = ctx.span(event.node)
        yield Diagnostic(self.code, line, col, msg, end_line, end_col, related=related(ctx, array.mesh))

    examples = (
        Invalid(_HEAD + """
print(multihost_utils.process_allgather(x))  # RSH308:7
"""),
        Invalid(_HEAD + """
replicated = jax.device_put(np.arange(8.0), NamedSharding(mesh, P()))
print(multihost_utils.process_allgather(replicated, tiled=False))  # RSH308:7
""", note="replicated over every process's devices: still not fully addressable"),
        Invalid(_HEAD + """
state = {'w': x, 'step': 3}
print(multihost_utils.process_allgather(state))  # RSH308:7
""", note="a pytree with a global leaf"),
        Invalid(_HEAD + """
step = jax.jit(lambda a: a * 2, out_shardings=NamedSharding(mesh, P('x')))
print(multihost_utils.process_allgather(step(x)).shape)  # RSH308:7
"""),
        Valid(_HEAD + """
print(multihost_utils.process_allgather(x, tiled=True))
""", note="the fix", instead=True),
        Valid(_HEAD + """
local = Mesh(np.array(jax.local_devices()), ('x',))
mine = jax.device_put(np.arange(8.0), NamedSharding(local, P('x')))
print(multihost_utils.process_allgather(mine).shape)
""", note="this process's devices: stacked, one copy per process"),
        Valid(_HEAD + """
print(multihost_utils.process_allgather(np.arange(3.0)).shape)
""", note="host data"),
        Valid(_HEAD + """
import jax.numpy as jnp
print(multihost_utils.process_allgather(jnp.ones(3)).shape)
""", note="an uncommitted array lives on this process"),
        Valid(_HEAD + """
if jax.process_count() == 1:
    print(multihost_utils.process_allgather(x))
""", note="only a one-process run gathers"),
        Valid(_HEAD + """
def gather(a):
    return multihost_utils.process_allgather(a)

print(gather(np.arange(4.0)).shape)
""", note="a helper called with host data"),
        Valid(_HEAD + """
one = jax.device_put(np.arange(4.0), jax.local_devices()[0])
print(multihost_utils.process_allgather(one).shape)
""", note="committed to one device of this process"),
        Valid(_HEAD + """
print(multihost_utils.process_allgather(x.addressable_data(0)).shape)
""", note="this process's shard"),
        Valid(_HEAD + """
print(multihost_utils.process_allgather({'w': x}, tiled=True)['w'].shape)
"""),
        Valid(_HEAD + """
tiled = True
print(multihost_utils.process_allgather(x, tiled=tiled).shape)
"""),
    )

    grounding = Grounding(
        multi=Outcome("error", r"Gathering global non-fully-addressable arrays only supports tiled=True",
                      where="all"),
        single=Outcome("ok"),
    )
