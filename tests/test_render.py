"""How messages write meshes and specs (analysis/render.py), as a user reads them.

An unnamed mesh is its constructor, shortened and complete: the device expression as
written without a wrapping ``np.array(...)``, the axis names as a tuple literal, then its
line. A named mesh keeps its name and its devices. A spec is ``P(...)`` on one line,
however the file spells PartitionSpec and however many lines it spans.
"""

from __future__ import annotations

import ast

from reshard_lint.analysis.render import spec_label
from reshard_lint.analysis.values import SpecVal
from reshard_lint.core.diagnostic import Diagnostic
from reshard_lint.engine.engine import Engine

ENGINE = Engine()
HEAD = """\
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

mesh = Mesh(np.array(jax.devices()), ('x',))
x = jax.device_put(np.arange(8.0), NamedSharding(mesh, P('x')))
"""
SOURCE = "from mesh 'mesh' (line 5, jax.devices())"


def _one(code: str, rule: str) -> Diagnostic:
    found = [d for d in ENGINE.lint_source(code, "example.py").diagnostics if d.code == rule]
    assert len(found) == 1, found
    return found[0]


def test_an_unnamed_mesh_is_its_constructor_without_np_array_and_its_line() -> None:
    d = _one(HEAD + "y = jax.device_put(x, NamedSharding(Mesh(np.array(jax.devices())[::-1], ('x',)), P('x')))\n",
             "RSH202")
    assert d.message.startswith(
        f"jax.device_put moves 'x' {SOURCE} to Mesh(jax.devices()[::-1], ('x',)) (line 7), the same devices "
        "in another order:")
    assert [r.message for r in d.related] == ["mesh 'mesh' is built here",
                                              "mesh Mesh(jax.devices()[::-1], ('x',)) is built here"]
    rsh102 = _one(HEAD + "y = jax.device_put(x, NamedSharding(Mesh(np.asarray(jax.devices())[::-1], ('x',)), P('x')))\n",
                  "RSH102")
    assert rsh102.message.startswith(
        "mesh Mesh(jax.devices()[::-1], ('x',)) (line 7) is built from a reordered device list (jax.devices()[::-1]):")


def test_an_unnamed_mesh_on_a_named_list_says_what_the_list_holds() -> None:
    code = HEAD + 'devs = jax.devices()[:4]\ny = jax.device_put(x, NamedSharding(Mesh(devs, "x"), P("x")))\n'
    assert f"{SOURCE} to Mesh(devs, ('x',)) (line 8, jax.devices()[:4]), a different device set" in \
        _one(code, "RSH201").message


def test_a_device_grid_keeps_its_np_array_and_a_builder_its_call() -> None:
    grid = _one(HEAD + "y = jax.device_put(x, NamedSharding(Mesh(np.array(jax.devices()[::-1]).reshape(2, 4), "
                       "('a', 'b')), P(('a', 'b'))))\n", "RSH202")
    assert "to Mesh(np.array(jax.devices()[::-1]).reshape(2, 4), ('a', 'b')) (line 7)," in grid.message
    made = _one(HEAD + 'y = jax.device_put(x, NamedSharding(jax.make_mesh((8,), ("x",)), P("x")))\n', "RSH202")
    assert f"{SOURCE} to jax.make_mesh((8,), ('x',)) (line 7), the same devices in another order on " \
        "multi-host TPU ('mesh' orders devices by enumeration (process by process), jax.make_mesh((8,), ('x',)) " \
        "by physical position for shape (8,)):" in made.message


def test_a_builder_given_a_reordered_list_says_cpu_keeps_that_order() -> None:
    # CPU's create_device_mesh reshapes the list it is given; GPU sorts by id, TPU by position.
    made = _one(HEAD + 'm = jax.make_mesh((8,), ("x",))\nz = jax.device_put(np.arange(8.0), NamedSharding(m, P("x")))\n'
                       'y = jax.device_put(z, NamedSharding(jax.make_mesh((8,), ("x",), '
                       'devices=jax.devices()[::-1]), P("x")))\n', "RSH202")
    assert "the same devices in another order on CPU ('m' orders devices by enumeration, " \
        "jax.make_mesh((8,), ('x',), devices=jax.devices()[::-1]) by the order of the list it is " \
        "given (jax.devices()[::-1])):" in made.message, made.message


def test_a_named_mesh_keeps_its_name_and_devices() -> None:
    code = HEAD + "half = Mesh(np.array(jax.devices()[:4]), ('x',))\ny = jax.device_put(x, NamedSharding(half, P('x')))\n"
    assert f"{SOURCE} to 'half' (line 7, jax.devices()[:4])," in _one(code, "RSH201").message


def test_a_spec_over_several_lines_is_one_line_in_the_p_spelling() -> None:
    code = HEAD + """half = Mesh(np.array(jax.devices()[:4]), ('x',))
y = jax.device_put(x, NamedSharding(half, jax.sharding.PartitionSpec(
    'x',  # rows
)))
"""
    message = _one(code, "RSH201").message
    assert "build the target on the array's own mesh: NamedSharding(x.sharding.mesh, P('x')), or move" in message
    assert "PartitionSpec" not in message and "#" not in message


def test_spec_entries_are_normalized_and_an_empty_spec_is_p() -> None:
    code = HEAD.replace("PartitionSpec as P", "PartitionSpec") + """half = Mesh(np.array(jax.devices()[:4]), ('x',))
y = jax.device_put(x, NamedSharding(half, PartitionSpec(("x", "y"), None,
                                                        "z")))
z = jax.device_put(x, NamedSharding(half, PartitionSpec()))
"""
    code = code.replace("P('x')", "PartitionSpec('x')")
    found = [d.message for d in ENGINE.lint_source(code, "example.py").diagnostics if d.code == "RSH201"]
    assert len(found) == 2
    # Axes the array's own mesh lacks: the hint does not write the spec (helpers/crossing.py).
    assert found[0].endswith("NamedSharding(x.sharding.mesh, spec), or move the data between device groups "
                             "through the host (jax.make_array_from_process_local_data)")
    assert "NamedSharding(x.sharding.mesh, P()), or move" in found[1]


def test_a_fetched_arrays_spec_is_written_in_the_p_spelling() -> None:
    code = """\
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

jax.distributed.initialize()
mesh = Mesh(np.array(jax.devices()), ("x",))
y = jax.device_put(np.arange(16.0), NamedSharding(mesh, PartitionSpec(
    "x",
)))
print(jax.device_get(y))
"""
    assert _one(code, "RSH305").message.startswith(
        "jax.device_get fetches 'y', sharded P('x') on mesh 'mesh' (line 6, jax.devices()), whose pieces")


def test_a_spec_that_is_no_literal_is_its_code_on_one_line() -> None:
    node = ast.parse("jax.sharding.PartitionSpec(\n    *axes,  # all\n)", mode="eval").body
    assert spec_label(SpecVal(node, "")) == "jax.sharding.PartitionSpec(*axes)"
    node = ast.parse('P(\n    "a",\n    None,\n    ("b", "c"),\n)', mode="eval").body
    assert spec_label(SpecVal(node, "")) == "P('a', None, ('b', 'c'))"
