"""What the mesh builders and process_allgather do under real multi-controller JAX (two
processes of 4 CPU devices on loopback): the facts behind RSH307, RSH308 and RSH102's
builder case, beyond the outcomes their examples claim (tests/multicontroller/test_grounding.py).

- ``jax.make_mesh((jax.local_device_count(),), ...)`` holds process 0's devices on every
  process (it takes the first devices of ``jax.devices()``); ``create_device_mesh`` with
  the same shape raises on every process (RSH307).
- ``jax.make_mesh(shape, names, devices=reversed)`` and ``create_device_mesh(shape,
  devices=reversed)`` keep the order given on CPU (RSH102).
- ``process_allgather`` of a global array, split or replicated, raises without
  ``tiled=True`` on every process; with it, or for this process's array, it gathers (RSH308).
"""

from __future__ import annotations

import pytest

from .harness import run_batch

pytestmark = [pytest.mark.multicontroller, pytest.mark.xdist_group("multicontroller-test_builder_counts")]

HEAD = """
import jax, numpy as np
from jax.experimental import mesh_utils, multihost_utils
from jax.sharding import NamedSharding, PartitionSpec as P
"""

LOCAL_MAKE_MESH = HEAD + """
m = jax.make_mesh((jax.local_device_count(),), ('x',))
print("ids", [d.id for d in m.devices.flat])
"""
LOCAL_CREATE = HEAD + "mesh_utils.create_device_mesh((jax.local_device_count(),))"
REVERSED = HEAD + """
m = jax.make_mesh((8,), ('x',), devices=jax.devices()[::-1])
g = mesh_utils.create_device_mesh((2, 4), devices=jax.devices()[::-1])
print("make", [d.id for d in m.devices.flat], "create", [d.id for d in g.flat])
"""
GATHER = HEAD + """
m = jax.make_mesh((jax.device_count(),), ('x',))
split = jax.device_put(np.arange(8.0), NamedSharding(m, P('x')))
replicated = jax.device_put(np.arange(8.0), NamedSharding(m, P()))
local = jax.make_mesh((jax.local_device_count(),), ('x',), devices=jax.local_devices())
mine = jax.device_put(np.arange(8.0), NamedSharding(local, P('x')))
for name, a in (("split", split), ("replicated", replicated)):
    try:
        multihost_utils.process_allgather(a)
        print(name, "gathered")
    except ValueError as e:
        print(name, "raised", e)
print("tiled", multihost_utils.process_allgather(split, tiled=True).tolist())
print("local", multihost_utils.process_allgather(mine).shape)
"""
REVERSED_IDS = [2051, 2050, 2049, 2048, 3, 2, 1, 0]


def test_builders_and_allgather_on_two_processes() -> None:
    make, create, reversed_, gather = run_batch([LOCAL_MAKE_MESH, LOCAL_CREATE, REVERSED, GATHER],
                                                processes=2, devices=4)
    assert make.all_ok(), make.details()
    for p in make.processes:
        assert "ids [0, 1, 2, 3]" in p.stdout, make.details()
    for p in create.processes:
        assert p.status == "error" and p.exc_type == "ValueError", create.details()
        assert "Number of devices 8 must equal the product of mesh_shape (4,)" in p.message, create.details()
    assert reversed_.all_ok(), reversed_.details()
    for p in reversed_.processes:
        assert f"make {REVERSED_IDS} create {REVERSED_IDS}" in p.stdout, reversed_.details()
    assert gather.all_ok(), gather.details()
    for p in gather.processes:
        for name in ("split", "replicated"):
            assert f"{name} raised Gathering global non-fully-addressable arrays only supports tiled=True" \
                in p.stdout, gather.details()
        assert "tiled [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]" in p.stdout, gather.details()
        assert "local (2, 8)" in p.stdout, gather.details()
