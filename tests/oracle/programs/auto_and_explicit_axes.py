# The same 8 devices in the same order on CPU, one mesh with Auto axes (Mesh) and one
# with Explicit axes (jax.make_mesh's default in jax 0.10): the eager sum raises
# "ValueError: Mesh for all inputs should be equal" on every platform. reshard-lint's
# RSH203 says so, and that the orders differ too on multi-host TPU
# (tests/test_axis_types_message.py); with platforms = ["cpu"] it is silent (the oracle
# counts it under raised_at_resolved_site; see docs/oracle.md).
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

mesh = Mesh(np.array(jax.devices()), ('x',))
natural = jax.make_mesh((8,), ('x',))
a = jax.device_put(np.arange(8.0), NamedSharding(mesh, P('x')))
b = jax.device_put(np.arange(8.0), NamedSharding(natural, P('x')))
print(a + b)
