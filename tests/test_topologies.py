"""What fixes the job's device count: a literal shape laid over every device does
(``np.array(jax.devices()).reshape(2, 4)`` runs on eight devices only); one laid over a
part of them does not (``devs[:4]`` reshaped to ``(2, 2)`` runs on a job of any size, where
it is four of its devices). The analysis once took the second for a job of four devices,
where the part is every device, and called a put from the full mesh onto it "the same
devices"; on the eight-device run it moves to another device set."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from reshard_lint.frontends.coverage import file_coverage

_SOURCE = textwrap.dedent("""\
    import jax
    import numpy as np
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

    devs = jax.devices()
    full = Mesh(np.array(devs), ("x",))
    part = Mesh(np.array(devs[:4]).reshape({shape}), ("a", "b"))
    x = jax.device_put(np.zeros(8), NamedSharding(full, P("x")))
    y = jax.device_put(x, NamedSharding(part, P()))
    print(sorted(d.id for d in x.sharding.device_set) == sorted(d.id for d in y.sharding.device_set))
    """)


@pytest.mark.parametrize("shape, verdict, same", [
    ("2, 2", "crossing", "False"),  # four of the eight devices
])
def test_a_shape_over_part_of_the_devices_is_not_the_jobs_size(shape: str, verdict: str, same: str) -> None:
    source = _SOURCE.replace("{shape}", shape)
    [site] = [s for s in file_coverage(source, "t.py", {}).sites if s.line == 9]
    assert site.verdict == verdict, site.detail
    env = {**os.environ, "XLA_FLAGS": "--xla_force_host_platform_device_count=8", "JAX_PLATFORMS": "cpu"}
    run = subprocess.run([sys.executable, "-c", source], capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.split()[-1] == same


def test_a_shape_over_every_device_still_fixes_the_count() -> None:
    # The same devices reshaped whole: (2, 4) runs on eight devices only, where the two
    # meshes hold the same devices in the same order.
    source = _SOURCE.replace("devs[:4]", "devs").replace("{shape}", "2, 4")
    [site] = [s for s in file_coverage(source, "t.py", {}).sites if s.line == 9]
    assert site.verdict == "same_devices", site.detail
