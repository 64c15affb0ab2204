"""reshard-lint coverage counts every call that moves, assembles or reads placed data
(issue 55): fetches, jitted calls with shardings whatever the analysis knows of their
arguments, assembly from a callback, gathers and default-device scopes, each with a
verdict or the reason it is unresolved. Run as a real subprocess; diagnostics unchanged."""

from __future__ import annotations

import json
from pathlib import Path

from .conftest import run, write

# Every kind of site, on 2 processes x 4 devices: the mesh's 'data' axis spans the
# processes, 'model' stays inside each.
SITES = """\
import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import multihost_utils
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

jax.distributed.initialize()
mesh = Mesh(np.array(jax.devices()).reshape(2, 4), ('data', 'model'))
local = Mesh(np.array(jax.local_devices()), ('x',))
x = jax.device_put(np.arange(16.0), NamedSharding(mesh, P('data')))
r = jax.device_put(np.arange(16.0), NamedSharding(mesh, P()))
inner = jax.device_put(np.arange(16.0), NamedSharding(mesh, P('model')))
mine = jax.device_put(np.arange(16.0), NamedSharding(local, P('x')))
print(jax.device_get(r), np.asarray(inner), mine.tolist(), float(r[0]), r[0].item())
print(jax.device_get(x))
print(jax.device_get(np.ones(3)))


def feed(a):
    return jax.device_get(a)


step = jax.jit(lambda a: a * 2, out_shardings=NamedSharding(mesh, P('model')))
y = step(np.ones(16))
z = step(x)
c = jax.make_array_from_callback((16,), NamedSharding(mesh, P('data')), lambda idx: np.arange(16.0)[idx])
g = multihost_utils.process_allgather(x, tiled=True)
with jax.default_device(jax.local_devices()[0]):
    w = jnp.zeros(3)
with jax.default_device(jax.devices()[1]):
    v = jnp.zeros(3)
t = jax.tree.map(functools.partial(jax.device_put, device=NamedSharding(mesh, P())), {"a": np.ones(2)})
"""
MESH = "'mesh' (line 10, jax.devices())"
WHOLE = "whole on every process that reads it (this process's devices, or every piece on every process)"
SPLIT_UNKNOWN = "an array whose split across processes the analysis does not know"


def _host(expr: str, line: int, x: str | None = None) -> tuple[str, str]:
    return "host_data", f"'{x or expr}' is host data or uncommitted: {expr} (line {line})"


EXPECTED = [
    (12, 5, "device_put", *_host("np.arange(16.0)", 12), ""),
    (13, 5, "device_put", *_host("np.arange(16.0)", 13), ""),
    (14, 9, "device_put", *_host("np.arange(16.0)", 14), ""),
    (15, 8, "device_put", *_host("np.arange(16.0)", 15), ""),
    (16, 7, "fetch", "same_devices", f"'r' is on mesh {MESH}, {WHOLE}", ""),
    (16, 26, "fetch", "same_devices", f"'inner' is on mesh {MESH}, {WHOLE}", ""),
    (16, 45, "fetch", "same_devices", f"'mine' is on mesh 'local' (line 11, jax.local_devices()), {WHOLE}", ""),
    # A piece of r: which part of it each process holds is not known.
    (16, 60, "fetch", "unresolved", SPLIT_UNKNOWN, f"'r[0]' on {MESH}"),
    (16, 73, "fetch", "unresolved", SPLIT_UNKNOWN, f"'r[0]' on {MESH}"),
    (17, 7, "fetch", "crossing", "RSH305", ""),
    (18, 7, "fetch", *_host("np.ones(3)", 18), ""),
    (22, 12, "fetch", "unresolved", "a parameter no call site feeds", "parameter 'a' of feed"),
    (26, 5, "jit_out", *_host("np.ones(16)", 26), ""),
    (27, 5, "jit_out", "same_devices",
     f"'x' is on mesh {MESH} and the target on {MESH}: the same devices in the same order", ""),
    (28, 5, "assembly", "unresolved", "the data a callback gives each shard, which the analysis does not run",
     "lambda idx: np.arange(16.0)[idx]"),
    (29, 5, "allgather", "unresolved", "a call the analysis counts but does not judge",
     "multihost_utils.process_allgather"),
    (30, 6, "default_device", "same_devices",
     "the default device jax.local_devices()[0] (line 30) is this process's own", ""),
    # jax.devices()[1] is process 0's: RSH306 whatever the scope computes (issue 58).
    (32, 6, "default_device", "crossing", "RSH306", ""),
    (34, 5, "device_put", "host_data", "'the value' is host data or uncommitted: np.ones(2) (line 34)", ""),
]


def test_every_call_that_moves_assembles_or_reads_placed_data_is_a_site_json(project: Path) -> None:
    write(project, "sites.py", SITES)
    r = run("coverage", "--isolated", "--format", "json", "--sites", cwd=project)
    assert r.returncode == 0, r.stdout + r.stderr
    out = json.loads(r.stdout)
    got = [(s["line"], s["col"], s["kind"], s["verdict"],
            s["detail"].split(" ", 1)[0] if s["verdict"] == "crossing" else s["detail"], s["culprit"])
           for s in out["site_list"]]
    assert got == EXPECTED
    assert out["sites"] == 19
    assert out["verdicts"] == {"crossing": 2, "same_devices": 5, "same_pieces": 0, "host_data": 7, "unresolved": 5}
    assert out["failures"] == []


def test_every_call_that_moves_assembles_or_reads_placed_data_is_a_site_text(project: Path) -> None:
    write(project, "sites.py", SITES)
    r = run("coverage", "--isolated", "--sites", cwd=project)
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    assert lines[5] == f"sites.py:16:26: fetch: same_devices: 'inner' is on mesh {MESH}, {WHOLE}"
    assert lines[14] == ("sites.py:28:5: assembly: unresolved: the data a callback gives each shard, which the "
                         "analysis does not run: lambda idx: np.arange(16.0)[idx]")
    assert lines[16] == ("sites.py:30:6: default_device: same_devices: the default device jax.local_devices()[0] "
                         "(line 30) is this process's own")
    assert "19 transfer sites in 1 files" in lines


def test_the_diagnostics_are_the_rules_own(project: Path) -> None:
    # The new sites are coverage's: check reports the rules' own, RSH305 and RSH306 (the
    # default device of another process, whatever the scope computes).
    write(project, "sites.py", SITES)
    r = run("check", "--isolated", "--format", "json", "sites.py", cwd=project)
    assert r.returncode == 1, r.stdout + r.stderr
    assert [(d["location"]["row"], d["location"]["column"], d["code"]) for d in json.loads(r.stdout)] == [
        (17, 7, "RSH305"), (32, 6, "RSH306")]


UNKNOWN_ARGS = """\
import jax
from jax.sharding import NamedSharding, PartitionSpec as P

from store import load, MESH


@jax.jit
def plain(a):
    return a


step = jax.jit(lambda a: a + 1, in_shardings=NamedSharding(MESH, P()))
out = step(load())
plain(load())
print(jax.device_get(out), jax.device_get(load()))
"""


def test_a_jitted_call_with_shardings_is_a_site_whatever_its_arguments(project: Path) -> None:
    write(project, "train.py", UNKNOWN_ARGS)
    r = run("coverage", "--isolated", "--format", "json", "--sites", cwd=project)
    assert r.returncode == 0, r.stdout + r.stderr
    got = [(s["line"], s["col"], s["kind"], s["verdict"], s["detail"], s["culprit"])
           for s in json.loads(r.stdout)["site_list"]]
    assert got == [
        (13, 7, "jit_in", "unresolved", "a result of a function from another module or package",
         "store.load (store, not modelled)"),
        # A plain jitted call places nothing: no site. A fetch of what the call with
        # in_shardings alone returns: the analysis does not model its results' placement.
        (15, 7, "fetch", "unresolved", "a value the analysis does not model", ""),
        (15, 28, "fetch", "unresolved", "a result of a function from another module or package",
         "store.load (store, not modelled)"),
    ]


PJIT = """\
import jax
import numpy as np
from jax.experimental.pjit import pjit
from jax.sharding import Mesh, PartitionSpec as P

mesh = Mesh(np.array(jax.devices()), ('x',))
f = pjit(lambda a: a * 2, in_shardings=P('x'), out_shardings=P('x'))
with mesh:
    y = f(np.arange(8.0))
    z = f(y)
"""


def test_pjit_with_specs_under_a_mesh_is_a_site(project: Path) -> None:
    write(project, "p.py", PJIT)
    r = run("coverage", "--isolated", "--sites", cwd=project)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.splitlines()[:3] == [
        "p.py:9:9: jit_out: host_data: 'np.arange(8.0)' is host data or uncommitted: np.arange(8.0) (line 9)",
        # The specs, written outside the mesh context, place on the mesh of each call's
        # context, which the analysis does not follow into the results: unresolved.
        "p.py:10:9: jit_out: unresolved: a value the analysis does not model",
        "",
    ]
