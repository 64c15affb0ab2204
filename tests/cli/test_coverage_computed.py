"""reshard-lint coverage on arrays computed from other arrays (models/placement.py): where
the array is known, what is computed from it stays on its devices; where it is not, the
site is unresolved for the reason the array is unknown, naming what stopped the analysis
(not the computation); a target built on its own sharding needs no mesh at all."""

from __future__ import annotations

import json
from pathlib import Path

from .conftest import run, write

_HEAD = """\
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
import ext

half = Mesh(np.array(jax.devices()[4:]), ('x',))
"""
_EXT = ("a result of a function from another module or package", "ext.mesh (ext, not modelled)")


def _sites(project: Path, body: str) -> dict[int, tuple[str, str, str]]:
    write(project, "m.py", _HEAD + body)
    r = run("coverage", "--format", "json", "--sites", "m.py", cwd=project)
    assert r.returncode == 0, r.stderr
    return {s["line"]: (s["verdict"], s["detail"], s.get("culprit", ""))
            for s in json.loads(r.stdout)["site_list"]}


def test_device_put_without_a_target_keeps_a_committed_array_where_it_is(project: Path) -> None:
    # jax 0.10.2 returns x itself for device_put(x) (8 CPU devices: sharding, device set and
    # commitment unchanged); host data becomes uncommitted.
    by_line = _sites(project, """\
train = Mesh(np.array(jax.devices()[:4]), ('x',))
a = jax.device_put(np.ones((8, 2)), NamedSharding(train, P('x')))
v = jax.device_put(a)
b = jax.device_put(v, NamedSharding(half, P()))
c = jax.device_put(v, NamedSharding(train, P()))
d = jax.device_put(jax.device_put(np.ones(8)), NamedSharding(half, P()))
""")
    assert by_line[10][0] == "same_devices"  # device_put(a): no target
    assert by_line[11][0] == "crossing" and by_line[11][1].startswith("RSH201 "), by_line[11]
    assert by_line[12][0] == "same_devices", by_line[12]
    assert by_line[13][0] == "host_data", by_line[13]


def test_what_is_computed_from_an_unknown_array_is_unknown_for_its_reason(project: Path) -> None:
    by_line = _sites(project, """\
a = jax.device_put(np.ones((8, 2)), NamedSharding(ext.mesh(), P('x')))
b1 = jax.device_put(a.T, NamedSharding(half, P()))
b2 = jax.device_put(a.astype(jnp.float16), NamedSharding(half, P()))
b3 = jax.device_put(a.reshape(16), NamedSharding(half, P()))
b4 = jax.device_put(jnp.where(np.ones((8, 2)) > 0, a, 0.0), NamedSharding(half, P()))
b5 = jax.device_put(a @ np.ones((2, 2)), NamedSharding(half, P()))
b6 = jax.device_put(jax.nn.relu(a), NamedSharding(half, P()))
b7 = jax.device_put(jax.jit(lambda v: v + 1)(a), NamedSharding(half, P()))
b8 = jax.device_put(jax.vmap(lambda v: v * 2)(a), NamedSharding(half, P()))
b9 = jax.device_put(jax.tree.map(lambda v: v * 2, a), NamedSharding(half, P()))
b10 = jax.device_put(a, NamedSharding(half, P()))
""")
    for line in range(9, 19):
        assert by_line[line] == ("unresolved", *_EXT), (line, by_line[line])
    # uncommitted whatever a is: a random key with no device, and a's shape
    r = _sites(project, """\
a = jax.device_put(np.ones((8, 2)), NamedSharding(ext.mesh(), P('x')))
b = jax.device_put(jax.random.normal(jax.random.key(0), a.shape), NamedSharding(half, P()))
""")
    assert r[9][0] == "host_data", r[9]


def test_a_target_on_an_unknown_arrays_own_sharding_is_its_own_devices(project: Path) -> None:
    # One binding each: w.sharding is w's own, whatever w's mesh (here one the analysis
    # cannot see, or a name nothing defines); another array's is not.
    by_line = _sites(project, """\
w = jax.device_put(np.ones(8), NamedSharding(ext.mesh(), P()))
u = jax.device_put(np.ones(8), NamedSharding(UNDEFINED, P()))
b1 = jax.device_put(w, w.sharding)
b2 = jax.device_put(w, NamedSharding(w.sharding.mesh, P('x')))
b3 = jax.device_put(u, u.sharding)
b4 = jax.device_put(u, NamedSharding(u.sharding.mesh, P()))
b5 = jax.device_put(u, NamedSharding(w.sharding.mesh, P()))
b6 = jax.device_put(w, u.sharding)
""")
    own = "the target is built from '{}'s own sharding"
    assert by_line[10] == ("same_devices", own.format("w"), "")
    assert by_line[11] == ("same_devices", own.format("w"), "")
    assert by_line[12] == ("same_devices", own.format("u"), "")
    assert by_line[13] == ("same_devices", own.format("u"), "")
    assert by_line[14][0] == "unresolved", by_line[14]
    assert by_line[15][:2] == ("unresolved", _EXT[0]), by_line[15]
