"""Where two paths bind a name to different values, the value after them is no binding of
either (values.join): an unknown for the reason of one, but not that very value, so that
``y.sharding`` taken before is not the sharding of what the name holds after. The program
also runs under JAX on 8 CPU devices: with the test false, x (on train) is put on y's
sharding (rollout), which the analysis once called "the same devices"."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

from reshard_lint.frontends.coverage import file_coverage

_HEAD = textwrap.dedent("""\
    import jax
    import numpy as np
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

    train = Mesh(np.array(jax.devices()[:4]), ("x",))
    rollout = Mesh(np.array(jax.devices()[4:]), ("x",))
    a = jax.device_put(np.arange(8.0), NamedSharding(train, P("x")))
    """)
_HEAD_LINES = _HEAD.count("\n")


def _run(source: str) -> str:
    """Where the run finds src and out: 'train->rollout'."""
    env = {**os.environ, "XLA_FLAGS": "--xla_force_host_platform_device_count=8", "JAX_PLATFORMS": "cpu"}
    probe = source + textwrap.dedent("""\
        def where(v):
            ids = sorted(d.id for d in v.sharding.device_set)
            return "train" if ids == [0, 1, 2, 3] else "rollout" if ids == [4, 5, 6, 7] else str(ids)


        print(where(src) + "->" + where(out))
        """)
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    return run.stdout.split()[-1]


def test_a_name_two_paths_bind_is_neither_binding() -> None:
    # `s` is y's own sharding; after the `if`, x is x or y: putting x on s moves it when
    # the test is false (the run: x on train goes to rollout's devices).
    source = _HEAD + textwrap.dedent("""\
        def place(x, y, c):
            s = y.sharding
            if c:
                x = y
            return jax.device_put(x, s)


        import operator

        pick = operator.itemgetter(0)  # what the analysis does not know, in the run a, b and False
        b = jax.device_put(np.ones(8), NamedSharding(rollout, P()))
        src = a
        out = place(pick([a]), pick([b]), pick([False]))
        """)
    sites = [site for site in file_coverage(source, "t.py", {}).sites if site.line == _HEAD_LINES + 5]
    assert [site.verdict for site in sites] == ["unresolved"], [(x.verdict, x.detail) for x in sites]
    assert _run(source) == "train->rollout"
