"""Which spellings of ``jnp.asarray`` / ``jnp.array`` commit their result to the context mesh
under ``jax.sharding.set_mesh`` (jax 0.10.2, 1 process of 8 CPU devices and 2 processes of 4
on loopback), and the analysis following it (analysis/models/host.py, _may_be_zero_copy).

Observed: a NumPy array already of the dtype asked for (``jnp.asarray(f32, dtype=jnp.float32)``,
the dtype positional or as a string or NumPy type, ``jnp.array(f32, dtype=jnp.float32,
copy=False)``) comes back without a copy, uncommitted on the process's own first device; every
other spelling (no dtype, another dtype, a list, a scalar, ``copy=True``, ``jnp.array`` without
``copy=False``) is committed to the context mesh. So ``device_put`` of the first kind onto a
``jax.local_devices()`` mesh runs on every process, while the second kind is a global array
that cannot go there (RSH303).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from reshard_lint.rules import expected_markers

from ..conftest import FIXTURES
from .harness import run_batch

pytestmark = [pytest.mark.multicontroller, pytest.mark.xdist_group("multicontroller-test_context_asarray")]

SPELLINGS = """
import jax, jax.numpy as jnp, numpy as np
from jax.sharding import NamedSharding
n = len(jax.devices())
mesh = jax.make_mesh((n,), ("x",))
f32, f64, i32 = np.arange(8.0, dtype=np.float32), np.arange(8.0), np.arange(8, dtype=np.int32)
cases = {
    "asarray(f32)": lambda: jnp.asarray(f32),
    "asarray(f32, dtype=jnp.float32)": lambda: jnp.asarray(f32, dtype=jnp.float32),
    "asarray(f32, jnp.float32)": lambda: jnp.asarray(f32, jnp.float32),
    "asarray(f32, dtype='float32')": lambda: jnp.asarray(f32, dtype="float32"),
    "asarray(f32, dtype=np.float32)": lambda: jnp.asarray(f32, dtype=np.float32),
    "asarray(i32, dtype=jnp.int32)": lambda: jnp.asarray(i32, dtype=jnp.int32),
    "asarray(f32, dtype=jnp.bfloat16)": lambda: jnp.asarray(f32, dtype=jnp.bfloat16),
    "asarray(f64, dtype=jnp.float32)": lambda: jnp.asarray(f64, dtype=jnp.float32),
    "asarray(f32, dtype=jnp.float32, copy=True)": lambda: jnp.asarray(f32, dtype=jnp.float32, copy=True),
    "asarray(f32, dtype=None)": lambda: jnp.asarray(f32, dtype=None),
    "asarray([1.0, 2.0], dtype=jnp.float32)": lambda: jnp.asarray([1.0, 2.0], dtype=jnp.float32),
    "asarray(3.0, dtype=jnp.float32)": lambda: jnp.asarray(3.0, dtype=jnp.float32),
    "array(f32)": lambda: jnp.array(f32),
    "array(f32, dtype=jnp.float32)": lambda: jnp.array(f32, dtype=jnp.float32),
    "array(f32, copy=False)": lambda: jnp.array(f32, copy=False),
    "array(f32, dtype=jnp.float32, copy=False)": lambda: jnp.array(f32, dtype=jnp.float32, copy=False),
}
out = {}
with jax.sharding.set_mesh(mesh):
    for name, make in cases.items():
        a = make()
        on_mesh = isinstance(a.sharding, NamedSharding) and a.sharding.mesh.devices.size == n
        own = not a.committed and [d.id for d in a.devices()] == [jax.local_devices()[0].id]
        out[name] = "mesh" if a.committed and on_mesh else "own" if own else repr(a.sharding)
print("SPELLINGS " + json.dumps(out))
""".replace("import jax,", "import json, jax,")

# Spellings whose result stays uncommitted on the process's own device; the rest: the mesh.
OWN_DEVICE = {"asarray(f32, dtype=jnp.float32)", "asarray(f32, jnp.float32)", "asarray(f32, dtype='float32')",
              "asarray(f32, dtype=np.float32)", "asarray(i32, dtype=jnp.int32)",
              "array(f32, dtype=jnp.float32, copy=False)"}

# The user's code: a put onto this process's devices, of each kind.
PROGRAM = """\
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

jax.distributed.initialize()
mesh = Mesh(np.array(jax.devices()), ('x',))
local = Mesh(np.array(jax.local_devices()), ('x',))
host = np.ones((8,), np.float32)
with jax.sharding.set_mesh(mesh):
    y = jax.device_put(jnp.asarray(host, dtype=jnp.float32), NamedSharding(local, P()))
    w = jax.device_put(jnp.array(host, dtype=jnp.float32, copy=False), NamedSharding(local, P()))
    print("SAME-DTYPE ok", y.shape, w.shape)
    z = jax.device_put(jnp.asarray(host), NamedSharding(local, P()))
    print("NO-DTYPE ok")
"""
FAILING_LINE = 14


def test_which_spellings_commit_to_the_context_mesh() -> None:
    multi, = run_batch([SPELLINGS], processes=2, devices=4, timeout=120)
    single, = run_batch([SPELLINGS], mode="single", processes=2, devices=4, timeout=120)
    for result in (multi, single):
        assert result.all_ok(), result.details()
        for p in result.processes:
            line = next(x for x in p.stdout.splitlines() if x.startswith("SPELLINGS "))
            seen = json.loads(line[len("SPELLINGS "):])
            assert {k for k, v in seen.items() if v == "own"} == OWN_DEVICE, (result.mode, p.process_id, seen)
            assert {k for k, v in seen.items() if v == "mesh"} == set(seen) - OWN_DEVICE, seen


def _check(text: str, tmp_path) -> list[tuple[int, str]]:
    path = tmp_path / "program.py"
    path.write_text(text)
    r = subprocess.run([sys.executable, "-m", "reshard_lint", "check", "--format", "json", "--isolated",
                        "--no-cache", str(path)], capture_output=True, text=True, timeout=300)
    return [(d["location"]["row"], d["code"]) for d in json.loads(r.stdout)]


def test_the_analysis_follows_what_jax_does(tmp_path) -> None:
    # Under 2 processes: the same-dtype puts run on every process, the put without a dtype raises.
    multi, = run_batch([PROGRAM], processes=2, devices=4, timeout=120)
    for p in multi.processes:
        assert "SAME-DTYPE ok (8,) (8,)" in p.stdout, multi.details()
        assert "NO-DTYPE ok" not in p.stdout
        assert p.status == "error" and f"line {FAILING_LINE}" in p.error_text + p.stderr, multi.details()
    # The analysis: RSH303 at the put that fails, nothing at the two that run.
    assert _check(PROGRAM, tmp_path) == [(FAILING_LINE, "RSH303")]


# The fixture's puts, each run on its own under the fixture's set_mesh on 2 processes: the
# lines it marks RSH303 raise on every process, the others run.
FIXTURE = FIXTURES / "context_asarray.py"


def _fixture_snippet(text: str) -> str:
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("with jax.sharding.set_mesh"))
    puts = {i + 1: line.strip().split("  #")[0] for i, line in enumerate(lines)
            if i > start and "jax.device_put(" in line}
    return "\n".join(lines[:start]) + f"""
import json
outcome = {{}}
with jax.sharding.set_mesh(mesh):
    for line, code in {puts!r}.items():
        try:
            exec(code)
            outcome[line] = "ok"
        except Exception as e:
            outcome[line] = type(e).__name__ + ": " + str(e)[:80]
print("FIXTURE " + json.dumps(outcome))
"""


def test_the_fixtures_markers_are_what_two_processes_do() -> None:
    text = FIXTURE.read_text(encoding="utf-8")
    marked = {line for line, _, code in expected_markers(text) if code == "RSH303"}
    multi, = run_batch([_fixture_snippet(text)], processes=2, devices=4, timeout=120)
    assert multi.all_ok(), multi.details()
    for p in multi.processes:
        seen = json.loads(next(x for x in p.stdout.splitlines() if x.startswith("FIXTURE "))[8:])
        assert {int(k) for k, v in seen.items() if v != "ok"} == marked, seen
        assert len(seen) == 10 and len(marked) == 6
