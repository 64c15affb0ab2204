"""A device of the global list used as this process's device, under real multi-controller
JAX (two processes of 4 CPU devices on loopback): what each kind of array does on the
process that owns ``jax.devices()[0]`` (process 0) and on the one that does not (process 1).
RSH306's page states these outcomes (issue 58); RSH201's states the last one, a same-layout
move between the two processes' device groups.
"""

from __future__ import annotations

import pytest

from .harness import SnippetResult, run_batch

pytestmark = [pytest.mark.multicontroller, pytest.mark.xdist_group("multicontroller-test_global_device")]

HEAD = """
import jax, jax.numpy as jnp, numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P, SingleDeviceSharding
d = jax.devices()[0]
"""

CASES = {
    # a global array: RSH301's case, raises on both processes
    "global": """
mesh = Mesh(np.array(jax.devices()), ('x',))
x = jax.device_put(np.arange(8.0), NamedSharding(mesh, P('x')))
jax.device_put(x, d)
""",
    # an array committed to this process's own device
    "local": """
a = jax.device_put(np.arange(8.0), jax.local_devices()[0])
y = jax.device_put(a, d)
print('put', y.is_fully_addressable)
""",
    "to_device": """
a = jax.device_put(np.arange(8.0), jax.local_devices()[0])
y = a.to_device(d)
print('put', y.is_fully_addressable)
""",
    # host data: no error at the put, the result cannot be read on process 1
    "host": """
b = jax.device_put(np.arange(8.0), d)
print('put', [e.id for e in b.devices()], b.is_fully_addressable)
print('read', np.asarray(b).tolist())
""",
    "uncommitted": """
b = jax.device_put(jnp.arange(8.0) * 2, d)
print('put', [e.id for e in b.devices()], b.is_fully_addressable)
print('read', np.asarray(b).tolist())
""",
    "host_tree_keyword": """
b = jax.device_put({'w': np.ones(3)}, device=jax.devices('cpu')[0])
print('put', b['w'].is_fully_addressable)
print('read', jax.device_get(b)['w'].tolist())
""",
    "jit_out": """
f = jax.jit(lambda v: v * 2, out_shardings=SingleDeviceSharding(d))
y = f(np.arange(4.0))
print('jit', [e.id for e in y.devices()], y.is_fully_addressable)
print('read', np.asarray(y).tolist())
""",
    "default_device": """
with jax.default_device(jax.devices('cpu')[0]):
    e = jnp.stack([jnp.ones(3), jnp.zeros(3)])
print('made', [i.id for i in e.devices()], e.is_fully_addressable)
print('read', np.asarray(e).tolist())
""",
    # a committed operand keeps its own device under default_device
    "default_device_committed": """
a = jax.device_put(np.arange(3.0), jax.local_devices()[0])
with jax.default_device(d):
    e = a + 1
print('made', [i.id for i in e.devices()], e.is_fully_addressable)
print('read', np.asarray(e).tolist())
""",
    "device_keyword": """
z = jnp.zeros(3, device=d)
print('made', [i.id for i in z.devices()], z.is_fully_addressable)
print('read', np.asarray(z).tolist())
""",
    # the look-alikes RSH306 leaves alone
    "local_devices": """
cpu = jax.local_devices(backend='cpu')[0]
a = jax.device_put(np.arange(8.0), jax.local_devices()[0])
with jax.default_device(cpu):
    e = jnp.ones(3)
f = jax.jit(lambda v: v * 2, out_shardings=SingleDeviceSharding(cpu))
print('ok', np.asarray(jax.device_put(a, cpu)).tolist(), np.asarray(e).tolist(),
      np.asarray(f(np.ones(2))).tolist(), np.asarray(jnp.zeros(2, device=cpu)).tolist())
""",
    "guarded": """
if jax.process_index() == 0:
    a = jax.device_put(np.arange(8.0), jax.local_devices()[0])
    print('ok', np.asarray(jax.device_put(a, d)).tolist())
""",
    # RSH201: P() on process 0's devices to P() on process 1's
    "halves": """
n = jax.device_count() // 2
trainer = Mesh(np.array(jax.devices()[:n]), ('x',))
rollout = Mesh(np.array(jax.devices()[n:]), ('x',))
x = jax.device_put(np.arange(8.0), NamedSharding(trainer, P()))
jax.device_put(x, NamedSharding(rollout, P()))
""",
}

UNREADABLE = ("RuntimeError: Fetching value for `jax.Array` that spans non-addressable (non process local) "
              "devices")


@pytest.fixture(scope="module")
def results() -> dict[str, SnippetResult]:
    names = list(CASES)
    outs = run_batch([HEAD + CASES[n] for n in names], processes=2, devices=4, timeout=90)
    return dict(zip(names, outs))


def test_a_global_array_raises_on_every_process(results: dict[str, SnippetResult]) -> None:
    for pid in (0, 1):
        p = results["global"].process(pid)
        assert p.status == "error" and "first argument must be a fully addressable array" in p.error_text, \
            results["global"].details()


@pytest.mark.parametrize("case", ["local", "to_device"])
def test_a_process_local_array_raises_on_the_other_process(results: dict[str, SnippetResult],
                                                           case: str) -> None:
    res = results[case]
    assert res.process(0).status == "ok" and "put True" in res.process(0).stdout, res.details()
    p1 = res.process(1)
    assert p1.status == "error", res.details()
    assert "Cross-host transfers are not supported by this backend" in p1.error_text, res.details()


MADE = [("host", "put [0] False"), ("uncommitted", "put [0] False"), ("host_tree_keyword", "put False"),
        ("jit_out", "jit [0] False"), ("default_device", "made [0] False"),
        ("device_keyword", "made [0] False")]


@pytest.mark.parametrize("case,made", MADE)
def test_what_is_made_there_cannot_be_read_on_the_other_process(
        results: dict[str, SnippetResult],
        case: str, made: str) -> None:
    res = results[case]
    assert res.process(0).status == "ok" and "read" in res.process(0).stdout, res.details()
    p1 = res.process(1)
    # No error where it is made: only where it is read.
    assert made in p1.stdout and "read" not in p1.stdout.split(made)[-1], res.details()
    assert p1.status == "error" and UNREADABLE in p1.error_text, res.details()


def test_a_committed_operand_keeps_its_device_under_default_device(results: dict[str, SnippetResult]) -> None:
    res = results["default_device_committed"]
    assert res.all_ok(), res.details()
    assert "made [0] True" in res.process(0).stdout and "made [2048] True" in res.process(1).stdout, res.details()


@pytest.mark.parametrize("case", ["local_devices", "guarded"])
def test_the_look_alikes_run(results: dict[str, SnippetResult], case: str) -> None:
    assert results[case].all_ok(), results[case].details()


def test_a_same_layout_move_between_the_process_groups_raises_on_cpu(
        results: dict[str, SnippetResult]) -> None:
    for pid in (0, 1):
        p = results["halves"].process(pid)
        assert p.status == "error" and "does not support cross-host device transfers" in p.error_text, \
            results["halves"].details()
