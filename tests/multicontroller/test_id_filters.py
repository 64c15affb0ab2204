"""What a filter by device id keeps under real multi-controller JAX (two processes on
loopback), the ground of the id filter model (analysis/models/id_filters.py): with four
CPU devices per process the ids are 0-3 and 2048-2051, `d.id % 2 == 0` keeps half and a
put from all devices onto them raises; with one device per process (CPU's default) the
ids are 0 and 2048, every one even, and the same put keeps the devices: why RSH201 says
"not certain on CPU" there (tests/fixtures/id_filters.py)."""

from __future__ import annotations

import pytest

from .harness import run_batch

pytestmark = [pytest.mark.multicontroller, pytest.mark.xdist_group("multicontroller-test_id_filters")]

SNIPPET = """
import jax, numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
d = jax.devices()
evens = [dev for dev in d if dev.id % 2 == 0]
print("ids", [dev.id for dev in d], "kept", [dev.id for dev in evens])
src = jax.device_put(np.arange(8.0), NamedSharding(Mesh(np.array(d), ('x',)), P()))
dst = jax.device_put(src, NamedSharding(Mesh(np.array(evens), ('x',)), P()))
print("same devices", dst.sharding.device_set == src.sharding.device_set)
"""


def test_four_devices_per_process_keep_half_and_the_put_raises() -> None:
    (result,) = run_batch([SNIPPET], processes=2, devices=4)
    for p in result.processes:
        assert "ids [0, 1, 2, 3, 2048, 2049, 2050, 2051] kept [0, 2, 2048, 2050]" in p.stdout, result.details()
        assert p.status == "error" and "same set of devices" in p.error_text, result.details()


def test_one_device_per_process_keeps_every_device() -> None:
    (result,) = run_batch([SNIPPET], processes=2, devices=1)
    assert result.all_ok(), result.details()
    for p in result.processes:
        assert "ids [0, 2048] kept [0, 2048]" in p.stdout and "same devices True" in p.stdout, result.details()
