"""What a computed array's finding offers: a fix only where its result is well-formed.

The fix of RSH201 rebuilds the target on ``x.sharding.mesh``. A computed array's layout
is not known (``x[:4]`` has 4 elements, and on x's 8 devices ``P('x')`` raises JAX's
IndivisibleError, where the original move to 4 devices runs), so it gets the fix only
where the spec splits it as finely as the target's mesh did. A list of arrays has no
``.sharding`` (AttributeError), so a pytree gets a target per leaf, and only when every
leaf is an array on a known mesh (a NumPy leaf has no ``.sharding`` either).
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
    # 4 devices on both meshes: P('x') splits it 4 ways on either, as the original did
    assert _fixes("""
        left = Mesh(np.array(jax.devices()[:4]), ('x',))
        middle = Mesh(np.array(jax.devices()[2:6]), ('x',))
        w = jax.device_put(np.arange(8.0), NamedSharding(left, P('x')))
        y = jnp.sin(w)
        z = jax.device_put(y, NamedSharding(middle, P('x')))
        """) == [("RSH201", True)]
    # replicated: nothing to divide
    assert _fixes("""
        y = jnp.sin(x)
        z = jax.device_put(y, NamedSharding(half, P()))
        """) == [("RSH201", True)]


def test_a_computed_array_the_spec_may_not_divide_gets_none() -> None:
    # 4 devices on the target, 8 on the array's mesh: x[:4] (4 elements) would not divide
    assert _fixes("""
        y = x[:4]
        z = jax.device_put(y, NamedSharding(half, P('x')))
        """) == [("RSH201", False)]


def test_an_array_already_split_as_the_spec_gets_the_fix() -> None:
    # x is split over 'x' on its own mesh already: P('x') there divides it, whatever its size
    assert _fixes("""
        z = jax.device_put(x, NamedSharding(half, P('x')))
        """) == [("RSH201", True)]


def test_a_list_of_arrays_gets_a_target_per_leaf() -> None:
    result = Engine().lint_source(_HEAD + textwrap.dedent("""
        rows = [x, x]
        z = jax.device_put(rows, NamedSharding(half, P('x')))
        """), "t.py")
    [d] = result.diagnostics
    assert d.fix is not None and [e.replacement for e in d.fix.edits] == [
        "jax.tree.map(lambda a: NamedSharding(a.sharding.mesh, P('x')), rows)"]


def test_a_list_with_a_numpy_leaf_gets_none() -> None:
    assert _fixes("""
        rows = [x, np.ones(8)]
        z = jax.device_put(rows, NamedSharding(half, P('x')))
        """) == [("RSH201", False)]


def test_leaves_bound_to_different_specs_get_none() -> None:
    assert _fixes("""
        rows = [x, x]
        z = jax.device_put(rows, [NamedSharding(half, P('x')), NamedSharding(half, P())])
        """) == [("RSH201", False)]


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
