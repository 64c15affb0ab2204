"""reshard-lint coverage: every transfer site and what the analysis knows of it, as a real subprocess."""

from __future__ import annotations

import json
from pathlib import Path

from .conftest import CROSS, run, write

VERDICTS = ("crossing", "same_devices", "same_pieces", "host_data", "unresolved")

# Every verdict, and two reasons; the tests name the sites by line.
MIXED = """\
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
from mypkg.meshes import OTHER_MESH

mesh = Mesh(np.array(jax.devices()), ('x',))
half = Mesh(np.array(jax.devices()[:4]), ('x',))
x = jax.device_put(np.arange(8.0), NamedSharding(mesh, P('x')))
y = jax.device_put(x, NamedSharding(half, P('x')))
z = jax.device_put(x, NamedSharding(mesh, P()))
k = jax.device_put(jnp.zeros(8), NamedSharding(mesh, P('x')))


def keep(a):
    return jax.device_put(a, a.sharding)


def feed(a):
    return jax.device_put(a, NamedSharding(mesh, P()))


w = jax.device_put(OTHER_MESH, NamedSharding(mesh, P()))
"""


def _json(*args: str, cwd: Path) -> dict:
    r = run("coverage", "--format", "json", *args, cwd=cwd)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_json_has_exactly_the_documented_keys_and_counts_add_up(project: Path) -> None:
    write(project, "train.py", MIXED)
    out = _json(cwd=project)
    assert list(out) == ["files", "sites", "verdicts", "unresolved_reasons", "unresolved_culprits",
                         "runtime_decisions", "failures"]
    assert out["failures"] == []
    assert out["files"] == 1
    assert list(out["verdicts"]) == list(VERDICTS)
    assert sum(out["verdicts"].values()) == out["sites"] == 7
    assert out["verdicts"] == {"crossing": 1, "same_devices": 2, "same_pieces": 0, "host_data": 2, "unresolved": 2}
    assert sum(out["unresolved_reasons"].values()) == out["verdicts"]["unresolved"]
    assert out["unresolved_reasons"] == {
        "a name imported from another module": 1,
        "a parameter no call site feeds": 1,
    }
    # What stopped the analysis at those sites: mypkg is no module of this project.
    assert out["unresolved_culprits"] == {
        "a name imported from another module": {"mypkg.meshes.OTHER_MESH (mypkg, not modelled)": 1},
        "a parameter no call site feeds": {"parameter 'a' of feed": 1},
    }
    assert out["runtime_decisions"] == []  # multi-controller code: nothing silenced


def test_sites_list_each_site_with_evidence_or_reason(project: Path) -> None:
    write(project, "train.py", MIXED)
    out = _json("--sites", cwd=project)
    assert [s["line"] for s in out["site_list"]] == [9, 10, 11, 12, 16, 20, 23]
    by_line = {s["line"]: (s["verdict"], s["detail"]) for s in out["site_list"]}
    assert by_line[9][0] == "host_data" and "np.arange(8.0) (line 9)" in by_line[9][1]
    assert by_line[10][0] == "crossing" and by_line[10][1].startswith("RSH201 ")
    same = ("'x' is on mesh 'mesh' (line 7, jax.devices()) and the target on 'mesh' (line 7, jax.devices()): "
            "the same devices in the same order")
    assert by_line[11] == ("same_devices", same)
    assert by_line[12][0] == "host_data" and "uncommitted" in by_line[12][1]
    assert by_line[16] == ("same_devices", "the target is built from 'a's own sharding")
    assert by_line[20] == ("unresolved", "a parameter no call site feeds")
    assert by_line[23] == ("unresolved", "a name imported from another module")
    assert all(s["path"] == "train.py" for s in out["site_list"])
    culprits = {s["line"]: s["culprit"] for s in out["site_list"]}
    assert culprits == {9: "", 10: "", 11: "", 12: "", 16: "", 20: "parameter 'a' of feed",
                        23: "mypkg.meshes.OTHER_MESH (mypkg, not modelled)"}


def test_text_report_and_exit_status_zero_even_with_crossings(project: Path) -> None:
    write(project, "train.py", MIXED)
    r = run("coverage", cwd=project)
    assert r.returncode == 0, r.stderr
    assert "7 transfer sites in 1 files" in r.stdout
    assert "  crossing            1   14.3%" in r.stdout
    assert "  resolved            5   71.4%" in r.stdout
    assert "unresolved, by reason:" in r.stdout
    assert "      2  train.py" in r.stdout


def test_honours_excludes_from_configuration(project: Path) -> None:
    write(project, "train.py", MIXED)
    write(project, "vendored/copy.py", CROSS)
    assert _json(cwd=project)["files"] == 2
    (project / "pyproject.toml").write_text(
        "[project]\nname = 'demo'\nversion = '0'\n\n[tool.reshard-lint]\nextend-exclude = ['vendored']\n")
    out = _json(cwd=project)
    assert out["files"] == 1 and out["sites"] == 7
    assert _json("--extend-exclude", "train.py", cwd=project)["files"] == 0


def test_a_call_the_analysis_never_runs_is_unresolved_with_that_reason(project: Path) -> None:
    write(project, "cb.py", """\
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

mesh = Mesh(np.array(jax.devices()), ('x',))
later = [lambda a: jax.device_put(a, NamedSharding(mesh, P()))]
put = lambda a: jax.device_put(a, NamedSharding(mesh, P()))
""")
    out = _json(cwd=project)
    assert out["sites"] == 2
    # A lambda bound to a name runs as a def does: with no call, its parameter is fed by none.
    assert out["unresolved_reasons"] == {
        "a call the analysis did not run (a callback it does not follow, an expected-error block)": 1,
        "a parameter no call site feeds": 1}


def test_an_unset_attribute_says_why(project: Path) -> None:
    # Assigned in two methods, assigned once by a method that has not run yet where it is
    # read (an __init__ with parameters runs once all its calls are seen), or by none of
    # the class's methods: three reasons, not one.
    write(project, "attrs.py", """\
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

rollout = Mesh(np.array(jax.devices()[:4]), ('x',))


class Base:
    pass


class Trainer(Base):
    def __init__(self, scale):
        self.mesh = Mesh(np.array(jax.devices()), ('x',))
        self.params = jax.device_put(np.ones(8) * scale, NamedSharding(self.mesh, P('x')))
        self.state = self.params

    def step(self):
        self.state = self.state * 2


t = Trainer(2.0)
a = jax.device_put(t.params, NamedSharding(rollout, P()))
b = jax.device_put(t.state, NamedSharding(rollout, P()))
c = jax.device_put(t.inherited, NamedSharding(rollout, P()))
""")
    out = _json("--sites", "attrs.py", cwd=project)
    reasons = {s["line"]: s["detail"] for s in out["site_list"] if s["verdict"] == "unresolved"}
    assert reasons == {
        23: "an attribute read before the method that assigns it ran",
        24: "an attribute assigned in more than one place",
        25: "an attribute the class's own methods do not assign",
    }


def test_single_devices_resolve_only_when_they_are_one_device(project: Path) -> None:
    write(project, "devices.py", """\
import jax
import numpy as np
from jax.sharding import SingleDeviceSharding

arr = jax.device_put(np.arange(8), jax.devices()[0])
same = jax.device_put(arr, SingleDeviceSharding(jax.devices()[0]))
d1, d2 = jax.local_devices()[:2]
x = jax.device_put(np.zeros(3), device=d1)
again = jax.device_put(x, device=d1)
other = jax.device_put(x, device=d2)
first = jax.device_put(arr, jax.local_devices()[0])
params = jax.device_put(load(), d1)
moved = jax.device_put(params, d1)
""")
    by_line = {s["line"]: (s["verdict"], s["detail"]) for s in _json("--sites", cwd=project)["site_list"]}
    assert by_line[6] == ("same_devices", "'arr' is on device jax.devices()[0] (line 5) and the target on "
                                          "jax.devices()[0] (line 6): the same device")
    assert by_line[9] == ("same_devices", "'x' is on device jax.local_devices()[:2][0] (line 7) and the target "
                                          "on jax.local_devices()[:2][0] (line 7): the same device")
    # Another device, and process 0's first device against this process's first: not one device.
    assert by_line[10] == ("unresolved", "two meshes whose comparison is not certain on every topology")
    assert by_line[11] == ("unresolved", "two meshes whose comparison is not certain on every topology")
    # A pytree the analysis does not know, put on one device: every leaf of it is there.
    assert by_line[13] == ("same_devices", "'params' is on device jax.local_devices()[:2][0] (line 7) and the "
                                           "target on jax.local_devices()[:2][0] (line 7): the same device")


def test_tree_map_callbacks_run_on_leaves_known_or_not(project: Path) -> None:
    write(project, "trees.py", """\
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

mesh = Mesh(np.array(jax.devices()), ('x',))
s = NamedSharding(mesh, P())
host = {'w': np.ones(8), 'b': np.zeros(8)}
placed = jax.tree.map(lambda a: jax.device_put(a, s), host)
both = jax.tree.map(lambda a, t: jax.device_put(a, t), host, {'w': s, 'b': s})
pairs = [jax.device_put(v, s) for k, v in host.items()]
rows = [jax.device_put(v, s) for row in [[np.ones(2), np.zeros(2)]] for v in row]


def offload(state):
    return jax.tree.map(lambda a: jax.device_put(a, a.sharding.with_memory_kind('pinned_host')), state)


def place(state):
    return jax.tree.map(lambda a: jax.device_put(a, s), state)


half = Mesh(np.array(jax.devices()[:4]), ('x',))
arrays = (jax.device_put(np.zeros(8), s), jax.device_put(np.zeros(8), NamedSharding(half, P())))
picked = jax.tree.map(lambda i: jax.device_put(arrays[i], s), {'a': 0, 'b': 1})
""")
    by_line = {s["line"]: (s["verdict"], s["detail"]) for s in _json("--sites", cwd=project)["site_list"]}
    # JAX visits a dict's leaves by sorted key: 'b' first.
    assert by_line[8] == ("host_data", "'a' is host data or uncommitted: np.zeros(8) (line 7)")
    assert by_line[9] == ("host_data", "'a' is host data or uncommitted: np.zeros(8) (line 7)")
    assert by_line[10] == ("host_data", "'v' is host data or uncommitted: np.ones(8) (line 7)")
    assert by_line[11][0] == "host_data"
    # A tree nobody passes: the callback runs on a leaf it does not know, and a target
    # built on the leaf's own sharding needs no more.
    assert by_line[15] == ("same_devices", "the target is built from 'a's own sharding")
    assert by_line[19] == ("unresolved", "a parameter no call site feeds")
    # Constant leaves do not stand for each other (the first would pick arrays[0] for
    # both): the callback runs once per leaf, and on 'b' it moves arrays[1], on half.
    assert by_line[24][0] == "crossing" and by_line[24][1].startswith("RSH201 jax.device_put moves 'arrays[i]' from mesh 'half'")


def test_tree_map_over_trees_known_exactly_runs_once_per_leaf(project: Path) -> None:
    # The shape of the oracle's generated projects: each leaf to the target at its place
    # in a second tree. JAX visits 'b' (replicated: a copy in any order) then 'w'
    # (resharded across the reordered devices); the result holds each moved leaf.
    write(project, "trees.py", """\
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

train = Mesh(np.array(jax.devices()), ('x',))
rollout = Mesh(np.array(jax.devices()[::-1]), ('x',))
tree = {'w': jax.device_put(np.ones((8, 2)), NamedSharding(train, P('x'))), 'b': jax.device_put(np.zeros(8), NamedSharding(train, P()))}
targets = {'w': NamedSharding(rollout, P('x')), 'b': NamedSharding(rollout, P())}
out = jax.tree.map(lambda a, s: jax.device_put(a, s), tree, targets)
back = jax.device_put(out['w'], NamedSharding(rollout, P('x')))
same = jax.tree.map(lambda a, s: jax.device_put(a, s), tree, {'w': NamedSharding(train, P('x')), 'b': NamedSharding(train, P())})
hidden = jax.tree.map(lambda a, s: jax.device_put(a, s), tree, targets, is_leaf=lambda v: v is None)
own = jax.device_put(tree, jax.tree.map(lambda a: NamedSharding(a.sharding.mesh, P('x')), tree))
""")
    sites = {(s["line"], s["col"]): (s["verdict"], s["detail"]) for s in _json("--sites", cwd=project)["site_list"]}
    assert sites[(9, 33)][0] == "crossing" and sites[(9, 33)][1].startswith("RSH202 jax.device_put moves 'a'")
    assert sites[(10, 8)][0] == "same_devices"
    assert sites[(11, 34)] == ("same_devices", "'a' is on mesh 'train' (line 5, jax.devices()) and the target on "
                                               "'train' (line 5, jax.devices()): the same devices in the same order")
    # is_leaf decides what a leaf is: the callback runs on one the analysis does not know.
    assert sites[(12, 36)] == ("unresolved", "an element of a container the analysis does not know")
    # A target per leaf built on each leaf's own mesh (RSH201's fix for a pytree).
    assert sites[(13, 7)][0] == "same_devices"


def test_a_mesh_factory_called_twice_builds_each_mesh_from_its_own_devices(project: Path) -> None:
    # tests/oracle/programs/factory_called_twice.py: both meshes are built on one line, but
    # not from the same devices; where a constant argument decides the factory's branch,
    # each call's mesh is its own (the second reversed: a crossing, never "the same
    # devices").
    write(project, "factory.py", """\
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P


def make_mesh(devices=None):
    if devices is None:
        devices = jax.devices()
    return Mesh(np.array(devices), ('x',))


def flipped_mesh(devices, flip):
    if flip:
        devices = devices[::-1]
    return Mesh(np.array(devices), ('x',))


w = jax.device_put(np.ones(8), NamedSharding(make_mesh(jax.devices()), P('x')))
same = jax.device_put(w, NamedSharding(make_mesh(), P('x')))
c = jax.device_put(np.ones(8), NamedSharding(flipped_mesh(jax.devices(), False), P('x')))
d = jax.device_put(c, NamedSharding(flipped_mesh(jax.devices(), True), P('x')))
""")
    by_line = {s["line"]: (s["verdict"], s["detail"]) for s in _json("--sites", cwd=project)["site_list"]}
    assert by_line[19][0] == "same_devices"
    assert by_line[21][0] == "crossing" and by_line[21][1].startswith("RSH202 ")


REORDERS = """\
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

grid = Mesh(np.array(jax.devices()).reshape(2, 4), ('a', 'b'))
z = jax.device_put(np.ones((4, 8)), NamedSharding(grid, P('a', None)))
cols = Mesh(grid.devices[:, ::-1], ('a', 'b'))
u = jax.device_put(z, NamedSharding(cols, P('a', None)))
rows = Mesh(grid.devices[::-1], ('a', 'b'))
v = jax.device_put(z, NamedSharding(rows, P('a', None)))
"""


def test_a_reorder_that_moves_no_piece_is_resolved_and_one_that_moves_is_a_crossing(project: Path) -> None:
    write(project, "train.py", REORDERS)
    out = _json("--sites", cwd=project)
    by_line = {s["line"]: (s["verdict"], s["detail"]) for s in out["site_list"]}
    # reversed along 'b', which P('a', None) does not split: every device keeps its piece
    assert by_line[8] == ("same_pieces", "'z' is on mesh 'grid' (line 5, jax.devices()) and the target on "
                          "'cols' (line 7, grid.devices[:, ::-1]): the same devices in another order, in "
                          "which every device holds or gets the piece the same spec on the array's own "
                          "mesh gives it")
    # reversed along 'a': every device gets the other half
    assert by_line[10][0] == "crossing" and by_line[10][1].startswith("RSH202 jax.device_put moves 'z'")


def test_a_partial_of_device_put_is_a_site_where_it_is_called(project: Path) -> None:
    write(project, "partials.py", """\
import functools

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

mesh = Mesh(np.array(jax.devices()), ('x',))
half = Mesh(np.array(jax.devices()[:4]), ('x',))
x = jax.device_put(np.zeros(8), NamedSharding(mesh, P('x')))
put = functools.partial(jax.device_put, device=NamedSharding(half, P()))
put(x)
keep = functools.partial(jax.device_put, device=NamedSharding(mesh, P()))
tree = jax.tree.map(keep, {'a': x, 'b': x})


def feed(a):
    return put(a)
""")
    by_line = {s["line"]: (s["verdict"], s["detail"]) for s in _json("--sites", cwd=project)["site_list"]}
    assert sorted(by_line) == [9, 11, 13, 17]
    assert by_line[11][0] == "crossing" and by_line[11][1].startswith("RSH201 put moves 'x' from mesh 'mesh'")
    assert by_line[13][0] == "same_devices"
    assert by_line[17] == ("unresolved", "a parameter no call site feeds")


def test_a_kwargs_dict_no_call_fills_is_empty_where_the_call_is_run(project: Path) -> None:
    # The generated projects' idiom (tests/oracle/generator.py): a factory updates its
    # dict of meshes with **overrides, which the calls leave empty; another module reads it.
    write(project, "mypkg/__init__.py", "")
    write(project, "mypkg/meshes.py", """\
import jax
import numpy as np
from jax.sharding import Mesh


def build_meshes(**overrides):
    meshes = {"train": Mesh(np.array(jax.devices()), ('x',)), "rollout": Mesh(np.array(jax.devices()[:4]), ('x',))}
    meshes.update(overrides)
    return meshes


def train_mesh():
    return build_meshes()["train"]


TRAIN = train_mesh()
""")
    write(project, "main.py", """\
import jax
import numpy as np
from jax.sharding import NamedSharding, PartitionSpec as P
from mypkg.meshes import TRAIN, build_meshes

meshes = build_meshes()
w = jax.device_put(np.ones(8), NamedSharding(meshes["train"], P('x')))
same = jax.device_put(w, NamedSharding(TRAIN, P('x')))
moved = jax.device_put(w, NamedSharding(meshes["rollout"], P('x')))
other = jax.device_put(w, NamedSharding(build_meshes(train=meshes["rollout"])["train"], P('x')))
""")
    sites = _json("--sites", cwd=project)["site_list"]
    by_line = {s["line"]: (s["verdict"], s["detail"]) for s in sites if s["path"] == "main.py"}
    assert by_line[8][0] == "same_devices"
    assert by_line[9][0] == "crossing" and by_line[9][1].startswith("RSH201 ")
    # a keyword the call passes changes the dict in place: not followed
    assert by_line[10] == ("unresolved", "an element of a container the analysis does not know")


def test_a_default_taken_by_a_conditional_expression_is_decided_per_call(project: Path) -> None:
    write(project, "factory.py", """\
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P


def make_mesh(devices=None):
    devices = devices if devices is not None else jax.devices()
    return Mesh(np.array(devices), ('x',))


w = jax.device_put(np.ones(8), NamedSharding(make_mesh(), P('x')))
same = jax.device_put(w, NamedSharding(make_mesh(jax.devices()), P('x')))
half = jax.device_put(w, NamedSharding(make_mesh(jax.devices()[:4]), P('x')))
""")
    by_line = {s["line"]: (s["verdict"], s["detail"]) for s in _json("--sites", cwd=project)["site_list"]}
    assert by_line[12][0] == "same_devices"
    assert by_line[13][0] == "crossing" and by_line[13][1].startswith("RSH201 ")


def test_a_loop_over_a_generator_binds_what_it_yields(project: Path) -> None:
    write(project, "batches.py", """\
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

train = Mesh(np.array(jax.devices()), ('x',))
half = Mesh(np.array(jax.devices()[:4]), ('x',))


def batches(n):
    for i in range(n):
        yield jax.device_put(np.full(8, i), NamedSharding(train, P('x')))


def ended():
    yield np.ones(8)
    return jax.device_put(np.ones(8), NamedSharding(train, P('x')))


for b in batches(3):
    same = jax.device_put(b, NamedSharding(train, P()))
    moved = jax.device_put(b, NamedSharding(half, P('x')))
for e in ended():
    host = jax.device_put(e, NamedSharding(half, P('x')))
""")
    by_line = {s["line"]: (s["verdict"], s["detail"]) for s in _json("--sites", cwd=project)["site_list"]}
    assert by_line[20][0] == "same_devices"
    assert by_line[21][0] == "crossing" and by_line[21][1].startswith("RSH201 ")
    # what a generator returns ends its iteration: the loop binds what it yields
    assert by_line[23][0] == "host_data"


def test_two_calls_with_values_the_analysis_does_not_know_are_not_one_call(project: Path) -> None:
    # Both lists are unknown (ids read from the environment): the factory's result for
    # one is not its result for the other, so the meshes are never "the same devices".
    write(project, "memo.py", """\
import os

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P


def pick(ids):
    everything = jax.devices()
    return [everything[i] for i in ids]


def mesh_on(devices):
    return Mesh(np.array(devices), ('x',))


first = mesh_on(pick(range(int(os.environ.get('N', 8)))))
second = mesh_on(pick(range(int(os.environ.get('M', 4)))))
x = jax.device_put(np.zeros(8), NamedSharding(first, P('x')))
jax.device_put(x, NamedSharding(second, P('x')))
""")
    by_line = {s["line"]: (s["verdict"], s["detail"]) for s in _json("--sites", cwd=project)["site_list"]}
    assert by_line[20][0] == "unresolved"


def test_disjoint_halves_in_one_layout_are_a_crossing_rsh201_reports(project: Path) -> None:
    # Another device set on every topology. JAX tries its cross-host transfer for an
    # identical layout between process sets, which the CPU backend lacks (2 processes x 4
    # CPU devices: "The backend ... does not support cross-host device transfers"), so with
    # CPU among the target platforms RSH201 reports it; without CPU no rule claims a
    # failure, and coverage still says the placement changes.
    write(project, "halves.py", """\
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

devs = jax.devices()
first = Mesh(np.array(devs[:4]), ("x",))
second = Mesh(np.array(devs[4:]), ("x",))
x = jax.device_put(np.zeros(8), NamedSharding(first, P()))
y = jax.device_put(x, NamedSharding(second, P()))
""")
    assert run("check", "--isolated", "halves.py", cwd=project).returncode == 1
    out = _json("--sites", cwd=project)
    by_line = {s["line"]: (s["verdict"], s["detail"]) for s in out["site_list"]}
    assert by_line[9][0] == "crossing" and by_line[9][1].startswith("RSH201 jax.device_put moves 'x'")
    write(project, "pyproject.toml", "[tool.reshard-lint]\nplatforms = [\"tpu\", \"gpu\"]\n")
    assert run("check", "halves.py", cwd=project).returncode == 0
    out = _json("--sites", cwd=project)
    by_line = {s["line"]: (s["verdict"], s["detail"]) for s in out["site_list"]}
    assert by_line[9] == ("crossing", "'x' is on mesh 'first' (line 6, jax.devices()[:4]) and the target on "
                                      "'second' (line 7, jax.devices()[4:]): different device sets on every "
                                      "topology, which no rule reports here")


def test_a_computed_array_to_a_replicated_target_on_another_order_moves_nothing(project: Path) -> None:
    # jnp.where's result keeps a's mesh, in a layout the analysis does not track; a P()
    # target gives every device the whole array, as P() on the array's own mesh does.
    write(project, "replicated.py", """\
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

train = Mesh(np.array(jax.devices()), ("x",))
rollout = Mesh(np.array(jax.devices()[::-1]), ("x",))
a = jax.device_put(np.ones((8, 2)), NamedSharding(train, P("x")))
v = jnp.where(np.ones((8, 2)) > 0, a, 0.0)
b = jax.device_put(v, NamedSharding(rollout, P()))
c = jax.device_put(v, NamedSharding(rollout, P("x")))
""")
    out = _json("--sites", cwd=project)
    by_line = {s["line"]: (s["verdict"], s["detail"]) for s in out["site_list"]}
    assert by_line[10][0] == "same_pieces", by_line[10]
    assert by_line[11] == ("unresolved", "a computed array whose layout the analysis does not know, put on its "
                                         "devices in another order"), by_line[11]


def test_the_bounds_of_following_calls_say_which_bound(project: Path) -> None:
    # One function evaluated with nine different arguments (the analysis follows eight per
    # function), and one that calls itself.
    calls = "\n".join(f"m{i} = mesh_for({i})" for i in range(9))
    write(project, "bounds.py", f"""\
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P


def mesh_for(k):
    return Mesh(np.array(jax.devices()[k:k + 1]), ("x",))


def nest(n):
    return nest(n - 1) if n else Mesh(np.array(jax.devices()), ("x",))


{calls}
x = jax.device_put(np.zeros(8), NamedSharding(Mesh(np.array(jax.devices()), ("x",)), P()))
a = jax.device_put(x, NamedSharding(m8, P()))
b = jax.device_put(x, NamedSharding(nest(2), P()))
""")
    out = _json("--sites", cwd=project)
    by_line = {s["line"]: (s["verdict"], s["detail"], s["culprit"]) for s in out["site_list"]}
    assert by_line[24] == ("unresolved", "a result of a function called with more different arguments than "
                                         "the analysis follows", "mesh_for"), by_line[24]
    assert by_line[25] == ("unresolved", "a result of a function that calls itself", "nest"), by_line[25]
