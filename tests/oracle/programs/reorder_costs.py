# Moves between two orders of the same eight devices, and what each makes move: RSH202
# fires only where some device must receive a piece that the same spec on the array's
# own mesh would leave in place (the oracle checks it against devices_indices_map).
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

devs = jax.devices()
grid = Mesh(np.array(devs).reshape(2, 4), ('a', 'b'))
z = jax.device_put(np.ones((4, 8)), NamedSharding(grid, P('a', 'b')))

# transposed together with its axis names: the spec's change moves the data, not the order
swapped = Mesh(grid.devices.T, ('b', 'a'))
w = jax.device_put(z, NamedSharding(swapped, P('b', 'a')))

# reversed along the axis the spec does not split: nothing moves
cols = Mesh(grid.devices[:, ::-1], ('a', 'b'))
half = jax.device_put(z, NamedSharding(grid, P('a', None)))
u = jax.device_put(half, NamedSharding(cols, P('a', None)))

# one row reversed: four of the eight devices receive another piece
part = Mesh(np.array(devs[:4][::-1] + devs[4:]).reshape(2, 4), ('a', 'b'))
v = jax.device_put(z, NamedSharding(part, P('a', 'b')))

# the same positions under other axis names: every device keeps its piece
renamed = Mesh(np.array(devs).reshape(2, 4), ('data', 'model'))
r = jax.device_put(z, NamedSharding(renamed, P('data', 'model')))
print(float(w.sum()), float(u.sum()), float(v.sum()), float(r.sum()))

# columns to a grid of blocks on a reversed mesh: the spec's change moves every device's
# data whatever the order (jax docs/notebooks/shard_map.py does this with make_mesh)
rgrid = Mesh(np.array(devs[::-1]).reshape(2, 4), ('a', 'b'))
colmesh = Mesh(np.array(devs), ('x',))
c = jax.device_put(np.ones((8, 8)), NamedSharding(colmesh, P(None, 'x')))
g = jax.device_put(c, NamedSharding(rgrid, P('a', 'b')))
# a replicated target: every device needs the whole array, whatever the order
rep = jax.device_put(z, NamedSharding(rgrid, P()))
print(float(g.sum()), float(rep.sum()))
