"""RSH201/RSH202's fix, "build the target on the array's own mesh", is offered only where
its result is well-formed, and the message's hint writes what the call can use.

Each refused case is a program the fix would have broken (rules/helpers/own_mesh.py):
the array written twice where evaluating it twice is not free, a name the function
rebinds, a reshard under a context mesh that multi-controller JAX refuses. The fixed
programs themselves run under JAX in tests/oracle/test_fix_runs.py.
"""

from __future__ import annotations

import textwrap

from reshard_lint.core.diagnostic import Diagnostic
from reshard_lint.engine.engine import Engine

_HEAD = textwrap.dedent("""\
    import jax
    import numpy as np
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

    mesh = Mesh(np.array(jax.devices()), ('x',))
    half = Mesh(np.array(jax.devices()[:4]), ('x',))
    x = jax.device_put(np.arange(8.0), NamedSharding(mesh, P('x')))
    """)


def _found(body: str) -> list[Diagnostic]:
    return [d for d in Engine().lint_source(_HEAD + textwrap.dedent(body), "t.py").diagnostics
            if d.code in ("RSH201", "RSH202")]


def _fix_text(d: Diagnostic) -> str | None:
    return None if d.fix is None else d.fix.edits[0].replacement


BOX = """
    class Box:
        def __init__(self):
            self.w = jax.device_put(np.arange(8.0), NamedSharding(mesh, P('x')))


    def make():
        return Box()


    box = Box()
    """


def test_an_attribute_chain_is_written_again() -> None:
    [d] = _found(BOX + "y = jax.device_put(box.w, NamedSharding(half, P('x')))\n")
    assert _fix_text(d) == "NamedSharding(box.w.sharding.mesh, P('x'))"


def test_an_argument_with_a_call_in_it_gets_no_fix() -> None:
    # make().w twice would build two boxes
    [d] = _found(BOX + "y = jax.device_put(make().w, NamedSharding(half, P('x')))\n")
    assert d.fix is None
    assert "NamedSharding(make().w.sharding.mesh, P('x'))" in d.message  # the hint, in words


def test_a_name_the_function_rebinds_gets_no_fix() -> None:
    [d] = _found("""
        def put(NamedSharding):
            return jax.device_put(x, jax.sharding.NamedSharding(half, P('x')))
        """)
    assert d.fix is None  # NamedSharding(...) there would call the parameter
    [d] = _found("""
        def put(P):
            return jax.device_put(x, NamedSharding(half, jax.sharding.PartitionSpec('x')))
        """)
    assert _fix_text(d) == "NamedSharding(x.sharding.mesh, jax.sharding.PartitionSpec('x'))"


def test_under_a_context_mesh_only_a_fix_that_keeps_the_sharding() -> None:
    # multi-controller JAX reshards under jax.set_mesh(half) with a jitted computation the
    # context refuses ("incompatible devices ... jit's context mesh"); P('x') is x's own
    # sharding, so nothing is resharded
    respec, same = _found("""
        with jax.set_mesh(half):
            a = jax.device_put(x, NamedSharding(half, P()))
            b = jax.device_put(x, NamedSharding(half, P('x')))
        """)
    assert respec.fix is None
    assert _fix_text(same) == "NamedSharding(x.sharding.mesh, P('x'))"


def test_a_function_called_under_a_context_mesh_gets_no_fix() -> None:
    [d] = _found("""
        def replicate(v):
            return jax.device_put(v, NamedSharding(half, P()))


        with jax.set_mesh(half):
            replicate(x)
        """)
    assert d.fix is None


def test_a_function_called_outside_any_context_keeps_its_fix() -> None:
    [d] = _found("""
        def replicate(v):
            return jax.device_put(v, NamedSharding(half, P()))


        replicate(x)
        with jax.set_mesh(mesh):
            y = x + 1
        """)
    assert _fix_text(d) == "NamedSharding(v.sharding.mesh, P())"


def test_the_hint_names_the_argument_not_where_the_array_was_made() -> None:
    [d] = _found("""
        def load():
            inputs = jax.device_put(np.ones(8), NamedSharding(mesh, P('x')))
            return inputs


        y = jax.device_put(load(), NamedSharding(half, P()))
        """)
    assert "moves 'load()'" in d.message and "NamedSharding(load().sharding.mesh, P())" in d.message
    assert "inputs" not in d.message


def test_the_hint_for_a_list_is_per_leaf() -> None:
    [d] = _found("""
        rows = [x, x]
        y = jax.device_put(rows, NamedSharding(half, P('x')))
        """)
    hint = "jax.tree.map(lambda a: NamedSharding(a.sharding.mesh, P('x')), rows)"
    assert hint in d.message and _fix_text(d) == hint
    assert "rows.sharding" not in d.message


def test_the_hint_parenthesises_an_expression() -> None:
    [d] = _found("y = jax.device_put(x + 1, NamedSharding(half, P()))\n")
    assert "NamedSharding((x + 1).sharding.mesh, P())" in d.message


def test_a_bare_spec_under_a_context_mesh_is_replaced_whole() -> None:
    # P('x', None, None) is no NamedSharding call: its first entry is an axis, not a mesh
    [d] = _found("""
        z = jax.device_put(np.ones((8, 2, 2)), NamedSharding(mesh, P('x', None, None)))
        with jax.set_mesh(half):
            y = jax.device_put(z, P('x', None, None))
        """)
    assert _fix_text(d) == "NamedSharding(z.sharding.mesh, P('x', None, None))"


def test_a_call_run_once_per_element_is_fixed_only_with_the_spec_it_writes() -> None:
    # Each run may give the target another spec: the fix would write the first crossing
    # run's into a call every run makes (the replicated 'b' made sharded).
    [d] = _found("""
        for s in (NamedSharding(mesh, P()), NamedSharding(half, P('x'))):
            y = jax.device_put(x, s)
        """)
    assert d.fix is None
    [d] = _found("""
        tree = {'w': x, 'b': x}
        out = jax.tree.map(lambda a, s: jax.device_put(a, s), tree, {'w': NamedSharding(half, P('x')),
                                                                    'b': NamedSharding(mesh, P())})
        """)
    assert d.fix is None
    # A spec written in the target's own code is the same on every run.
    [d] = _found("""
        for m in (mesh, half):
            y = jax.device_put(x, NamedSharding(m, P('x')))
        """)
    assert _fix_text(d) == "NamedSharding(x.sharding.mesh, P('x'))"
    [d] = _found("""
        out = jax.tree.map(lambda a, m: jax.device_put(a, NamedSharding(m, P())), [x, x], [mesh, half])
        """)
    assert _fix_text(d) == "NamedSharding(a.sharding.mesh, P())"
