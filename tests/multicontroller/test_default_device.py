"""An uncommitted array lives on the process's own first device under real multi-controller
JAX (two processes on loopback): every process reads it. Strict mode's fetch check relies on
it when it plays another process than 0 (runtime/_fetch.py: uncommitted arrays are readable;
tests/runtime/test_strict_pod.py)."""

from __future__ import annotations

import pytest

from .harness import run_batch

pytestmark = [pytest.mark.multicontroller, pytest.mark.xdist_group("multicontroller-test_default_device")]

SNIPPET = """
import jax, jax.numpy as jnp, numpy as np
u = jnp.arange(4.0) * 2
print("on", [d.id for d in u.devices()], "own", jax.local_devices()[0].id, "committed", u.committed,
      "read", np.asarray(u).tolist(), u.tolist())
"""


def test_an_uncommitted_array_is_on_each_process_own_device() -> None:
    (result,) = run_batch([SNIPPET], processes=2, devices=4)
    assert result.all_ok(), result.details()
    for p, own in zip(result.processes, (0, 2048)):
        assert f"on [{own}] own {own} committed False read [0.0, 2.0, 4.0, 6.0]" in p.stdout, result.details()
