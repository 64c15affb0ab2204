"""RSH101 at run time: a mesh built from a device order that another process draws otherwise.

Each test is a program run in a child process with 8 CPU devices (the ``python8`` fixture)
that asserts on its own and prints OK. The programs under test are compiled with their own
file name, so that the error's line is the program's line.
"""

from __future__ import annotations

import subprocess
from typing import Callable

Run = Callable[..., subprocess.CompletedProcess[str]]

SETUP = '''
import random, textwrap
import jax, numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
import reshard_lint.runtime as rt
from reshard_lint.runtime import ReshardError

HEAD = """\\
import random
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
"""

def run(body, namespace=None):
    """Run a program under strict mode (2 simulated processes); its ReshardError or None."""
    code = HEAD + textwrap.dedent(body)
    rt.enable(processes=2)
    try:
        exec(compile(code, "<prog>", "exec"), {"__name__": "__main__"} if namespace is None else namespace)
    except ReshardError as e:
        return e
    finally:
        rt.disable()
    return None

def deliberate(ids):
    """Orders a program builds on purpose, which strict mode never takes for a draw: sorted,
    reversed, a 2x4 or 4x2 grid transposed, these reversed, and their rotations."""
    bases = [list(range(8)), list(range(8))[::-1]]
    for rows, cols in ((2, 4), (4, 2)):
        t = [r * cols + c for c in range(cols) for r in range(rows)]
        bases += [t, t[::-1]]
    return any(ids == b[k:] + b[:k] for b in bases for k in range(8))

def marked_line(body):
    lines = (HEAD + textwrap.dedent(body)).splitlines()
    return next(i for i, text in enumerate(lines, start=1) if "# here" in text)
'''

FIRING = [
    """
    devs = jax.devices()
    random.shuffle(devs)
    mesh = Mesh(np.array(devs), ('x',))  # here
    """,
    """
    devs = jax.devices()
    mesh = Mesh(np.array(random.sample(devs, len(devs))).reshape(2, 4), ('a', 'b'))  # here
    """,
    """
    order = np.random.permutation(jax.devices())
    print('drawn')
    mesh = Mesh(order, ('x',))  # here
    """,
    """
    devs = np.array(jax.devices())
    mesh = Mesh(devs[np.random.permutation(jax.device_count())], ('x',))  # here
    """,
    """
    devs = np.array(jax.devices())
    np.random.shuffle(devs)
    mesh = Mesh(devs, ('x',))  # here
    """,
    """
    mesh = Mesh(np.random.choice(jax.devices(), 8, replace=False), ('x',))  # here
    """,
    """
    rng = np.random.default_rng()
    mesh = Mesh(rng.permutation(jax.devices()), ('x',))  # here
    """,
    """
    seed = jax.process_index()
    def build(s):
        rng = np.random.default_rng(s)
        devs = np.array(jax.devices())
        return Mesh(devs[rng.permutation(len(devs))], ('x',))  # here
    mesh = build(seed)
    """,
    """
    rng = np.random.default_rng(seed=jax.process_index())
    devs = np.array(jax.devices())
    rng.shuffle(devs)
    mesh = Mesh(devs, ('x',))  # here
    """,
    """
    random.seed(0)
    random.seed()  # back to the operating system's entropy
    devs = jax.devices()
    random.shuffle(devs)
    mesh = Mesh(np.array(devs), ('x',))  # here
    """,
    """
    base = Mesh(np.array(jax.devices()), ('x',))
    x = jax.jit(lambda a: a + 1)(jax.device_put(np.arange(8.0), NamedSharding(base, P('x'))))
    devs = list(x.devices())
    mesh = Mesh(np.array(devs), ('x',))  # here
    """,
    """
    base = Mesh(np.array(jax.devices()), ('x',))
    x = jax.device_put(np.arange(8.0), NamedSharding(base, P('x')))
    mesh = Mesh(np.array(tuple(x.sharding.device_set)), ('x',))  # here
    """,
]

CLEAN = [
    # Seeded alike on every process: the same mesh everywhere (a reordering: RSH102's business).
    """
    random.seed(1234)
    devs = jax.devices()
    random.shuffle(devs)
    mesh = Mesh(np.array(devs), ('x',))
    """,
    """
    np.random.seed(0)
    mesh = Mesh(np.random.permutation(jax.devices()), ('x',))
    """,
    """
    np.random.seed(0)
    devs = np.array(jax.devices())
    mesh = Mesh(devs[np.random.permutation(8)], ('x',))
    """,
    """
    rng = np.random.default_rng(0)
    mesh = Mesh(rng.permutation(jax.devices()), ('x',))
    """,
    """
    mesh = Mesh(np.random.RandomState(7).permutation(jax.devices()), ('x',))
    """,
    """
    key = jax.random.key(0)
    perm = np.asarray(jax.random.permutation(key, 8))
    mesh = Mesh(np.array(jax.devices())[perm], ('x',))
    """,
    # Per-process randomness for the data, not the devices.
    """
    rng = np.random.default_rng(jax.process_index())
    order = rng.permutation(8)
    mesh = Mesh(np.array(jax.devices()), ('x',))
    x = jax.device_put(np.arange(8.0)[order], NamedSharding(mesh, P('x')))
    """,
    """
    indices = list(range(8))
    random.shuffle(indices)
    steps = np.random.permutation(8)
    mesh = Mesh(np.array(jax.devices()), ('x',))
    """,
    # A shuffled copy that the mesh does not use; a set put in a fixed order.
    """
    devs = jax.devices()
    shuffled = list(devs)
    random.shuffle(shuffled)
    print(shuffled[0], list(jax.device_put(np.ones(8), NamedSharding(Mesh(np.array(devs), ('x',)), P('x'))).devices()))
    mesh = Mesh(np.array(devs), ('x',))
    """,
    """
    base = Mesh(np.array(jax.devices()), ('x',))
    x = jax.device_put(np.arange(8.0), NamedSharding(base, P('x')))
    mesh = Mesh(np.array(sorted(x.devices(), key=lambda d: d.id)), ('x',))
    again = Mesh(np.array(sorted(x.sharding.device_set, key=lambda d: d.id)[::-1]), ('x',))
    """,
    # JAX's builders: on TPU and GPU they put devices in their own order (the linter agrees).
    """
    devs = jax.devices()
    random.shuffle(devs)
    mesh = jax.make_mesh((8,), ('x',), devices=devs)
    """,
]


def check(run: Run, body: str) -> None:
    proc = run(SETUP + body + "\nprint('OK')\n")
    assert proc.returncode == 0 and proc.stdout.strip().endswith("OK"), proc.stdout + proc.stderr


def test_a_device_order_another_process_draws_otherwise_stops_at_the_mesh(python8: Run) -> None:
    # The programs' global generators were seeded by no code of theirs: strict mode follows
    # their seeds from here (the programs seed only with seed() and jax.process_index()).
    check(python8, f"""
rt.watch_seeds()
for body in {FIRING!r}:
    namespace = {{"__name__": "__main__"}}
    e = run(body, namespace)
    if e is None:  # the draw came out in an order a program may build on purpose (~0.1%)
        assert deliberate([d.id for d in namespace["mesh"].devices.flat]), body
        continue
    assert (e.code, e.filename, e.lineno) == ("RSH101", "<prog>", marked_line(body)), (body, str(e))
    assert str(e).startswith("RSH101 Mesh is built from devices ["), str(e)
    assert "differs between processes" in str(e) or "no seed shared by all processes" in str(e), str(e)
    assert e.call == "Mesh" and sorted(e.target) == list(range(8))
""")


def test_seeded_look_alikes_run(python8: Run) -> None:
    check(python8, f"""
for body in {CLEAN!r}:
    e = run(body)
    assert e is None, (body, str(e))
""")


def test_the_program_gets_its_generators_own_draws(python8: Run) -> None:
    """Seeded with jax.process_index() (0 here), which strict mode takes for a per-process seed
    and so draws every order a second time: the program's draws, and the ones after them, are
    those of a run without strict mode."""
    check(python8, """
def draws():
    rt.enable(processes=2) if strict else None
    random.seed(jax.process_index()); np.random.seed(jax.process_index())
    devs = jax.devices()
    random.shuffle(devs)
    a = [d.id for d in devs]
    b = [d.id for d in random.sample(devs, 8)]
    c = [d.id for d in np.random.permutation(jax.devices())]
    d = np.random.permutation(8).tolist()
    e = (random.random(), float(np.random.rand()))
    f = np.random.default_rng(jax.process_index()).permutation(8).tolist()
    try:  # strict mode did draw the second time: it knows the order is process 0's own
        Mesh(np.array(devs), ('x',))
        stopped = False
    except ReshardError as error:
        stopped = error.code == "RSH101"
    assert stopped == strict or deliberate(a), (strict, a)
    rt.disable()
    return a, b, c, d, e, f

strict = False
plain = draws()
strict = True
assert draws() == plain
assert plain[5] == np.random.default_rng(0).permutation(8).tolist()
random.seed(0)
assert plain[0] == [d.id for d in (lambda l: (random.shuffle(l), l)[1])(jax.devices())]
""")


def test_process_index_is_an_int_and_hooks_leave_with_strict_mode(python8: Run) -> None:
    check(python8, """
from jax._src.array import ArrayImpl
originals = (random.shuffle, random.seed, np.random.permutation, np.random.default_rng,
             Mesh.__dict__["__new__"], ArrayImpl.devices)
with rt.strict(processes=2):
    i = jax.process_index()
    assert i == 0 and isinstance(i, int) and f"{i}" == "0" and str(i + 1) == "1"
    assert type(np.random.default_rng(0)) is np.random.Generator
    x = jax.device_put(np.arange(8.0), NamedSharding(Mesh(np.array(jax.devices()), ('x',)), P('x')))
    assert x.devices() == set(jax.devices())
assert (random.shuffle, random.seed, np.random.permutation, np.random.default_rng,
        Mesh.__dict__['__new__'], ArrayImpl.devices) == originals
assert type(x.devices()) is set and type(jax.process_index()) is int
""")
