"""The prefilter and ast gate only skip files that cannot have a finding."""

from __future__ import annotations

import ast

import pytest

from reshard_lint.stages.components import gate_by_units
from reshard_lint.engine.engine import Cancelled, Engine
from reshard_lint.stages.gate import decide, gate_facts
from reshard_lint.rules import all_rules

from .conftest import FIXTURES

ENGINE = Engine()
SOURCES = [(f"{r.code}-{i}", ex.code) for r in all_rules() for i, ex in enumerate(r.examples)] + [
    (p.name, p.read_text(encoding="utf-8")) for p in sorted(FIXTURES.glob("*.py"))]


@pytest.mark.parametrize("name,source", SOURCES, ids=[n for n, _ in SOURCES])
def test_gate_never_drops_a_finding(name: str, source: str) -> None:
    gated = ENGINE.lint_source(source, name)
    forced = ENGINE.lint_source(source, name, force=True)
    assert [d.sort_key for d in gated.diagnostics] == [d.sort_key for d in forced.diagnostics]
    if forced.diagnostics:
        assert gated.stage == "analysed"


@pytest.mark.parametrize("name,source", SOURCES, ids=[n for n, _ in SOURCES])
def test_units_give_the_whole_files_verdict(name: str, source: str) -> None:
    """A long file is gated from its units' facts (kept for its slicing), a short one from
    one walk: on every example and fixture, whatever its length, both say the same
    (scripts/gate_by_units.py checks real code)."""
    tree = ast.parse(source)
    assert gate_by_units(tree) == decide(gate_facts(tree))


def test_prefilter_skips_files_without_meshes() -> None:
    result = ENGINE.lint_source("import numpy as np\nx = np.arange(8)[::-1]\n", "plain.py")
    assert result.stage == "prefilter" and not result.diagnostics


def test_gate_skips_mesh_code_that_cannot_cross() -> None:
    src = (
        "import jax\nimport numpy as np\nfrom jax.sharding import Mesh, NamedSharding, PartitionSpec as P\n"
        "mesh = Mesh(np.array(jax.devices()), ('x',))\n"
        "s = NamedSharding(mesh, P('x'))\n"
    )
    result = ENGINE.lint_source(src, "one_mesh.py")
    assert result.stage == "gate" and not result.diagnostics


def test_a_cancelled_analysis_stops_between_stages() -> None:
    source = "import jax\nfrom jax.sharding import Mesh\nm = Mesh(jax.devices()[::-1], ('x',))\n"
    with pytest.raises(Cancelled):
        Engine().lint_source(source, "m.py", cancelled=lambda: True)
    assert [d.code for d in Engine().lint_source(source, "m.py", cancelled=lambda: False).diagnostics] == ["RSH102"]


_HEADER = ("import functools\nimport jax\nimport numpy as np\n"
           "from jax.sharding import NamedSharding, PartitionSpec as P\n")
# One mesh source in the file, evaluated once per call of the function holding it.
HELPERS = {
    "helper called twice": (
        "def make(shape):\n    return jax.make_mesh(shape, ('x', 'y'))\n"
        "x = jax.device_put(np.arange(8), NamedSharding(make((2, 4)), P('x')))\n"
        "y = jax.device_put(x, NamedSharding(make((4, 2)), P('x')))\n"),
    "helper through a partial": (
        "def make(shape, names):\n    return jax.make_mesh(shape, names)\n"
        "mk = functools.partial(make, names=('x', 'y'))\n"
        "x = jax.device_put(np.arange(8), NamedSharding(mk((2, 4)), P('x')))\n"
        "y = jax.device_put(x, NamedSharding(mk((4, 2)), P('x')))\n"),
    "helper defined inside a function": (
        "def run():\n    def make(shape):\n        return jax.make_mesh(shape, ('x', 'y'))\n"
        "    x = jax.device_put(np.arange(8), NamedSharding(make((2, 4)), P('x')))\n"
        "    return jax.device_put(x, NamedSharding(make((4, 2)), P('x')))\n"),
}


def test_a_mesh_and_the_devices_it_is_built_from_are_one_source() -> None:
    src = _HEADER + (
        "from jax.sharding import Mesh\n"
        "mesh = Mesh(np.array(jax.devices()), ('x',))\n"
        "x = jax.device_put(np.arange(8), NamedSharding(mesh, P('x')))\n")
    result = ENGINE.lint_source(src, "one_mesh.py")
    assert result.stage == "gate" and not result.diagnostics


@pytest.mark.parametrize("line", [
    "with jax.default_device(jax.devices('cpu')[0]):\n    e = jnp.ones(3)\n",
    "e = jax.jit(jnp.sin, out_shardings=jax.sharding.SingleDeviceSharding(jax.devices()[1]))(1.0)\n",
    "e = jnp.zeros(3, device=jax.devices()[1])\n",
])
def test_code_placed_on_a_global_device_reaches_the_engine(line: str) -> None:
    # RSH306 without device_put, a mesh or a sharding of one: the prefilter and the gate
    # let the placement through.
    src = "import jax\nimport jax.numpy as jnp\n\njax.distributed.initialize()\n" + line
    result = ENGINE.lint_source(src, "placed.py")
    assert [(d.code, d.line) for d in result.diagnostics] == [("RSH306", 5)]


def test_a_put_on_a_global_device_reaches_the_engine_without_a_mesh() -> None:
    # RSH306 needs no mesh: the prefilter must not ask for one.
    src = ("import jax\nimport numpy as np\n\njax.distributed.initialize()\n"
           "a = jax.device_put(np.arange(8.0), jax.local_devices()[0])\n"
           "print(jax.device_put(a, jax.devices()[-1]))\n")
    result = ENGINE.lint_source(src, "no_mesh.py")
    assert [(d.code, d.line) for d in result.diagnostics] == [("RSH306", 6)]


def test_host_data_put_on_a_global_device_reaches_the_engine() -> None:
    # RSH306 whatever the array: one device source, no mesh, no second source; the put is
    # the finding (in multi-process code: jax.process_index() is used, an import would not
    # say so), and the read of what it made is not a second one.
    src = ("import jax\nimport numpy as np\nprint('process', jax.process_index())\n\n\n"
           "def check():\n    try:\n        first = jax.devices()[0]\n    except IndexError:\n"
           "        raise SystemExit('no devices')\n"
           "    b = jax.device_put(np.arange(8.0), first)\n    return np.asarray(b + 1)\n")
    result = ENGINE.lint_source(src, "read.py")
    assert [(d.code, d.line) for d in result.diagnostics] == [("RSH306", 11)]
    assert "cannot read" in result.diagnostics[0].message


def test_a_mesh_of_devices_the_file_does_not_make_is_no_source() -> None:
    # Public API code: meshes of the caller's devices, unknown here (jax/_src/api.py).
    src = _HEADER + (
        "from jax.sharding import Mesh\n"
        "print(len(jax.devices()))\n"
        "def replicate(x, devices):\n"
        "    y = jax.device_put(x, NamedSharding(Mesh(np.array(devices), ('i',)), P()))\n"
        "    return jax.device_put(y, NamedSharding(Mesh(np.array(devices)[::-1], ('i',)), P()))\n")
    result = ENGINE.lint_source(src, "api.py")
    # A reordering written inside a mesh constructor is analysed: the devices may be what
    # another module's call passes (analysis/foreign.py); here no call does, and nothing fires.
    assert result.stage == "analysed" and not result.diagnostics


def test_a_mesh_of_devices_call_sites_pass_is_analysed() -> None:
    # Two device sources at the call sites: the analysis decides (here: the sites disagree,
    # so the parameter is unknown and nothing fires).
    src = _HEADER + (
        "from jax.sharding import Mesh\n"
        "def put(x, devices):\n"
        "    return jax.device_put(x, NamedSharding(Mesh(np.array(devices), ('i',)), P('i')))\n"
        "y = put(np.arange(8), jax.devices())\n"
        "z = put(y, jax.devices()[::-1])\n")
    result = ENGINE.lint_source(src, "put.py")
    assert result.stage == "analysed" and not result.diagnostics


def test_random_split_is_no_device_id() -> None:
    from reshard_lint.stages.gate import prefilter

    keys = "import jax\nk1, k2 = jax.random.split(jax.random.key(0))\nn = len(jax.devices())\n"
    assert not prefilter(keys)
    assert prefilter(keys + "d = jax.devices()[int(name.split(':')[1])]\n")


# One mesh each, and nothing a rule reads beside it: no finding is possible, so the
# file never reaches libcst (on jax's tests these were most of what the gate let through).
ONE_MESH = {
    "a decorator's mesh, with a helper the test passes around": (
        "from jax._src import test_util as jtu\n"
        "class T:\n"
        "    @jtu.with_explicit_mesh((2,), 'x')\n"
        "    def test(self, mesh):\n"
        "        x = jax.device_put(np.arange(8), P('x'))\n"
        "        def f(v):\n            return v * 2\n"
        "        return jax.jit(f)(x), jax.vmap(f)(x)\n"),
    "a mesh beside a helper called twice that builds none": (
        "def run():\n"
        "    mesh = jax.make_mesh((8,), ('x',))\n"
        "    def f(v):\n        return v + 1\n"
        "    x = jax.device_put(np.arange(8), NamedSharding(mesh, P('x')))\n"
        "    return f(x), f(f(x))\n"),
    "jnp.array of an array on the mesh": (
        "import jax.numpy as jnp\n"
        "mesh = jax.make_mesh((8,), ('x',))\n"
        "x = jax.device_put(np.arange(8), NamedSharding(mesh, P('x')))\n"
        "y = jnp.array(x, dtype=jnp.float32) + jnp.asarray(x)\n"),
    "one mesh set as the context mesh": (
        "mesh = jax.make_mesh((8,), ('x',))\n"
        "with jax.set_mesh(mesh):\n"
        "    x = jax.device_put(np.arange(8), P('x'))\n"
        "    y = jax.jit(lambda v: v * 2)(x)\n"),
}


@pytest.mark.parametrize("name", sorted(ONE_MESH))
def test_one_mesh_stops_at_the_gate(name: str) -> None:
    source = _HEADER + ONE_MESH[name]
    result = ENGINE.lint_source(source, "one_mesh.py")
    assert result.stage == "gate" and not result.diagnostics
    assert not ENGINE.lint_source(source, "one_mesh.py", force=True).diagnostics


# Their look-alikes with a finding get through: a second mesh in the decorated test, a
# fetch of a sharded array with NumPy, an array on one device under the context mesh.
SECOND_SOURCE = {
    "a second mesh under the decorator": (
        "from jax._src import test_util as jtu\n"
        "class T:\n"
        "    @jtu.with_explicit_mesh((8,), 'x')\n"
        "    def test(self, mesh):\n"
        "        x = jax.device_put(np.arange(8), P('x'))\n"
        "        small = jtu.create_mesh((2,), ('x',))\n"
        "        return jax.device_put(x, NamedSharding(small, P()))\n", ["RSH201"]),
    "np.array of an array on the mesh": (
        "jax.distributed.initialize()\n"
        "mesh = jax.make_mesh((jax.device_count(),), ('x',))\n"
        "x = jax.device_put(np.arange(8), NamedSharding(mesh, P('x')))\n"
        "y = np.array(x)\n", ["RSH305"]),
    "an array on one device under the context mesh": (
        "mesh = jax.make_mesh((8,), ('x',))\n"
        "one = jax.device_put(np.arange(8), jax.devices()[0])\n"
        "with jax.set_mesh(mesh):\n"
        "    y = one + 1\n", ["RSH203"]),
    "a shard_map's result into a shard_map over other devices": (
        "mesh = jax.make_mesh((8,), ('x',))\n"
        "half = jax.make_mesh((4,), ('x',))\n"
        "@functools.partial(jax.shard_map, mesh=mesh, in_specs=P('x'), out_specs=P('x'))\n"
        "def double(v):\n    return v * 2\n"
        "y = double(np.arange(8.0))\n"
        "z = jax.shard_map(lambda v: v, mesh=half, in_specs=P('x'), out_specs=P('x'))(y[:4])\n", ["RSH203"]),
}


# Both kinds get through to the analysis and keep their finding: a helper called twice
# (two meshes from one source), and a second source beside one mesh.
GETS_THROUGH = {**{name: (source, ["RSH202"]) for name, source in HELPERS.items()}, **SECOND_SOURCE}


@pytest.mark.parametrize("name", sorted(GETS_THROUGH))
def test_a_finding_gets_through_the_gate(name: str) -> None:
    source, codes = GETS_THROUGH[name]
    result = ENGINE.lint_source(_HEADER + source, "two.py")
    assert result.stage == "analysed"
    assert [d.code for d in result.diagnostics] == codes


def test_a_source_is_counted_where_it_is_not_where_the_last_call_is() -> None:
    """The count of a single source follows its own function: here one called from
    ``main``, which is handed to a runner (so it may run twice), while the file's last
    call is at module level (found in maxtext's generate_param_only_checkpoint.py, where
    the units' verdict and the whole file's differed)."""
    source = _HEADER + (
        "from absl import app\n"
        "def build():\n"
        "    mesh = jax.make_mesh((8,), ('x',))\n"
        "    return jax.device_put(np.arange(8), NamedSharding(mesh, P('x')))\n"
        "def main(argv):\n    build()\n"
        "if __name__ == '__main__':\n    app.run(main)\n")
    tree = ast.parse(source)
    assert decide(gate_facts(tree)) is True
    assert gate_by_units(tree) is True


def test_two_meshes_of_one_device_source_reach_the_engine() -> None:
    # One jax.devices() call bound to a name, two meshes made from it (a slice, or a
    # filter of it): the move between them is RSH201; the gate once dropped such files.
    src = _HEADER + (
        "from jax.sharding import Mesh\n"
        "devs = jax.devices()\n"
        "full = Mesh(np.array(devs), ('x',))\n"
        "x = jax.device_put(np.arange(8.0), NamedSharding(full, P('x')))\n"
        "half = Mesh(np.array(devs[:4]), ('x',))\n"
        "y = jax.device_put(x, NamedSharding(half, P('x')))\n")
    result = ENGINE.lint_source(src, "one_source.py")
    assert [d.code for d in result.diagnostics] == ["RSH201"]
    # One mesh per turn of a loop over one source: two meshes too.
    looped = _HEADER + (
        "from jax.sharding import Mesh\n"
        "devs = jax.devices()\n"
        "meshes = [Mesh(np.array(devs[i:i + 4]), ('x',)) for i in (0, 2)]\n"
        "x = jax.device_put(np.arange(8.0), NamedSharding(meshes[0], P('x')))\n"
        "y = jax.device_put(x, NamedSharding(meshes[1], P('x')))\n")
    assert [d.code for d in ENGINE.lint_source(looped, "looped.py").diagnostics] == ["RSH201"]


def test_a_builder_shaped_by_the_local_count_reaches_the_engine_without_a_mesh() -> None:
    # RSH307 needs no Mesh, NamedSharding or device_put: create_device_mesh is a gate word.
    src = ("import jax\nfrom jax.experimental import mesh_utils\n\njax.distributed.initialize()\n"
           "grid = mesh_utils.create_device_mesh((jax.local_device_count(),))\n")
    result = ENGINE.lint_source(src, "local_count.py")
    assert [(d.code, d.line) for d in result.diagnostics] == [("RSH307", 5)]


def test_an_untiled_allgather_of_a_global_array_reaches_the_engine() -> None:
    # RSH308: an array with a known mesh meets one collective (a one-mesh use).
    src = ("import jax\nimport numpy as np\nfrom jax.experimental import multihost_utils\n"
           "from jax.sharding import NamedSharding, PartitionSpec as P\n\n"
           "mesh = jax.make_mesh((jax.device_count(),), ('x',))\n"
           "x = jax.device_put(np.arange(8.0), NamedSharding(mesh, P('x')))\n"
           "print(multihost_utils.process_allgather(x))\n")
    result = ENGINE.lint_source(src, "gather.py")
    assert [(d.code, d.line) for d in result.diagnostics] == [("RSH308", 8)]
