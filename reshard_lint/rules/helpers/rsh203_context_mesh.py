"""RSH203 under a context mesh: computations under jax.set_mesh that meet another device.

Part of RSH203 (rsh203_incompatible_devices.py imports it): the message and the examples
of the context-mesh case, kept apart so that each module stays about one thing.
"""

from __future__ import annotations

import ast
from typing import Iterable

from ...analysis.context import FileContext
from ...analysis.render import describe_mesh
from ...analysis.events import ContextOp
from ...analysis.values import ArrayVal, MeshContextVal, MeshVal, ShardingVal
from .crossing import related
from ...core.diagnostic import Diagnostic
from ..base import Invalid, Valid

_RAISED = "ValueError: Received incompatible devices for jitted computation"


def context_diagnostic(code: str, event: ContextOp) -> Iterable[Diagnostic]:
    ctx = event.ctx
    site = event.context
    if not isinstance(site, MeshContextVal) or site.node is None:
        return
    setter = site.node.func if isinstance(site.node, ast.Call) else site.node
    where = (f"the context mesh {describe_mesh(ctx, site.mesh)}, set by {ctx.code(setter, 30)} "
             f"at {ctx.at(site.node)}")
    mesh_name = site.mesh.name or "mesh"
    if isinstance(event.array, ArrayVal) and event.array.sharding.device is not None:
        device = event.array.sharding.device
        if isinstance(event.value_node, (ast.Name, ast.Attribute)):
            x = ctx.code(event.value_node, 30)
        else:
            x = event.array.name or ctx.code(event.array.node, 40)
        msg = (
            f"'{event.what}' computes on '{x}', committed to one device ({device.desc}, "
            f"{ctx.at(event.array.node)}), under {where}: JAX raises \"{_RAISED}\" on one host and "
            f"on many; make it on the context mesh (jax.device_put(<host data>, NamedSharding({mesh_name}, "
            "P(...))), or jax.make_array_from_process_local_data in multi-controller code), or compute "
            "outside the context"
        )
        others: tuple[MeshVal, ...] = (site.mesh,)
    elif isinstance(event.array, ArrayVal) and event.array.mesh is not None:
        own = event.array.mesh
        x = ctx.code(event.value_node, 30) if isinstance(event.value_node, (ast.Name, ast.Attribute)) \
            else event.array.name or "an array"
        leave = f"compute outside the context (with jax.set_mesh({own.name or '<its mesh>'}):)"
        # Only a reordering can be put onto the context mesh everywhere: another device
        # set is RSH201 in multi-controller JAX.
        fix = (f"put it on the context mesh first (jax.device_put({x}, NamedSharding({mesh_name}, P(...)))), "
               f"or {leave}") if ctx.compare(own, site.mesh) == "reordered" else leave
        msg = (
            f"'{event.what}' computes on '{x}', on mesh {describe_mesh(ctx, own)}, under {where}, "
            f"{_how(ctx, own, site.mesh)}: JAX raises \"{_RAISED}\" on one host and on many; {fix}"
        )
        others = (site.mesh, own)
    elif isinstance(event.target, ShardingVal) and event.target.mesh is not None:
        target = event.target.mesh
        msg = (
            f"'{event.what}' has out_shardings on mesh {describe_mesh(ctx, target)} and is called under "
            f"{where}, {_how(ctx, target, site.mesh)}: JAX raises \"{_RAISED}\" on one host and on many; "
            f"build its shardings on '{mesh_name}', or call it outside the context "
            "(with jax.set_mesh(<its mesh>):)"
        )
        others = (site.mesh, target)
    else:
        return
    line, col, end_line, end_col = ctx.span(event.node)
    yield Diagnostic(code, line, col, msg, end_line, end_col, related=related(ctx, *others))


def _how(ctx: FileContext, a: MeshVal, b: MeshVal) -> str:
    return {"different": "a different device set", "reordered": "the same devices in another order"}.get(
        ctx.compare(a, b), "a different device set or order (depending on the device count)")


_HEAD = """\
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((jax.device_count(),), ('x',))
"""

CONTEXT_EXAMPLES = (
    Invalid(_HEAD + """
a = jax.device_put(np.arange(16.0), jax.local_devices()[0])
with jax.set_mesh(mesh):
    print(a[1:3])  # RSH203:11
""", note="an array committed to one device, sliced under the context mesh"),
    Invalid(_HEAD + """
a = jax.device_put(np.arange(16.0), jax.local_devices()[0])
jax.set_mesh(mesh)
print(a + 1)  # RSH203:7
""", note="set_mesh as a global setter"),
    Invalid(_HEAD + """
x = jax.device_put(np.arange(16.0), NamedSharding(mesh, P('x')))
with jax.set_mesh(mesh):
    print(jnp.expand_dims(x.addressable_shards[0].data, 0))  # RSH203:11
""", note="a shard's data is committed to the device that holds it"),
    Invalid(_HEAD + """
x = jax.device_put(np.arange(16.0), NamedSharding(mesh, P('x')))
with jax.set_mesh(mesh):
    print(jax.lax.neg(x.addressable_data(0)))  # RSH203:11
"""),
    Invalid(_HEAD + """
staged = jax.device_put(np.ones(16), jax.local_devices(backend='cpu')[0])
double = jax.jit(lambda v: v * 2)
with jax.set_mesh(mesh):
    print(double(staged))  # RSH203:11
""", note="weights staged on one CPU device, then used by a jitted function"),
    Invalid(_HEAD + """
other = Mesh(np.array(jax.devices()[4:]), ('x',))
make = jax.jit(lambda: jnp.zeros(8), out_shardings=NamedSharding(other, P('x')))
with jax.set_mesh(mesh):
    print(make().sharding)  # RSH203:11
""", note="out_shardings on a sub-mesh, called under the context mesh"),
    Invalid(_HEAD + """
auto = Mesh(np.array(jax.devices()), ('x',))
a = jax.device_put(np.arange(16.0), jax.local_devices()[0])
with jax.set_mesh(auto):
    print(a * 3)  # RSH203:11
""", note="a context mesh built with Mesh (auto axes)"),
    Invalid(_HEAD + """
x = jax.device_put(np.arange(16.0), NamedSharding(mesh, P('x')))
with jax.set_mesh(mesh):
    for shard in x.addressable_shards:
        print(shard.data + 1)  # RSH203:15
""", note="each shard's data, in a loop"),
    Valid(_HEAD + """
x = jax.device_put(np.arange(16.0), NamedSharding(mesh, P('x')))
with jax.set_mesh(mesh):
    print([np.asarray(s.data).sum() for s in x.addressable_shards], [s.device for s in x.addressable_shards])
""", note="reading shards to the host is no computation"),
    Invalid(_HEAD + """
a = jax.device_put(np.arange(16.0), jax.local_devices()[0])
with jax.set_mesh(mesh):
    print(-a)  # RSH203:11
    print(a > 1)  # RSH203:11
    print(a.astype(np.int32))  # RSH203:11
    print(a.sum())  # RSH203:11
""", note="negation, comparison and array methods compute too"),
    Invalid(_HEAD + """
z = jnp.zeros(8, device=jax.local_devices()[0])
with jax.set_mesh(mesh):
    print(z + 1)  # RSH203:11
""", note="a jnp array made on one device"),
    Invalid(_HEAD + """
full = Mesh(np.array(jax.devices()), ('x',))
half = Mesh(np.array(jax.devices()[:4]), ('x',))
y = jax.device_put(np.arange(16.0), NamedSharding(half, P('x')))
with jax.set_mesh(full):
    print((y + 1).shape)  # RSH203:12
""", note="an array on a sub-mesh; both meshes with auto axes"),
    Invalid(_HEAD + """
full = Mesh(np.array(jax.devices()), ('x',))
rev = Mesh(np.array(jax.devices()[::-1]), ('x',))  # RSH102:7
y = jax.device_put(np.arange(16.0), NamedSharding(rev, P('x')))
with jax.set_mesh(full):
    print((y * 2).shape)  # RSH203:12
""", note="an array on the same devices in another order"),
    Invalid(_HEAD + """
rev = Mesh(np.array(jax.devices()[::-1]), ('x',))  # RSH102:7
make = jax.jit(lambda: jnp.zeros(8), out_shardings=NamedSharding(rev, P('x')))
with jax.set_mesh(mesh):
    print(make().shape)  # RSH203:11
""", note="out_shardings on a reordering of the context mesh"),
    Valid(_HEAD + """
a = jax.device_put(np.arange(16.0), jax.local_devices()[0])
with jax.set_mesh(mesh):
    print(jnp.asarray(a).shape, jnp.shape(a), a is not None, a.dtype)
""", note="reading an array's shape or dtype computes nothing"),
    Valid(_HEAD + """
a = jnp.arange(16.0)
with jax.set_mesh(mesh):
    print((a[1:3] + 1).shape, jnp.expand_dims(a, 0).shape)
""", note="uncommitted arrays follow the context mesh"),
    Valid(_HEAD + """
host = np.arange(16.0)
with jax.set_mesh(mesh):
    print(host[1:3] + 1, jnp.sum(host))
""", note="host data"),
    Valid(_HEAD + """
x = jax.device_put(np.arange(16.0), NamedSharding(mesh, P('x')))
with jax.set_mesh(mesh):
    print((x + 1).sharding, (x * 2).shape)
""", note="an array on the context mesh itself"),
    Valid(_HEAD + """
with jax.set_mesh(mesh):
    y = jax.device_put(np.arange(16.0), P('x'))
    print((y + 1).shape)
""", note="a bare PartitionSpec means the context mesh"),
    Valid(_HEAD + """
a = jax.device_put(np.arange(16.0), jax.local_devices()[0])
with mesh:
    print(a + 1)
""", note="the legacy `with mesh:` sets no context mesh for jit"),
    Valid(_HEAD + """
a = jax.device_put(np.arange(16.0), jax.local_devices()[0])
with jax.set_mesh(mesh):
    print(a.shape)
print((a + 1).shape)
""", note="computing outside the context"),
    Valid(_HEAD + """
a = jax.device_put(np.arange(16.0), NamedSharding(mesh, P()))
with jax.set_mesh(mesh):
    print((a + 1).shape)
""", note="the fix: make the array on the context mesh"),
    Valid(_HEAD + """
make = jax.jit(lambda: jnp.zeros(8), out_shardings=NamedSharding(mesh, P('x')))
with jax.set_mesh(mesh):
    print(make().sharding)
""", note="out_shardings on the context mesh"),
    Valid(_HEAD + """
x = jax.device_put(np.arange(16.0), NamedSharding(mesh, P('x')))
print(jnp.expand_dims(x.addressable_shards[0].data, 0).shape)
with jax.set_mesh(mesh):
    print(jax.device_get(x.addressable_data(0)).shape)
""", note="shard data used outside the context, and only fetched inside it"),
    Valid(_HEAD + """
params = {'w': np.ones(4)}
params = jax.device_put(params, jax.local_devices()[0])
with jax.set_mesh(mesh):
    print(params['w'].shape)
""", note="a pytree put on a device: indexing the dict is no computation"),
)
