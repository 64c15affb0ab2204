"""What a computed array's finding offers: a fix only where the value is one array.

The fix of RSH201 rebuilds the target on ``x.sharding.mesh``; a jitted call's result or
``jnp.split``'s may be a tuple or list, which has no ``.sharding``.
"""

from __future__ import annotations

import textwrap

from reshard_lint.engine.engine import Engine

_HEAD = textwrap.dedent("""\
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

    mesh = Mesh(np.array(jax.devices()), ('x',))
    half = Mesh(np.array(jax.devices()[:4]), ('x',))
    x = jax.device_put(np.arange(8.0), NamedSharding(mesh, P('x')))
    """)


def _fixes(body: str) -> list[tuple[str, bool]]:
    result = Engine().lint_source(_HEAD + textwrap.dedent(body), "t.py")
    return [(d.code, d.fix is not None) for d in result.diagnostics]


def test_one_computed_array_gets_the_fix() -> None:
    assert _fixes("""
        y = jnp.sin(x)
        z = jax.device_put(y, NamedSharding(half, P('x')))
        """) == [("RSH201", True)]


def test_a_list_of_arrays_gets_none() -> None:
    assert _fixes("""
        rows = jnp.split(x, 2)
        z = jax.device_put(rows, NamedSharding(half, P('x')))
        """) == [("RSH201", False)]


def test_a_jitted_result_of_unknown_shape_gets_none() -> None:
    assert _fixes("""
        def f(a):
            return g(a)

        out = jax.jit(f)(x)
        z = jax.device_put(out, NamedSharding(half, P('x')))
        """) == [("RSH201", False)]
