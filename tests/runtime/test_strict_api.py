"""The strict-mode API: nesting, enable/disable, restoring JAX, threads, settings.

JAX code runs in child processes with 8 CPU devices (the ``python8`` fixture); each
program asserts on its own and prints OK.
"""

from __future__ import annotations

import subprocess
import sys
from typing import Callable

import pytest

from reshard_lint.runtime import ReshardError, ReshardWarning, StrictConfig, StrictConfigError, strict

Run = Callable[..., subprocess.CompletedProcess[str]]

SETUP = """
import threading, warnings
import jax, numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
from jax.experimental import multihost_utils
from reshard_lint.runtime import (ReshardError, ReshardWarning, StrictConfigError, active, disable,
                                  enable, strict, suspended)

ORIGINAL = (jax.device_put, type(jax.numpy.zeros(1)).__dict__["to_device"],
            jax.make_array_from_process_local_data, multihost_utils.host_local_array_to_global_array)

def restored():
    now = (jax.device_put, type(jax.numpy.zeros(1)).__dict__["to_device"],
           jax.make_array_from_process_local_data, multihost_utils.host_local_array_to_global_array)
    return all(a is b for a, b in zip(now, ORIGINAL))

def code_of(call):
    try:
        call()
    except ReshardError as e:
        return e.code
    return None

devs = jax.devices()
mesh = Mesh(np.array(devs), ("x",))
x = jax.device_put(np.arange(2.0 * len(devs)), NamedSharding(mesh, P("x")))
mid = NamedSharding(Mesh(np.array(devs[2:6]), ("x",)), P("x"))
half = NamedSharding(Mesh(np.array(devs[:4]), ("x",)), P("x"))
rev = NamedSharding(Mesh(np.array(devs[::-1]), ("x",)), P("x"))
"""


def check(run: Run, body: str, devices: int = 8) -> None:
    proc = run(SETUP + body + "\nprint('OK')\n", devices=devices)
    assert proc.returncode == 0 and proc.stdout.strip().endswith("OK"), proc.stdout + proc.stderr


def test_importing_runtime_and_plugin_does_not_import_jax() -> None:
    code = ("import sys, reshard_lint.runtime, reshard_lint.runtime.pytest_plugin, "
            "reshard_lint.runtime.errors\n"
            "from reshard_lint.runtime import strict, enable, disable, StrictConfig\n"
            "StrictConfig(processes=2)\n"
            "assert 'jax' not in sys.modules, 'jax imported'\nprint('OK')")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("kwargs", [{"processes": 0}, {"processes": "2"}, {"processes": True},
                                    {"reorder": "loud"}])
def test_bad_settings_are_refused_before_anything_is_patched(kwargs: dict[str, object]) -> None:
    with pytest.raises(StrictConfigError):
        StrictConfig(**kwargs)  # type: ignore[arg-type]
    with pytest.raises(StrictConfigError):
        with strict(**kwargs):  # type: ignore[arg-type]
            pass


def test_error_and_warning_types() -> None:
    err = ReshardError("RSH201 x", code="RSH201", call="device_put", source=(0, 1), target=(0,))
    assert isinstance(err, ValueError) and err.code == "RSH201"
    assert err.source == (0, 1) and err.target == (0,) and err.call == "device_put"
    warning = ReshardWarning("RSH202 x", code="RSH202", call="device_put", source=(0, 1), target=(1, 0))
    assert isinstance(warning, UserWarning) and warning.code == "RSH202"


def test_error_carries_code_and_device_lists(python8: Run) -> None:
    check(python8, """
with strict(processes=1):
    try:
        jax.device_put(x, mid)
    except ValueError as e:  # code that handles JAX's ValueError handles this one
        assert type(e) is ReshardError
        assert (e.code, e.call, e.source, e.target) == ("RSH201", "device_put", tuple(range(8)), (2, 3, 4, 5))
    else:
        raise AssertionError("no error")
""")


def test_nesting_inner_settings_win_then_outer_apply_again(python8: Run) -> None:
    check(python8, """
with strict(processes=1) as outer:
    assert active() is outer
    assert code_of(lambda: jax.device_put(x, devs[0])) is None
    with strict(processes=2, reorder="raise") as inner:
        assert active() is inner
        assert code_of(lambda: jax.device_put(x, devs[0])) == "RSH301"
        assert code_of(lambda: jax.device_put(x, rev)) == "RSH202"
        with strict(processes=2):
            # A subset of jax.devices() is another device set (RSH201) even when it sits on
            # one process; the devices jax.local_devices() names are process-local (RSH303).
            assert code_of(lambda: jax.device_put(x, half)) == "RSH201"
            local = NamedSharding(Mesh(np.array(jax.local_devices()), ("x",)), P("x"))
            assert code_of(lambda: jax.device_put(x, local)) == "RSH303"
        assert active() is inner
    assert active() is outer
    assert code_of(lambda: jax.device_put(x, half)) == "RSH201"
    with suspended():
        assert active() is None
        jax.device_put(x, half)
    assert not restored()
assert active() is None and restored()
""")


def test_exit_by_exception_restores_jax(python8: Run) -> None:
    check(python8, """
try:
    with strict():
        jax.device_put(x, mid)
except ReshardError:
    pass
assert restored() and active() is None
jax.device_put(x, mid)  # plain JAX again: works on one host
""")


def test_enable_disable_for_the_whole_process(python8: Run) -> None:
    check(python8, """
disable()  # nothing enabled: harmless
assert restored()
enable(processes=2)
assert code_of(lambda: jax.device_put(x, devs[0])) == "RSH301"
assert code_of(lambda: x.to_device(mid)) == "RSH201"
enable(processes=1)  # replaces the settings
assert code_of(lambda: jax.device_put(x, devs[0])) is None
with strict(processes=2):  # a block still wins while open
    assert code_of(lambda: jax.device_put(x, devs[0])) == "RSH301"
assert active().processes == 1
disable()
assert restored() and active() is None
jax.device_put(x, mid)
""")


_NUMPY = """
NAMES = ("asarray", "array", "asanyarray", "ascontiguousarray", "asfortranarray", "frombuffer")
NUMPY = {name: getattr(np, name) for name in NAMES}
def numpy_own():
    return all(getattr(np, name) is NUMPY[name] for name in NAMES)
def numpy_replaced():
    return all(getattr(np, name) is not NUMPY[name] for name in NAMES)
assert all(type(f).__name__ == "builtin_function_or_method" for f in NUMPY.values())
"""


def test_numpy_is_replaced_once_something_is_put_on_another_process_device(python8: Run) -> None:
    """numpy's conversion functions read a one-device CPU array without JAX's Python, so
    strict mode replaces them once a call it checks puts something on one device another
    simulated process owns, and only while the settings simulate several processes."""
    check(python8, _NUMPY + """
with strict(processes=1):
    far = jax.device_put(np.arange(2.0), devs[-1])  # one process: nobody else's device
    assert not restored() and numpy_own()
    with strict(processes=2):
        assert numpy_own()  # not before such a put
        jax.device_put(np.arange(2.0), devs[1])  # this process's device
        jax.device_put(np.arange(8.0), NamedSharding(mesh, P("x")))  # several devices: __array__
        assert code_of(lambda: jax.device_put(x, mid)) == "RSH201" and numpy_own()
        assert np.asarray(far).tolist() == [0, 1]  # made before: not seen (a miss, no error)
        far = jax.device_put(np.arange(2.0), devs[-1])
        assert numpy_replaced() and np.asarray.__wrapped__ is NUMPY["asarray"]
        assert code_of(lambda: np.asarray(far)) == "RSH306"
        with suspended():  # kept: the wrappers pass calls through
            assert numpy_replaced() and np.asarray(far).tolist() == [0, 1]
        assert numpy_replaced()
        with strict(processes=1):  # one process: removed
            assert numpy_own()
        assert numpy_replaced() and code_of(lambda: np.asarray(far)) == "RSH306"  # back again
    assert numpy_own()
assert restored() and numpy_own()
enable()  # auto: several processes when the devices split
assert numpy_own()
far.to_device(devs[6])
assert numpy_replaced()
enable(processes=1)
assert numpy_own()
disable()
enable(platform="tpu-v4-16")  # two hosts: starts without them again
assert numpy_own()
jax.make_array_from_callback((4,), NamedSharding(Mesh(np.array(devs[4:5]), ("x",)), P()),
                             lambda index: np.arange(4.0)[index])
assert numpy_replaced()
enable(platform="tpu-v4-8")  # one host
assert numpy_own()
disable()
assert restored() and numpy_own()
with strict(processes=2, process=-1):  # played process 1: jax.devices()[0] is another's
    jax.device_put(np.arange(2.0), devs[5])  # its own
    assert numpy_own()
    b = jax.device_put(np.arange(2.0), devs[0])
    assert numpy_replaced() and code_of(lambda: np.asarray(b)) == "RSH306"
with strict(processes=2):  # a jitted call's outputs on another process's device
    f = jax.jit(lambda a: a + 1, out_shardings=jax.sharding.SingleDeviceSharding(devs[6]))
    assert numpy_own()
    out = f(np.arange(2.0))
    assert numpy_replaced() and code_of(lambda: np.asarray(out)) == "RSH306"
assert restored() and numpy_own()
""")


def test_numpy_untouched_by_a_program_that_never_puts_on_another_process_device(python8: Run) -> None:
    """The wrappers cost more than numpy's cheapest call: a program that keeps its arrays on
    its own devices, or spread over the mesh, runs with numpy's own functions throughout."""
    check(python8, _NUMPY + """
original = np.asarray
with strict(processes=2):
    local = jax.local_devices()
    a = jax.device_put(np.arange(4.0), local[0])
    b = a.to_device(local[-1])
    c = jax.device_put(a, NamedSharding(Mesh(np.array(local), ("x",)), P("x")))
    d = jax.device_put(x, NamedSharding(mesh, P()))  # every process's devices: read via __array__
    e = jax.make_array_from_process_local_data(NamedSharding(mesh, P("x")), np.arange(8.0), (16,))
    f = jax.jit(lambda v: v * 2, out_shardings=NamedSharding(mesh, P()))(x)
    g = jax.numpy.arange(4.0) + 1  # uncommitted
    h = jax.device_put({"w": np.ones(2)}, {"w": local[1]})
    values = [np.asarray(v).tolist() for v in (a, b, c, d, f, g, h["w"])]
    assert code_of(lambda: np.asarray(e)) == "RSH305"  # split across processes: __array__'s check
    assert np.asarray is original and numpy_own()
with strict(processes=2):
    assert jax.device_put(np.arange(2.0), devs[-1]) is not None  # now one is
    assert numpy_replaced()
assert np.asarray is original and numpy_own()
""")


def test_wrapper_bound_by_name_is_harmless_after_exit(python8: Run) -> None:
    check(python8, """
with strict():
    from jax import device_put as bound
    assert bound is not ORIGINAL[0]
    assert code_of(lambda: bound(x, mid)) == "RSH201"
assert restored()
y = bound(x, mid)  # strict mode off: the stale wrapper passes straight through
assert y.sharding == mid
""")


def test_a_patch_made_over_ours_is_not_clobbered(python8: Run) -> None:
    check(python8, """
with strict():
    ours = jax.device_put
    def theirs(*a, **k):
        return ours(*a, **k)
    jax.device_put = theirs
assert jax.device_put is theirs
jax.device_put = ORIGINAL[0]
assert restored()
""")


def test_threads_share_strict_mode_safely(python8: Run) -> None:
    check(python8, """
errors = []
def worker(i):
    try:
        for _ in range(40):
            # Only calls that fail before JAX runs, or need no transfer: concurrent real
            # transfers hit JAX's own races (a stalled CPU collective rendezvous; a
            # safe_zip ValueError from device_put(x, Device) in jax 0.10.2), not ours.
            # Strict mode is process-wide and the innermost entry of any thread wins, so
            # the threads' settings differ only where these calls give the same verdict.
            with strict(processes=2, reorder=("warn", "raise")[i % 2]):
                assert code_of(lambda: jax.device_put(x, mid)) == "RSH201"
                jax.device_put(x, x.sharding)
                if i % 2:
                    assert code_of(lambda: jax.device_put(x, devs[0])) == "RSH301"
                else:
                    assert code_of(lambda: jax.device_put(x, half)) == "RSH201"
    except BaseException as e:
        errors.append(repr(e))
threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
for t in threads: t.start()
for t in threads: t.join()
assert not errors, errors
assert restored() and active() is None
""")


def test_processes_must_divide_the_devices(python8: Run) -> None:
    check(python8, """
with strict(processes=3):
    try:
        jax.device_put(x, mid)
    except StrictConfigError as e:
        assert "processes=3 does not divide the 8 cpu devices" in str(e), e
    else:
        raise AssertionError("no error")
""")


def test_four_simulated_hosts_of_two_devices(python8: Run) -> None:
    check(python8, """
with strict(processes=4):
    assert code_of(lambda: jax.device_put(x, NamedSharding(Mesh(np.array(devs[:2]), ("x",)), P("x")))) == "RSH201"
    assert jax.local_devices() == devs[:2] and jax.process_count() == 4 and jax.process_index() == 0
    two = NamedSharding(Mesh(np.array(jax.local_devices()), ("x",)), P("x"))
    assert code_of(lambda: jax.device_put(x, two)) == "RSH303"
    assert code_of(lambda: jax.device_put(x, half)) == "RSH201"  # [0..3] spans hosts 0 and 1
    y = jax.device_put(np.arange(4.0), two)
    assert code_of(lambda: jax.device_put(y, half)) == "RSH302"
    assert code_of(lambda: jax.make_array_from_process_local_data(two, np.arange(4.0), (4,))) == "RSH304"
    assert code_of(lambda: jax.make_array_from_process_local_data(half, np.arange(4.0), (4,))) is None
""")


def test_auto_is_one_process_for_an_odd_device_count(python8: Run) -> None:
    check(python8, """
assert len(devs) == 3
with strict() as config:
    assert config.processes is None
    assert code_of(lambda: jax.device_put(x, devs[0])) is None  # no split to simulate
    sub = NamedSharding(Mesh(np.array(devs[:1]), ("x",)), P())
    assert code_of(lambda: jax.device_put(x, sub)) == "RSH201"
""", devices=3)


def test_warning_category_can_be_filtered_or_raised(python8: Run) -> None:
    check(python8, """
with strict():
    with warnings.catch_warnings():
        warnings.simplefilter("error", ReshardWarning)
        try:
            jax.device_put(x, rev)
        except ReshardWarning as w:
            assert w.code == "RSH202" and w.target == tuple(range(7, -1, -1))
        else:
            raise AssertionError("no warning")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.simplefilter("ignore", ReshardWarning)
        jax.device_put(x, rev)
with strict(reorder="ignore"):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        jax.device_put(x, rev)
""")


def test_a_call_found_clean_is_checked_again_where_its_meaning_changed(python8: Run) -> None:
    # A warm device_put of the same array onto the same Sharding skips the check; the same
    # objects must still raise where they mean another move (a PartitionSpec under another
    # context mesh), and a call that raised raises every time.
    check(python8, """
spec = P("x")
same_set = Mesh(np.array(devs), ("x",))
other_set = Mesh(np.array(devs[:4]), ("x",))
with strict(processes=2):
    for _ in range(3):
        with jax.set_mesh(same_set):
            jax.device_put(x, spec)
    with jax.set_mesh(other_set):
        assert code_of(lambda: jax.device_put(x, spec)) == "RSH201"
    for _ in range(3):
        jax.device_put(x, NamedSharding(mesh, P()))
        assert code_of(lambda: jax.device_put(x, half)) == "RSH201"
with strict(processes=2, reorder="raise"):
    for _ in range(2):
        assert code_of(lambda: jax.device_put(x, rev)) == "RSH202"
""")


def test_threads_putting_arrays_leave_the_users_reads_checked(python8: Run) -> None:
    # While JAX's own device_put runs, its reads of an array's properties are JAX's: that is
    # known per thread, so threads putting arrays concurrently never leave the user's own
    # reads afterwards (or in another thread meanwhile) unchecked; nor does JAX's own read
    # of the value (a CPU reshard within one mesh copies through the host, and keeps it).
    check(python8, """
def putter():
    for _ in range(300):
        jax.device_put(x, x.sharding)
        jax.device_put(x, NamedSharding(mesh, P()))
with strict(processes=2):
    assert code_of(lambda: np.asarray(x)) == "RSH305"
    threads = [threading.Thread(target=putter) for _ in range(6)]
    for t in threads: t.start()
    seen = set()
    while any(t.is_alive() for t in threads):
        seen.add(code_of(lambda: np.asarray(x)))
    for t in threads: t.join()
    assert seen == {"RSH305"}, seen
    assert code_of(lambda: np.asarray(x)) == "RSH305"
    assert code_of(lambda: x.is_fully_addressable) is None and x.is_fully_addressable is False
""")
