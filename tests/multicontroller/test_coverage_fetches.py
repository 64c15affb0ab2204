"""What `reshard-lint coverage` resolves of fetches and default-device scopes holds under real
multi-controller JAX (two processes of four CPU devices on loopback): every read it calls
`same_devices` (the value whole on every process that reads it) reads on every process,
and the default device it calls this process's own is usable there."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from .harness import run_batch

pytestmark = [pytest.mark.multicontroller, pytest.mark.xdist_group("multicontroller-test_coverage_fetches")]

ROOT = Path(__file__).resolve().parents[2]

SNIPPET = """\
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

mesh = Mesh(np.array(jax.devices()).reshape(2, 4), ('data', 'model'))
local = Mesh(np.array(jax.local_devices()), ('x',))
r = jax.device_put(np.arange(16.0), NamedSharding(mesh, P()))
inner = jax.device_put(np.arange(16.0), NamedSharding(mesh, P('model')))
mine = jax.device_put(np.arange(16.0), NamedSharding(local, P('x')))
print("read", jax.device_get(r).sum(), np.asarray(inner).sum(), sum(mine.tolist()))
with jax.default_device(jax.local_devices()[0]):
    w = jnp.zeros(3) + 1
print("made", float(w.sum()), [d.id for d in w.devices()] == [jax.local_devices()[0].id])
"""


def test_the_resolved_fetches_and_default_device_read_on_every_process(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\nversion = '0'\n")
    (tmp_path / "snippet.py").write_text(SNIPPET)
    cov = subprocess.run([sys.executable, "-m", "reshard_lint", "coverage", "--isolated", "--format", "json",
                          "--sites"], cwd=tmp_path, capture_output=True, text=True, timeout=300,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert cov.returncode == 0, cov.stdout + cov.stderr
    claimed = {(s["line"], s["col"]): (s["kind"], s["verdict"]) for s in json.loads(cov.stdout)["site_list"]
               if s["kind"] in ("fetch", "default_device")}
    assert claimed == {
        (11, 15): ("fetch", "same_devices"),  # device_get(r), replicated over both processes
        (11, 40): ("fetch", "same_devices"),  # np.asarray(inner), split only inside each process
        (11, 69): ("fetch", "same_devices"),  # mine.tolist(), on this process's devices
        (12, 6): ("default_device", "same_devices"),
    }
    (result,) = run_batch([SNIPPET], processes=2, devices=4)
    assert result.all_ok(), result.details()
    for p in result.processes:
        assert "read 120.0 120.0 120.0" in p.stdout, result.details()
        assert "made 3.0 True" in p.stdout, result.details()
