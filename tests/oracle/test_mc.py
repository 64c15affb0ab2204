"""The recorders under real multi-controller JAX (tests/oracle/mc.py): one program that
reaches every site kind, run as 2 processes of 4 CPU devices on loopback."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from .mc import run_jobs
from .run import Program

pytestmark = pytest.mark.multicontroller

PROGRAM = textwrap.dedent("""\
    import functools
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax.experimental import multihost_utils
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

    jax.distributed.initialize()
    mesh = Mesh(np.array(jax.devices()), ("x",))
    split = NamedSharding(mesh, P("x"))
    tree = jax.tree.map(functools.partial(jax.device_put, device=split), {"a": np.zeros(8, np.float32)})
    whole = jax.device_put(np.ones(8, np.float32), NamedSharding(mesh, P()))
    whole.tolist()
    whole[0].item()
    multihost_utils.process_allgather(tree["a"], tiled=True)
    local = jax.make_array_from_process_local_data(split, np.zeros(4, np.float32), (8,))
    g = multihost_utils.host_local_array_to_global_array(np.zeros(4, np.float32), mesh, P("x"))
    with jax.default_device(jax.devices()[0]):
        pass
    jax.jit(lambda v: v * 2, out_shardings=split)(whole)
    half = Mesh(np.array(jax.devices()[:4]), ("x",))
    jax.device_get(tree["a"])
""")


def test_every_site_kind_recorded_per_process(tmp_path: Path) -> None:
    (tmp_path / "prog.py").write_text(PROGRAM)
    runs = run_jobs([Program("prog", str(tmp_path), "prog.py")], processes=2)["prog"]
    assert [r["process"] for r in runs] == [0, 1]
    for rec in runs:
        me = rec["process"]
        sites = {(s["api"], s["line"]): s for s in rec["sites"]}
        apis = {api for api, _ in sites}
        assert {"device_put", "tolist", "item", "process_allgather", "make_array_from_process_local_data",
                "host_local_array_to_global_array", "default_device", "jit", "device_get"} <= apis, apis
        put = sites[("device_put", 11)]  # jax.tree.map calls it: recorded at the user's call
        assert put["pairs"][0]["dst"]["devices"] == list(range(8))
        assert put["pairs"][0]["dst"]["procs"] == [0, 1] and put["pairs"][0]["dst"]["owned"] == "some"
        assert not sites[("tolist", 13)]["foreign"]  # replicated: every process holds it all
        scope = sites[("default_device", 18)]
        assert scope["foreign"] is (me != 0)  # device 0 is process 0's
        # a fetch of an array split across the processes raises, on every process
        assert rec["status"] == "error" and "spans non-addressable" in rec["error"]
        assert rec["error_at"] == [str(tmp_path / "prog.py"), 22]
        fetch = sites[("device_get", 22)]
        assert fetch["foreign"] and "spans non-addressable" in fetch["error"]
        meshes = [(m["full"], m["natural"], m["stack"][0][1]) for m in rec["meshes"]]
        assert (True, True, 9) in meshes and (False, True, 21) in meshes
