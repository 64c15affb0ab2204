# Found by the oracle's generator (seed 54, minimized): one mesh factory called with two
# different device lists. The two meshes are built on the same line, but not from the
# same devices: the move below is a reordering (RSH202 territory), not a same-device move.
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P


def make_mesh(devices=None):
    if devices is None:
        devices = jax.devices()
    return Mesh(np.array(devices), ('x',))


train = make_mesh(jax.devices())
rollout = make_mesh(jax.devices()[::-1])
w = jax.device_put(np.ones(8), NamedSharding(train, P('x')))
moved = jax.device_put(w, NamedSharding(rollout, P('x')))
half = make_mesh(jax.devices()[:4])
part = jax.device_put(w, NamedSharding(half, P('x')))
print(float(moved.sum()), float(part.sum()))
