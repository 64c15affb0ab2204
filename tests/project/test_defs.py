"""Which functions of a module another module's calls are followed into (project/defs.py):
those whose bodies name device values, found from the text alone."""

from __future__ import annotations

from reshard_lint.project.defs import device_functions

MODULE = '''import jax
import numpy as np
from jax.sharding import Mesh


def make_mesh(n=None):
    return Mesh(np.array(jax.devices()[:n]), ("x",))


async def fetch_devices():
    return jax.local_devices()


def build(
    shape,
) -> object:
    # A signature over several lines: its body still counts.
    return jax.make_mesh(shape, ("x", "y"))


def learning_rate(step):
    return 0.1 / (1 + step)


class Trainer:
    def mesh(self):
        return jax.devices()


def on_mesh(x, mesh):
    # Forwards the caller's mesh: builds nothing its caller does not have, but moves x.
    return jax.device_put(x, NamedSharding(mesh, P()))


def assert_devices(n):
    """Checks that jax.devices() has n devices."""
    if len(jax.devices()) != n:
        raise AssertionError(n)


TRAIN = Mesh(np.array(jax.devices()), ("x",))


def batch(x):
    return jax.device_put(x, NamedSharding(TRAIN, P("x")))
'''


def test_bodies_that_build_device_values_and_return_count() -> None:
    assert device_functions(MODULE) == {"make_mesh", "fetch_devices", "build", "Trainer", "on_mesh", "batch"}


def test_a_class_counts_by_its_whole_body() -> None:
    # Its instances hold what __init__ builds: no return needed.
    text = ("class Trainer:\n    def __init__(self, n):\n        self.mesh = Mesh(jax.devices()[:n], ('x',))\n\n\n"
            "class Config:\n    def __init__(self, lr):\n        self.lr = lr\n\n\n"
            "@dataclasses.dataclass\nclass Layout(\n    Base,\n):\n    MESH = Mesh(np.array(jax.devices()), ('x',))\n")
    assert device_functions(text) == {"Trainer", "Layout"}


def test_forwarders_that_move_nothing_asserts_and_docstrings_do_not_count() -> None:
    found = device_functions(MODULE)
    assert "on_mesh" in found  # moves what it is given to a mesh it is given: its callers' arguments decide
    assert device_functions("def spec(mesh):\n    return NamedSharding(mesh, P())\n") == frozenset()
    assert "assert_devices" not in found  # returns nothing
    assert device_functions('def f():\n    """Uses jax.devices()."""\n    return 1  # jax.devices()\n') == frozenset()


def test_a_body_ends_at_the_next_column_zero_line() -> None:
    # learning_rate is followed by a class whose method names devices: not learning_rate's.
    assert "learning_rate" not in device_functions(MODULE)
    assert device_functions("def f():\n    return 1\nx = jax.devices()\n") == frozenset()


def test_no_def_no_function() -> None:
    assert device_functions("MESH = Mesh(jax.devices(), ('x',))\n") == frozenset()


def test_a_function_moves_what_it_is_given_only() -> None:
    from reshard_lint.project.defs import moving_functions

    text = ("def replicate(x, mesh):\n    return jax.device_put(x, NamedSharding(mesh, P()))\n\n\n"
            "def dummy(devices):\n    sharding = NamedSharding(Mesh(np.array(devices), ('d',)), P())\n"
            "    return jax.device_put(jnp.array(True), sharding)\n\n\n"
            "def guarded(x, mesh):\n    if jax.process_count() > 1:\n        return x\n"
            "    return jax.device_put(x, NamedSharding(mesh, P()))\n")
    # dummy moves only what it makes. guarded moves what it is given past a test: the
    # analysis follows a call of it where the call's values decide the test (not
    # jax.process_count(): functions.relayed), so the gate lets its callers through.
    assert moving_functions(text) == {"replicate", "guarded"}
    assert device_functions(text) == {"replicate", "dummy", "guarded"}


def test_a_function_that_hands_what_it_is_given_to_a_mover_of_its_module_moves_it() -> None:
    from reshard_lint.project.defs import moving_functions

    text = ("def place(value, **kwargs):\n    return jax.device_put(value, kwargs['sharding'])\n\n\n"
            "def sync(params, target):\n    if isinstance(params, dict):\n"
            "        return {k: place(v, sharding=target) for k, v in params.items()}\n"
            "    return tuple(place(v, sharding=target) for v in params)\n\n\n"
            "def log(params):\n    return printer.place(params)\n\n\n"
            "def fresh(n):\n    return place(np.zeros(8), sharding=SHARDING)\n")
    # log calls another object's place; fresh hands place nothing it is given.
    assert moving_functions(text) == {"place", "sync"}
