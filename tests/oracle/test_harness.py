"""The oracle's harness records what JAX does at each transfer site."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from .compare import processes, relation

# the children import jax; this process does not
pytestmark = pytest.mark.skipif(importlib.util.find_spec("jax") is None, reason="jax is a test dependency")

PROGRAM = """\
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

mesh = Mesh(np.array(jax.devices()), ('x',))
rev = Mesh(np.array(jax.devices()[::-1]), ('x',))
half = Mesh(np.array(jax.devices()[:4]), ('x',))
x = jax.device_put(np.arange(8.0), NamedSharding(mesh, P('x')))
y = jax.device_put(x, NamedSharding(rev, P('x')))
z = jax.device_put(
    x, NamedSharding(half, P('x')))
step = jax.jit(lambda a: a + 1, in_shardings=NamedSharding(rev, P('x')))
w = step(x)
w = step(x)
v = jax.lax.with_sharding_constraint(z, NamedSharding(mesh, P()))
h = np.asarray(y)
"""


def test_placements_lines_and_repairs(tmp_path: Path, oracle_run) -> None:
    prog = tmp_path / "prog.py"
    prog.write_text(PROGRAM)
    res = oracle_run(prog)["cpu"][str(prog)]
    assert res["status"] == "ok", res["error"]
    sites = {(s["line"], s["api"]): s for s in res["sites"]}
    put = sites[(9, "device_put")]
    assert put["col"] == 5
    p = put["pairs"][0]
    assert p["src"]["devices"] == list(range(8)) and p["dst"]["devices"] == list(range(7, -1, -1))
    assert relation(p["src"], p["dst"]) == "reordered"
    assert p["src"]["indices"]["0"] == [[0, 1, 1]] and p["dst"]["indices"]["0"] == [[7, 8, 1]]
    sub = sites[(10, "device_put")]["pairs"][0]  # a call over two lines: its first line
    assert relation(sub["src"], sub["dst"]) == "different"
    assert processes(sub["dst"]["devices"], 2) == {0} and processes(sub["src"]["devices"], 4) == {0, 1, 2, 3}
    assert sub["dst"]["owners"] == {"2": [0], "4": [0, 1]} and sub["src"]["owners"]["2"] == [0, 1]
    # the second call of a jit whose in_shardings reorder the argument would crash the
    # process: the harness moved the argument first, and recorded both calls
    jits = [s for s in res["sites"] if s["api"] == "jit"]
    assert [s["line"] for s in jits] == [13, 14] and all(s.get("repaired") for s in jits)
    con = sites[(15, "with_sharding_constraint")]
    assert "incompatible devices" in con["error"] and con["repaired"]
    assert sites[(16, "np.asarray")]["pairs"][0]["src"]["devices"] == list(range(7, -1, -1))


def test_tpu_builder_orders_and_simulated_processes(tmp_path: Path) -> None:
    from .run import Program, run_concrete

    prog = tmp_path / "made.py"
    prog.write_text("import jax, numpy as np\n"
                    "from jax.sharding import NamedSharding, PartitionSpec as P\n"
                    "m = jax.make_mesh((8,), ('x',))\n"
                    "l = jax.sharding.Mesh(np.array(jax.local_devices()), ('x',))\n"
                    "a = jax.device_put(np.arange(8.0), NamedSharding(m, P('x')))\n"
                    "b = jax.device_put(np.arange(8.0), NamedSharding(l, P('x')))\n")
    modes = ("cpu", "tpu-v4", "gpu-scattered", "proc1of2")
    p = Program("made", str(tmp_path), "made.py", platforms=modes)
    out = run_concrete([p], workers=1, platforms=modes)
    order = {plat: out[plat]["made"]["sites"][0]["pairs"][0]["dst"]["devices"] for plat in out}
    assert order["cpu"] == list(range(8))
    # JAX's TPU ring for 8 v4 chips (2x2x2), not enumeration order
    assert order["tpu-v4"] != list(range(8)) and sorted(order["tpu-v4"]) == list(range(8))
    # GPU sorts by id; with ids numbered across processes (k -> (k % 4) * 2 + k // 4)
    assert order["gpu-scattered"] == [0, 4, 1, 5, 2, 6, 3, 7]
    assert out["proc1of2"]["made"]["sites"][1]["pairs"][0]["dst"]["devices"] == [4, 5, 6, 7]
