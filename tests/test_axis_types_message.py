"""RSH203 between a ``Mesh`` (Auto axes) and a ``jax.make_mesh`` mesh (Explicit axes):
the message says what JAX objects to, and the fix it gives runs.

Checked against real JAX (0.10.2) on 8 CPU devices: the program of
tests/oracle/programs/auto_and_explicit_axes.py raises "Mesh for all inputs should be
equal" on CPU, where the two meshes hold the same devices in the same order; the fixes the
message names run.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from reshard_lint.engine.engine import Engine

ROOT = Path(__file__).resolve().parent.parent
PROGRAM = ROOT / "tests" / "oracle" / "programs" / "auto_and_explicit_axes.py"
ENGINE = Engine()
JAX_PRELUDE = "import jax\njax.config.update('jax_num_cpu_devices', 8)\n"


def run_with_jax(code: str) -> subprocess.CompletedProcess[str]:
    """``code`` in a new interpreter with JAX on 8 CPU devices."""
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    env.pop("XLA_FLAGS", None)
    return subprocess.run([sys.executable, "-c", JAX_PRELUDE + code], capture_output=True, text=True,
                          env=env, timeout=300)


def _rsh203(code: str) -> str:
    found = [d for d in ENGINE.lint_source(code, "example.py").diagnostics if d.code == "RSH203"]
    assert len(found) == 1, found
    return found[0].message


def test_the_message_names_the_axis_types_and_jaxs_error() -> None:
    assert _rsh203(PROGRAM.read_text(encoding="utf-8")) == (
        "'a + b' combines 'a' with an array from mesh 'mesh' (line 11, jax.devices()) to 'natural' "
        "(line 12, jax.make_mesh((8,), ('x',))), meshes whose axis types differ ('mesh' has Auto axes, "
        "the default of Mesh; 'natural' has Explicit axes, the default of jax.make_mesh): JAX raises "
        "\"ValueError: Mesh for all inputs should be equal\" on every platform, before it compares devices; "
        "build both meshes the same way (both with jax.make_mesh, or both Mesh over one device array); "
        "axis_types=(AxisType.Auto,) on 'natural' makes the axis types agree, but the device orders still "
        "differ on multi-host TPU ('mesh' orders devices by enumeration (process by process), 'natural' by "
        "physical position for shape (8,))")


def test_jax_raises_what_the_message_says_and_its_fixes_run() -> None:
    program = PROGRAM.read_text(encoding="utf-8")
    proc = run_with_jax(program)
    assert proc.returncode != 0
    assert "ValueError: Mesh for all inputs should be equal" in proc.stderr, proc.stderr[-2000:]
    natural = "natural = jax.make_mesh((8,), ('x',))"
    assert natural in program
    # The axis types made to agree: enough on CPU; the linter still reports the device
    # orders, which differ on multi-host TPU, as the message said.
    agreed = program.replace(natural, "from jax.sharding import AxisType\n"
                                      "natural = jax.make_mesh((8,), ('x',), axis_types=(AxisType.Auto,))")
    message = _rsh203(agreed)
    assert "axis types" not in message and "another order on multi-host TPU" in message
    # Both meshes built the same way: nothing left to report.
    same_way = program.replace("mesh = Mesh(np.array(jax.devices()), ('x',))", "mesh = jax.make_mesh((8,), ('x',))")
    assert "RSH203" not in {d.code for d in ENGINE.lint_source(same_way, "fixed.py").diagnostics}
    for fixed in (agreed, same_way):
        proc = run_with_jax(fixed)
        assert proc.returncode == 0, proc.stderr[-2000:]


def test_devices_in_another_order_everywhere_raise_the_axis_types_error_first() -> None:
    code = """\
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

rev = Mesh(np.array(jax.devices()[::-1]), ('x',))
natural = jax.make_mesh((8,), ('x',))
a = jax.device_put(np.arange(8.0), NamedSharding(rev, P('x')))
b = jax.device_put(np.arange(8.0), NamedSharding(natural, P('x')))
print(a + b)
"""
    message = _rsh203(code)
    assert "meshes whose axis types differ ('rev' has Auto axes, the default of Mesh; 'natural' has Explicit " \
           "axes, the default of jax.make_mesh): JAX raises \"ValueError: Mesh for all inputs should be equal\"" \
           in message
    # The devices differ on every platform: the axis types alone are not the fix.
    assert message.endswith("jax.device_put('a' onto the target's sharding) first, or use one mesh for both "
                            "(axis_types=(AxisType.Auto,) on 'natural' alone leaves the devices different)")
    proc = run_with_jax(code)
    assert "ValueError: Mesh for all inputs should be equal" in proc.stderr, proc.stderr[-2000:]


def test_axis_types_written_out_or_the_same_keep_the_device_message() -> None:
    both_explicit = """\
import jax
import numpy as np
from jax.sharding import AxisType, Mesh, NamedSharding, PartitionSpec as P

rev = Mesh(np.array(jax.devices()[::-1]), ('x',), axis_types=(AxisType.Explicit,))
natural = jax.make_mesh((8,), ('x',))
a = jax.device_put(np.arange(8.0), NamedSharding(rev, P('x')))
b = jax.device_put(np.arange(8.0), NamedSharding(natural, P('x')))
print(a + b)
"""
    message = _rsh203(both_explicit)
    assert "axis types" not in message
    assert "JAX raises \"ValueError: Received incompatible devices for jitted computation\"" in message
    proc = run_with_jax(both_explicit)
    assert "Received incompatible devices for jitted computation" in proc.stderr, proc.stderr[-2000:]
    # Written out per axis, and as a product: Auto on both sides.
    for written in ("axis_types=(AxisType.Auto,)", "axis_types=(AxisType.Auto,) * 1"):
        auto = both_explicit.replace("natural = jax.make_mesh((8,), ('x',))",
                                     f"natural = jax.make_mesh((8,), ('x',), {written})")
        auto = auto.replace("axis_types=(AxisType.Explicit,)", "axis_types=(AxisType.Auto,)")
        assert "axis types" not in _rsh203(auto)
