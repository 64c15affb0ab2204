"""What strict mode's per-platform RSH202 says, run under real multi-controller JAX (two
processes of 8 CPU devices on loopback): the facts behind runtime/_across.py.

This machine has no TPU, so the orders are JAX's own: ``create_device_mesh`` (which
``jax.make_mesh`` calls) run on the catalogue's mock TPU chips (runtime/platforms.py, the
descriptions JAX's mesh_utils tests use), for ``make_mesh((16,))`` and ``make_mesh((4, 4))``.
The k-th real device then plays the k-th chip, and an array is moved between the two
orders as a 2-host TPU job would move it. Each process checks:

- the move runs (JAX's different-device-order reshard) and every shard it holds afterwards
  has the right values;
- how many devices receive a piece they did not hold, counted from the two shardings'
  ``devices_indices_map``, is the count strict mode's message gives
  (tests/runtime/test_strict_platforms.py: 12 of the 16 on tpu-v4-32 and on tpu-v5e-16).
"""

from __future__ import annotations

import pytest

from .harness import run_batch

pytestmark = [pytest.mark.multicontroller, pytest.mark.xdist_group("multicontroller-test_platform_orders")]

MOVE = """
import jax, numpy as np
from jax._src import mesh_utils
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
from reshard_lint.runtime.platforms import CATALOGUE
from reshard_lint.runtime._order import order_moves

chips = CATALOGUE[{name!r}].devices
index = {{c: i for i, c in enumerate(chips)}}
split = {split!r}

def order(shape):
    return [index[c] for c in np.asarray(
        mesh_utils.create_device_mesh(shape, list(chips), allow_split_physical_axes=split)).flat]

devs = np.array(jax.devices(), dtype=object)
flat = Mesh(devs[order((16,))], ("x",))
grid = Mesh(devs[order((4, 4))].reshape(4, 4), ("a", "b"))
src, dst = NamedSharding(flat, P("x")), NamedSharding(grid, P(("a", "b")))
data = np.arange(32.0)
x = jax.make_array_from_callback(data.shape, src, lambda i: data[i])
y = jax.device_put(x, dst)
assert all(np.array_equal(np.asarray(s.data), data[s.index]) for s in y.addressable_shards)
held = {{d: i for d, i in src.devices_indices_map(data.shape).items()}}
moved = sum(1 for d, i in dst.devices_indices_map(data.shape).items() if held[d] != i)
print("ran", jax.process_count(), "moved", moved, "strict", order_moves(src, dst, 1))
"""


def test_a_move_between_two_tpu_builder_orders_on_two_processes() -> None:
    v4, v5e = run_batch([MOVE.format(name="tpu-v4-32", split=False),
                         MOVE.format(name="tpu-v5e-16", split=True)], processes=2, devices=8)
    for result, moved in ((v4, 12), (v5e, 12)):
        assert result.all_ok(), result.details()
        for p in result.processes:
            assert f"ran 2 moved {moved} strict ({moved}, 16)" in p.stdout, result.details()
