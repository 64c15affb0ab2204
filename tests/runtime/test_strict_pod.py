"""The simulated pod (process 0 of N) and the simulated platform, on 8 CPU devices.

Each test is a program run in a child process (the ``python8`` fixture) that asserts on its
own and prints OK.
"""

from __future__ import annotations

import subprocess
from typing import Callable

Run = Callable[..., subprocess.CompletedProcess[str]]

SETUP = """
import warnings
import jax, numpy as np
import jax.numpy as jnp
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
from jax.experimental import multihost_utils
import reshard_lint.runtime as rt
from reshard_lint.runtime import ReshardError, StrictConfigError, strict

def error_of(call):
    try:
        call()
    except ReshardError as e:
        return e
    return None

def code_of(call):
    e = error_of(call)
    return e.code if e is not None else None

devs = jax.devices()
mesh = Mesh(np.array(devs), ("x",))
x = jax.device_put(np.arange(16.0), NamedSharding(mesh, P("x")))
rep = jax.device_put(np.arange(16.0), NamedSharding(mesh, P()))
"""


def check(run: Run, body: str) -> None:
    proc = run(SETUP + body + "\nprint('OK')\n")
    assert proc.returncode == 0 and proc.stdout.strip().endswith("OK"), proc.stdout + proc.stderr


def test_the_user_sees_process_0_of_the_pod_and_jax_sees_the_truth(python8: Run) -> None:
    check(python8, """
with strict(processes=2):
    assert (jax.process_index(), jax.process_count(), jax.local_device_count()) == (0, 2, 4)
    assert jax.local_devices() == devs[:4] and jax.local_devices(process_index=1) == devs[4:]
    assert [d.process_index for d in devs] == [0] * 4 + [1] * 4
    assert not x.is_fully_addressable and rep.is_fully_addressable is False
    assert [s.device for s in x.addressable_shards] == devs[:4]
    assert x.addressable_data(1).tolist() == [2.0, 3.0]
    assert Mesh(np.array(devs), ("x",)).local_devices == devs  # JAX's own answer: every device
    gathered = multihost_utils.process_allgather(x, tiled=True)  # JAX's code: not the pod's
    assert gathered.tolist() == list(range(16))
    assert jax.distributed.initialize() is None  # no coordinator to join
assert (jax.process_count(), len(jax.local_devices()), devs[5].process_index) == (1, 8, 0)
""")


def test_the_pods_answers_follow_every_change_of_settings(python8: Run) -> None:
    """The answers are remembered per caller (they cost what JAX's own cost): asked again
    and again from one module, they follow nested blocks, suspension, the process played and
    a restart, JAX's own callers still get the truth, and they read as JAX's functions do."""
    check(python8, """
import inspect
from reshard_lint.runtime import _checks
signature = inspect.signature(jax.local_devices)
def ask():
    return (jax.process_index(), jax.process_count(), len(jax.local_devices()),
            jax.local_device_count(), devs[5].process_index)
assert ask() == (0, 1, 8, 8, 0)
with strict(processes=2):
    for _ in range(3):
        assert ask() == (0, 2, 4, 4, 1)
    assert jax.local_devices() is jax.local_devices()  # one list, as JAX's cache returns
    assert inspect.signature(jax.local_devices) == signature
    assert jax.local_devices(1) == devs[4:] and jax.local_devices(process_index=0) == devs[:4]
    try:
        jax.local_devices(process_index=2)
    except ValueError as e:
        assert "Unknown process_index 2" in str(e)  # JAX's error on a pod of 2
    else:
        raise AssertionError("process 2 of 2")
    with strict(processes=4, process=-1):
        for _ in range(3):
            assert ask() == (3, 4, 2, 2, 2)
    with rt.suspended():
        assert ask() == (0, 1, 8, 8, 0)
    assert ask() == (0, 2, 4, 4, 1)
    assert multihost_utils.process_allgather(x, tiled=True).tolist() == list(range(16))
    assert ask() == (0, 2, 4, 4, 1)
assert ask() == (0, 1, 8, 8, 0)
rt.enable(processes=2)
local = jax.local_devices()
rt.disable()
rt.enable(processes=2)  # a new program: it has not asked for its devices yet
assert not _checks.local_asked
assert jax.local_devices() == local and _checks.local_asked  # asked again: remembered again
e = error_of(lambda: jax.device_put(x, NamedSharding(Mesh(np.array(local), ("x",)), P("x"))))
assert e is not None and e.code == "RSH303", e  # a process-local mesh
rt.disable()
assert ask() == (0, 1, 8, 8, 0)
""")


def test_reading_what_process_0_does_not_hold(python8: Run) -> None:
    check(python8, """
with strict(processes=2):
    for read in (lambda: np.asarray(x), lambda: jax.device_get(x), lambda: x.tolist(),
                 lambda: np.array(x), lambda: float(x[3]) if False else float(x.sum()) * 0 + np.asarray(x)[0]):
        e = error_of(read)
        assert e is not None and e.code == "RSH305", read
        assert "split across simulated processes [0, 1]" in str(e)
        assert e.filename == "<string>" and str(e).endswith(f"[at <string>:{e.lineno}]")
    assert code_of(lambda: float(x.sum())) is None  # a replicated scalar result
    assert np.asarray(rep).tolist() == list(range(16)) and "Array" in repr(x) and str(x)
    far = jax.device_put(np.arange(4.0), devs[5])
    assert code_of(lambda: jax.device_get(far)) == "RSH306" and code_of(lambda: far.tolist()) == "RSH306"
    # numpy reads a one-device CPU array's buffer in C++, without JAX's Python: its functions
    # are checked, with the message of the other reads.
    for read in (np.asarray, np.array, np.asanyarray, np.ascontiguousarray, np.asfortranarray,
                 lambda a: np.frombuffer(a, np.float32), lambda a: np.array(object=a, dtype=None),
                 lambda a: np.asarray(a, np.float32, copy=True), lambda a: np.asarray(far + 1)):
        e = error_of(lambda: read(far))
        assert e is not None and e.code == "RSH306" and "owned by simulated process [1]" in str(e), read
        assert e.filename == "<string>" and str(e).endswith(f"[at <string>:{e.lineno}]"), e
    got, want = error_of(lambda: np.asarray(far)), error_of(lambda: jax.device_get(far))
    assert str(got) == str(want).replace("jax.device_get", "np.asarray"), (got, want)
    assert str(got).startswith("RSH306 np.asarray reads an array on devices [5], owned by simulated "
                               "process [1], from simulated process 0"), got
    mine = jax.device_put(np.arange(4.0), jax.local_devices()[1])
    assert np.asarray(mine).tolist() == [0, 1, 2, 3] and np.array(mine + 1).tolist() == [1, 2, 3, 4]
    assert np.asarray([1, 2]).tolist() == [1, 2] and np.array(object=3.0) == 3.0
    assert np.frombuffer(b"ab", np.uint8).tolist() == [97, 98] and "Array" in repr(far)
    assert jax.tree.map(np.asarray, {"a": mine})["a"].tolist() == [0, 1, 2, 3]
    assert code_of(lambda: jax.tree.map(np.asarray, {"a": far})) == "RSH306"
    assert code_of(lambda: jax.device_put(mine, devs[6])) == "RSH306"  # to another host's device
    assert code_of(lambda: jax.device_put(mine, devs[2])) is None  # within this process
assert np.asarray(x).tolist() == list(range(16))  # off: plain JAX again
with strict(processes=1):  # no pod: nothing to check, numpy's functions are numpy's
    assert np.asarray(far).tolist() == [0, 1, 2, 3] and not hasattr(np.asarray, "__wrapped__")
""")


def test_process_local_data_is_this_process_share(python8: Run) -> None:
    check(python8, """
s = NamedSharding(mesh, P("x"))
with strict(processes=2):
    local = np.arange(8.0) + 100 * jax.process_index()
    g = jax.make_array_from_process_local_data(s, local)  # the pod's global shape: (16,)
    assert g.shape == (16,) and g.addressable_data(0).tolist() == [100 * 0 + 0.0, 1.0]
    g2 = jax.make_array_from_process_local_data(s, local, (16,))
    assert g2.shape == (16,)
    e = error_of(lambda: jax.make_array_from_process_local_data(s, np.arange(6.0), (16,)))
    assert e is not None and e.code == "RSH304" and "Invalid host data" in str(e)
    h = multihost_utils.host_local_array_to_global_array(local, mesh, P("x"))
    assert h.shape == (16,)
    tree = multihost_utils.host_local_array_to_global_array({"a": local, "b": np.ones(4)}, mesh,
                                                           {"a": P("x"), "b": P()})
    assert (tree["a"].shape, tree["b"].shape) == ((16,), (4,))
    with jax.set_mesh(mesh):  # a PartitionSpec under the context mesh, a pytree of data
        t = jax.make_array_from_process_local_data(P("x"), {"a": local, "b": np.ones((4, 3))})
    assert (t["a"].shape, t["b"].shape) == ((16,), (8, 3))
    seen = []
    def cb(index):
        seen.append(index)
        return local[index]  # global indices on local data: right for process 0's devices only
    c = jax.make_array_from_callback((16,), s, cb)
    assert c.shape == (16,) and len(seen) == 4
    arrays = [jax.device_put(np.full(2, float(i)), d) for i, d in enumerate(jax.local_devices())]
    m = jax.make_array_from_single_device_arrays((16,), s, arrays)
    assert m.shape == (16,) and m.addressable_data(3).tolist() == [3.0, 3.0]
""")


def test_playing_another_process(python8: Run) -> None:
    """process=-1 plays the last process: what process 0 gets right by accident fails there."""
    check(python8, """
with strict(processes=2, process=-1) as config:
    assert config.process == -1
    assert (jax.process_index(), jax.process_count(), jax.local_devices()) == (1, 2, devs[4:])
    assert [s.device for s in x.addressable_shards] == devs[4:]
    assert x.addressable_data(0).tolist() == [8.0, 9.0]
    a = jax.device_put(np.arange(8.0), jax.local_devices()[0])
    e = error_of(lambda: jax.device_put(a, jax.devices()[0]))  # process 0's device
    assert e is not None and e.code == "RSH306" and "owned by simulated process 0" in str(e), e
    assert code_of(lambda: jax.device_put(a, jax.local_devices()[1])) is None
    assert code_of(lambda: jax.device_get(jax.device_put(np.ones(2), devs[0]))) == "RSH306"
    # Uncommitted arrays: here on JAX's default device (devs[0], process 0's), on the pod on
    # this process's own first device, so every read of them is fine (numpy's checked
    # reads are installed by now: the put onto devs[0] above).
    u = jnp.arange(4.0) * 2
    assert not u.committed and u.tolist() == [0.0, 2.0, 4.0, 6.0]
    assert np.asarray(u).tolist() == [0.0, 2.0, 4.0, 6.0] and jax.device_get(u).tolist()[3] == 6.0
    local = np.arange(8.0) + 100 * jax.process_index()
    g = jax.make_array_from_process_local_data(NamedSharding(mesh, P("x")), local)
    assert g.shape == (16,) and g.addressable_data(0).tolist() == [100.0, 101.0]
    # A callback that indexes this process's data with global indices: fine on process 0,
    # on process 1 it gets indices 8 ... 15 of an 8-element array.
    e = None
    try:
        jax.make_array_from_callback((16,), NamedSharding(mesh, P("x")), lambda i: local[i])
    except Exception as exc:
        e = exc
    assert e is not None, "process 1's callback read past its local data"
with strict(processes=4, process=2):
    assert (jax.process_index(), jax.local_devices()) == (2, devs[4:6])
for bad in (dict(processes=2, process=2), dict(processes=2, process=-3), dict(process="last"),
            dict(platform="cpu-2x4", process=5)):
    try:
        with strict(**bad):
            pass
    except StrictConfigError:
        pass
    else:
        raise AssertionError(bad)
""")


def test_jax_incompatible_devices_is_rsh203_at_the_constraints_line(python8: Run) -> None:
    check(python8, """
half = Mesh(np.array(devs[:4]), ("x",))
with strict():
    e = error_of(lambda: jax.jit(lambda a: a * 2, out_shardings=NamedSharding(half, P("x")))(x))
    assert e is not None and e.code == "RSH203" and "Received incompatible devices" in str(e)
    @jax.jit
    def f(a):
        return jax.lax.with_sharding_constraint(a, NamedSharding(half, P("x")))
    line = f.__wrapped__.__code__.co_firstlineno + 2  # @jax.jit, def, return
    e = error_of(lambda: f(x))
    assert e is not None and e.code == "RSH203" and (e.filename, e.lineno) == ("<string>", line), e
    y = jax.device_put(np.arange(4.0), NamedSharding(half, P("x")))
    assert code_of(lambda: x[:4] + y) == "RSH203"
    one = jax.device_put(np.arange(16.0), devs[0])
    with jax.set_mesh(mesh):
        assert code_of(lambda: one + 1) == "RSH203"
try:
    jax.jit(lambda a: a * 2, out_shardings=NamedSharding(half, P("x")))(x)
except ValueError as e:
    assert not isinstance(e, ReshardError)  # off: JAX's own error
""")


def test_a_simulated_platform(python8: Run) -> None:
    check(python8, """
with strict(platform="cpu-2x4"):
    assert [d.id for d in jax.devices()] == [0, 1, 2, 3, 2048, 2049, 2050, 2051]
    assert jax.process_count() == 2 and [d.id for d in jax.local_devices()] == [0, 1, 2, 3]
    e = error_of(lambda: [jax.devices()[d.id] for d in jax.devices()])
    assert e is not None and e.code == "RSH104"
    by_id = {d.id: d for d in jax.devices()}
    assert by_id[2049] is devs[5]
with strict(platform="tpu-v4-16", reorder="raise"):
    ring = jax.make_mesh((8,), ("x",))
    assert [d.id for d in ring.devices.flat] == [0, 4, 2, 6, 1, 5, 3, 7]
    from jax.experimental import mesh_utils
    assert [d.id for d in mesh_utils.create_device_mesh((2, 4)).flat] == [0, 2, 1, 3, 4, 6, 5, 7]
    y = jax.device_put(np.arange(16.0), NamedSharding(ring, P("x")))
    assert code_of(lambda: jax.device_put(y, NamedSharding(mesh, P("x")))) == "RSH202"
    assert code_of(lambda: jax.jit(lambda a: a + 1, in_shardings=NamedSharding(mesh, P("x")))(y)) == "RSH204"
assert [d.id for d in jax.make_mesh((8,), ("x",)).devices.flat] == list(range(8))  # off: CPU order
for bad in ({"platform": "tpu-v9"}, {"platform": "tpu-v4-16", "processes": 4}):
    try:
        rt.StrictConfig(**bad)
    except StrictConfigError:
        pass
    else:
        raise AssertionError(bad)
with strict(platform="tpu-v5e-16"):
    try:
        jax.device_put(x, NamedSharding(Mesh(np.array(devs[:4]), ("x",)), P("x")))
    except StrictConfigError as e:
        assert "JAX_NUM_CPU_DEVICES=16" in str(e)
    else:
        raise AssertionError("16 devices asked of 8")
""")


def test_sorting_by_id_reorders_on_a_slice_whose_ids_follow_coordinates(python8: Run) -> None:
    """RSH202's sorted-by-id example on the slice where it reorders: tpu-v5e-16 enumerates
    host by host (ids 0, 1, 4, 5, 2, 3, 6, 7, ...), so a mesh sorted by id holds the same chips
    in another order (on the 8-chip slices ids follow enumeration: the rule example runs)."""
    check(lambda code: python8(code, devices=16), """
with strict(platform="tpu-v5e-16", reorder="raise"):
    mesh = Mesh(np.array(jax.devices()), ("x",))
    x = jax.device_put(np.arange(16.0), NamedSharding(mesh, P("x")))
    by_id = Mesh(np.array(sorted(jax.devices(), key=lambda d: d.id)), ("x",))
    e = error_of(lambda: jax.device_put(x, NamedSharding(by_id, P("x"))))
    assert e is not None and e.code == "RSH202", e
    assert jax.device_put(x, NamedSharding(mesh, P(None))).shape == (16,)  # its own mesh: fine
""")


def test_strict_mode_off_puts_every_patched_object_back(python8: Run) -> None:
    check(python8, """
from jax._src import mesh_utils, stages
from jax._src.array import ArrayImpl
def objects():
    return (jax.process_index, jax.process_count, jax.local_devices, jax.local_device_count,
            jax.devices, jax.distributed.initialize, jax.make_array_from_callback,
            jax.make_array_from_single_device_arrays, mesh_utils.create_device_mesh,
            stages._device_assignment_mismatch_error, jax.Device.__dict__["id"],
            jax.Device.__dict__["process_index"], ArrayImpl.__dict__["_value"],
            ArrayImpl.__dict__["addressable_shards"], ArrayImpl.__dict__["is_fully_addressable"],
            ArrayImpl.__dict__["addressable_data"])
before = objects()
with strict(platform="tpu-v4-16"):
    assert objects() != before
assert all(a is b for a, b in zip(objects(), before))
""")
