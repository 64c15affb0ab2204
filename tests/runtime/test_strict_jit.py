"""Strict mode for ``jax.jit(f, in_shardings=...)`` (RSH203, RSH204), under real JAX.

What JAX 0.10.2 does with a committed argument whose sharding's device order is not the
in_sharding's (1 process x 8 CPU devices; RUNTIME-FACTS.md has the 2-process rows):
JAX compares only the HLO shardings. Where they differ it raises its own ValueError. Where
they are equal and both sides span the same number of devices, the first call copies the
argument and the second call of the same jitted function crashes the process (SIGSEGV).
The grounding test below runs that program for real, once plain and once under strict mode.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any, Callable

import pytest

# One xdist worker runs the whole module: its module-scoped set-up is made once.
pytestmark = pytest.mark.xdist_group("runtime-test_strict_jit")


TIMEOUT = 120

# The program RSH204's page describes: jit with in_shardings on the reversed device order,
# called twice on an array committed to the natural order.
CRASH_PROGRAM = textwrap.dedent("""\
    import sys
    import jax
    import numpy as np
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

    STRICT = sys.argv[1] == "strict"
    if STRICT:
        from reshard_lint.runtime import enable
        enable()
    compiles = []
    jax.monitoring.register_event_duration_secs_listener(
        lambda event, *_, **__: compiles.append(event)
        if event == "/jax/core/compile/backend_compile_duration" else None)

    assert len(jax.devices()) == 8, jax.devices()
    mesh = Mesh(np.array(jax.devices()), ("x",))
    x = jax.device_put(np.arange(8.0), NamedSharding(mesh, P("x")))
    rev = Mesh(np.array(jax.devices()[::-1]), ("x",))
    if sys.argv[2] == "context":  # a PartitionSpec, resolved on the context mesh
        jax.set_mesh(rev)
        f = jax.jit(lambda a: a * 2, in_shardings=P("x"))
    else:
        f = jax.jit(lambda a: a * 2, in_shardings=NamedSharding(rev, P("x")))
    before = len(compiles)
    try:
        y = f(x)
    except Exception:
        # Nothing was compiled or run: the argument was not even copied.
        print("compiled for the failed call:", len(compiles) - before, flush=True)
        raise
    print("first call:", float(y.sum()), flush=True)
    y = f(x)
    print("second call:", float(y.sum()), flush=True)
""")


def _env_xla_flags() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("JAX_NUM_CPU_DEVICES", None)
    env.pop("PYTEST_ADDOPTS", None)
    env["JAX_PLATFORMS"] = "cpu"
    env["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
    return env


def _run_crash_program(mode: str, spelling: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "jit_reversed_twice.py"
    script.write_text(CRASH_PROGRAM)
    return subprocess.run([sys.executable, str(script), mode, spelling], capture_output=True,
                          text=True, env=_env_xla_flags(), timeout=TIMEOUT, cwd=tmp_path)


SPELLINGS = ("sharding", "context")


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_plain_jax_copies_on_the_first_call_and_crashes_on_the_second(tmp_path: Path,
                                                                      spelling: str) -> None:
    """Grounds RSH204's "one process: the first call copies, the second crashes (SIGSEGV)",
    for in_shardings given as a sharding and as a PartitionSpec on the context mesh."""
    proc = _run_crash_program("plain", spelling, tmp_path)
    out = proc.stdout + proc.stderr
    assert proc.returncode < 0, f"expected death by a signal, got exit code {proc.returncode}:\n{out}"
    assert proc.returncode == -signal.SIGSEGV, out
    assert "first call: 56.0" in proc.stdout, out  # the first call worked (a silent copy)
    assert "second call" not in proc.stdout, out
    assert "Buffer passed to Execute()" in proc.stderr and "replica is assigned to device" in proc.stderr, out


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_strict_mode_raises_rsh204_at_the_first_call_instead(tmp_path: Path, spelling: str) -> None:
    proc = _run_crash_program("strict", spelling, tmp_path)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, f"expected an exception (exit code 1), got {proc.returncode}:\n{out}"
    assert "reshard_lint.runtime.errors.ReshardError: RSH204 jit(<lambda>) takes argument 0 on devices " \
           "[0, 1, 2, 3, 4, 5, 6, 7] through in_shardings on [7, 6, 5, 4, 3, 2, 1, 0], the same " \
           "devices in another order" in proc.stderr, out
    assert "SIGSEGV" in proc.stderr  # the message says what JAX would have done
    assert "first call" not in proc.stdout, out
    assert "compiled for the failed call: 0" in proc.stdout, out  # raised before JAX ran


# --------------------------------------------------------------------------- the matrix

JIT_PRELUDE = textwrap.dedent("""\
    import jax
    import numpy as np
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

    devs = jax.devices()
    mesh = Mesh(np.array(devs), ("x",))
    x = jax.device_put(np.arange(64.0).reshape(8, 8), NamedSharding(mesh, P("x")))
    from jax.sharding import SingleDeviceSharding
    rev = Mesh(np.array(devs[::-1]), ("x",))
    lo = Mesh(np.array(devs[:4]), ("x",))
    hi = Mesh(np.array(devs[4:]), ("x",))
    data = np.arange(64.0).reshape(8, 8)
""")

# (name, program, plain JAX, strict(processes=1), strict(processes=2)).
# plain: "ok" or "error:<exception type>"; strict: "ok", "error:RSHnnn", "warn:RSHnnn".
# Every program calls its jitted function once: twice would crash plain JAX (see above).
JIT_CASES: tuple[tuple[str, str, str, str, str], ...] = (
    # --- RSH204: same devices, other order ---
    ("reversed", """
        f = jax.jit(lambda a: a * 2, in_shardings=NamedSharding(rev, P("x")))
        out = f(x)
        """, "ok", "error:RSH204", "error:RSH204"),
    ("reversed_replicated", """
        r = jax.device_put(data, NamedSharding(mesh, P()))
        out = jax.jit(lambda a: a * 2, in_shardings=NamedSharding(rev, P()))(r)
        """, "ok", "error:RSH204", "error:RSH204"),
    ("transposed_grid_same_placement", """
        grid = Mesh(np.array(devs).reshape(2, 4), ("a", "b"))
        g = jax.device_put(data, NamedSharding(grid, P(("a", "b"))))
        t = Mesh(grid.devices.T, ("b", "a"))
        out = jax.jit(lambda a: a + 1, in_shardings=NamedSharding(t, P(("b", "a"))))(g)
        """, "ok", "error:RSH204", "error:RSH204"),
    ("reversed_other_spec", """
        out = jax.jit(lambda a: a + 1, in_shardings=NamedSharding(rev, P()))(x)
        """, "error:ValueError", "error:RSH204", "error:RSH204"),
    ("decorator_static_pytree", """
        from functools import partial

        @partial(jax.jit, static_argnums=0, in_shardings=NamedSharding(rev, P("x")))
        def step(n, batch):
            return batch["w"] * n

        out = step(3, {"w": x})
        """, "ok", "error:RSH204", "error:RSH204"),
    ("decorator_factory_method", """
        class Model:
            @jax.jit(static_argnums=0, in_shardings=(NamedSharding(rev, P("x")),))
            def apply(self, a):
                return a + 1

        out = Model().apply(x)
        """, "ok", "error:RSH204", "error:RSH204"),
    ("context_mesh_partition_spec", """
        with jax.set_mesh(rev):
            out = jax.jit(lambda a: a * 2, in_shardings=P("x"))(x)
        """, "ok", "error:RSH204", "error:RSH204"),
    # --- RSH203: another device set ---
    ("subset", """
        out = jax.jit(lambda a: a + 1, in_shardings=NamedSharding(lo, P("x")))(x)
        """, "error:ValueError", "error:RSH203", "error:RSH203"),
    ("disjoint_halves", """
        a = jax.device_put(data, NamedSharding(lo, P("x")))
        out = jax.jit(lambda v: v + 1, in_shardings=NamedSharding(hi, P("x")))(a)
        """, "ok", "error:RSH203", "error:RSH203"),
    ("other_devices_of_one_process", """
        a = jax.device_put(data, NamedSharding(Mesh(np.array(devs[:2]), ("x",)), P("x")))
        other = NamedSharding(Mesh(np.array(devs[2:4]), ("x",)), P("x"))
        out = jax.jit(lambda v: v + 1, in_shardings=other)(a)
        """, "ok", "error:RSH203", "error:RSH203"),
    ("one_device_to_a_device_of_another_process", """
        a = jax.device_put(data, devs[0])
        out = jax.jit(lambda v: v + 1, in_shardings=SingleDeviceSharding(devs[5]))(a)
        """, "ok", "ok", "error:RSH203"),
    ("half_replicated_to_all_replicated", """
        a = jax.device_put(data, NamedSharding(lo, P()))
        out = jax.jit(lambda v: v + 1, in_shardings=NamedSharding(mesh, P()))(a)
        """, "ok", "ok", "error:RSH203"),
    # --- clean ---
    ("same_mesh", """
        out = jax.jit(lambda a: a * 2, in_shardings=NamedSharding(mesh, P("x")))(x)
        """, "ok", "ok", "ok"),
    ("same_order_reshaped_mesh", """
        grid = Mesh(mesh.devices.reshape(2, 4), ("a", "b"))
        out = jax.jit(lambda a: a * 2, in_shardings=NamedSharding(grid, P(("a", "b"))))(x)
        """, "ok", "ok", "ok"),
    ("host_and_uncommitted_data", """
        f = jax.jit(lambda a, b, c: a + b + c, in_shardings=NamedSharding(rev, P("x")))
        out = f(data, jax.numpy.ones((8, 8)), 1.0 + np.zeros((8, 8)))
        """, "ok", "ok", "ok"),
    ("put_on_the_jit_sharding_first", """
        s = NamedSharding(rev, P("x"))
        x = jax.device_put(x, s)
        out = jax.jit(lambda a: a * 2, in_shardings=s)(x)
        """, "ok", "warn:RSH202", "warn:RSH202"),
    ("one_device_to_another_of_one_process", """
        a = jax.device_put(data, devs[0])
        out = jax.jit(lambda v: v + 1, in_shardings=SingleDeviceSharding(devs[3]))(a)
        """, "ok", "ok", "ok"),
    ("one_device_to_replicated_on_its_process", """
        a = jax.device_put(data, devs[0])
        out = jax.jit(lambda v: v + 1, in_shardings=NamedSharding(lo, P()))(a)
        """, "ok", "ok", "ok"),
    ("no_in_shardings_or_none", """
        f = jax.jit(lambda a, b: a + b, in_shardings=None)
        out = (jax.jit(lambda a: a * 2)(x), f(x, x))
        """, "ok", "ok", "ok"),
    ("called_inside_another_jit", """
        inner = jax.jit(lambda a: a * 2, in_shardings=NamedSharding(rev, P("x")))
        # A tracer: JAX judges it (INCOMPAT), and strict mode reports JAX's error as RSH203.
        out = jax.jit(lambda a: inner(a) + 1)(x)
        """, "error:ValueError", "error:RSH203", "error:RSH203"),
)


@pytest.fixture(scope="module")
def jit_results(tmp_path_factory: pytest.TempPathFactory,
                driver: Callable[[list[dict[str, Any]], Path], dict[str, Any]]) -> dict[str, Any]:
    cases = [{"name": name, "code": JIT_PRELUDE + textwrap.dedent(body)}
             for name, body, *_ in JIT_CASES]
    return driver(cases, tmp_path_factory.mktemp("jit"))


def _outcome(result: dict[str, Any], plain: bool = False) -> str:
    if result["status"] == "error":
        return f"error:{result['exc_type']}" if plain or result["code"] is None else f"error:{result['code']}"
    codes = [w["code"] for w in result["warnings"]]
    return f"warn:{codes[0]}" if codes else "ok"


@pytest.mark.parametrize("case", JIT_CASES, ids=[c[0] for c in JIT_CASES])
def test_jit_verdicts(jit_results: dict[str, Any], case: tuple[str, str, str, str, str]) -> None:
    name, _, plain, p1, p2 = case
    assert _outcome(jit_results["plain"][name], plain=True) == plain, jit_results["plain"][name]
    assert _outcome(jit_results["off"][name], plain=True) == plain, jit_results["off"][name]
    for mode, expected in (("p1", p1), ("p2", p2), ("auto", p2)):
        got = jit_results[mode][name]
        assert _outcome(got) == expected, (mode, got)
        if expected.startswith("error:RSH"):
            assert got["exc_type"] == "ReshardError", got
            assert got["message"].startswith(expected[6:] + " jit("), got
        assert jit_results["restored_after"][f"{mode}:{name}"], "jax.jit (or another) not restored"
    if plain == "ok":  # strict mode off afterwards: same values as plain JAX
        assert jit_results["off"][name]["out"] == jit_results["plain"][name]["out"]


def test_messages_say_what_jax_does(jit_results: dict[str, Any]) -> None:
    crash = jit_results["p2"]["reversed"]["message"]
    assert "the second call of the same jitted function crashes the process (SIGSEGV" in crash
    assert "build in_shardings on the argument's mesh" in crash
    mismatch = jit_results["p2"]["subset"]["message"]
    assert "Sharding passed to jit does not match the sharding on the respective arg" in mismatch
    assert "[0, 1, 2, 3, 4, 5, 6, 7] through in_shardings on [0, 1, 2, 3], a different device set" in mismatch
    spans = jit_results["p2"]["half_replicated_to_all_replicated"]["message"]
    assert "Cannot reshard an input that is not fully addressable" in spans
    assert "simulated processes [0, 1]" in spans
    leaf = jit_results["p2"]["decorator_static_pytree"]
    assert "takes argument 1 leaf ['w'] on devices" in leaf["message"], leaf
    assert leaf["source"] == list(range(8)) and leaf["target"] == list(range(7, -1, -1))


# --------------------------------------------------------------------------- JAX's miss path

def test_only_calls_jax_cannot_serve_from_its_cache_reach_the_check(python8: Callable[..., Any]) -> None:
    """Strict mode checks jitted calls where JAX's C++ dispatch falls back to Python: once per
    new argument sharding, for functions jitted before strict mode too, and jitted
    functions stay JAX's own objects."""
    proc = python8(JIT_PRELUDE + textwrap.dedent("""
        from reshard_lint.runtime import ReshardError, strict
        from reshard_lint.runtime import _jit

        checks = []  # the user's functions that reached the check (JAX's own jits do too)
        check = _jit.check_jit_miss
        _jit.check_jit_miss = lambda *a: (checks.append(a[3]) if a[3].__module__ == "__main__"
                                          else None, check(*a))

        s = NamedSharding(mesh, P("x"))
        early = jax.jit(lambda a: a * 2, in_shardings=NamedSharding(rev, P("x")))  # before strict
        plain = type(jax.jit(lambda a: a))
        with strict():
            f = jax.jit(lambda a: a * 2, in_shardings=s)
            assert type(f) is plain and type(early) is plain  # JAX's own objects
            for _ in range(5):
                f(x)
            assert len(checks) == 1, checks  # warm calls never reach Python
            f(jax.device_put(np.arange(64.0), s))  # another rank: a new signature
            assert len(checks) == 2, checks
            for attempt in range(2):  # a rejected call is rejected again, never cached
                try:
                    early(x)
                except ReshardError as e:
                    assert e.code == "RSH204" and e.call == "jit", e
                    assert str(e).startswith("RSH204 jit(<lambda>) takes argument 0 on devices "
                                             "[0, 1, 2, 3, 4, 5, 6, 7]"), e
                else:
                    raise AssertionError("no RSH204")
        assert float(f(x).sum()) == 2 * float(x.sum())  # off: JAX alone
        print("OK")
    """))
    assert proc.returncode == 0 and proc.stdout.strip().endswith("OK"), proc.stdout + proc.stderr


def test_miss_path_names_the_leaf(python8: Callable[..., Any]) -> None:
    proc = python8(JIT_PRELUDE + textwrap.dedent("""
        from reshard_lint.runtime import ReshardError, strict

        s = NamedSharding(mesh, P("x"))
        good = jax.device_put(data, s)
        bad = jax.device_put(data, NamedSharding(rev, P("x")))

        def message(fn, *args):
            try:
                fn(*args)
            except ReshardError as e:
                return str(e)
            raise AssertionError("no ReshardError")

        with strict():
            g = jax.jit(lambda n, t: t["w"] * n + t["b"], static_argnums=0, in_shardings=s)
            h = jax.jit(lambda t: t["w"]["deep"] + t["b"][0] + t["b"][1][0], in_shardings=s)
            g(2, {"w": good, "b": good})
            assert "takes argument 1 leaf ['b'] on devices [7, 6" in message(g, 2, {"w": good, "b": bad})
            h({"w": {"deep": good}, "b": [good, (good,)]})
            assert "takes argument 0 leaf ['b'][1][0] on devices [7, 6" in \
                message(h, {"w": {"deep": good}, "b": [good, (bad,)]})
            # The same array twice: the first place it appears in is named.
            assert "takes argument 0 leaf ['b'][0] on devices [7, 6" in \
                message(h, {"w": {"deep": good}, "b": [bad, (bad,)]})
        print("OK")
    """))
    assert proc.returncode == 0 and proc.stdout.strip().endswith("OK"), proc.stdout + proc.stderr


# --------------------------------------------------------------------------- the wrapper
# A JAX without the miss path (other versions) gets a wrapper per function jitted under
# strict mode; these tests take that way on this JAX.

FORCE_WRAPPER = textwrap.dedent("""\
    from reshard_lint.runtime import _patch
    _patch.miss_path_owner = lambda: None
""")


def test_wrapper_caches_verdicts_and_passes_through_when_off(python8: Callable[..., Any]) -> None:
    proc = python8(JIT_PRELUDE + FORCE_WRAPPER + textwrap.dedent("""
        import inspect
        from reshard_lint.runtime import ReshardError, strict
        from reshard_lint.runtime._patch import StrictJitted

        original = jax.jit
        plain = jax.jit(lambda a: a + 1)
        with strict():
            assert jax.jit is not original
            f = jax.jit(lambda a: a * 2, in_shardings=NamedSharding(mesh, P("x")))
            assert isinstance(f, StrictJitted)
            assert type(jax.jit(lambda a: a)) is type(plain)  # no in_shardings: JAX's own object
            for _ in range(3):
                f(x)
            assert len(f._rsh_signature.verdicts) == 1, f._rsh_signature.verdicts
            f(data)  # host data: nothing to judge, nothing cached
            assert len(f._rsh_signature.verdicts) == 1
            f(jax.device_put(np.arange(64.0), NamedSharding(mesh, P("x"))))  # another rank
            assert len(f._rsh_signature.verdicts) == 2
            assert f.lower(x).compile() is not None and f._cache_size() == 3  # JAX's own attributes
            assert f.__name__ == "<lambda>" and inspect.signature(f) is not None
            r = jax.jit(lambda a: a * 2, in_shardings=NamedSharding(rev, P("x")))
            try:
                r(x)
            except ReshardError as e:
                assert e.code == "RSH204" and e.call == "jit", e
            else:
                raise AssertionError("no RSH204")
        assert jax.jit is original
        s = NamedSharding(rev, P("x"))
        y = r(jax.device_put(x, s))  # strict mode off: the wrapper passes calls through
        assert float(y.sum()) == 2 * float(x.sum())
        print("OK")
    """))
    assert proc.returncode == 0 and proc.stdout.strip().endswith("OK"), proc.stdout + proc.stderr


def test_warm_pytree_calls_still_judge_every_leaf(python8: Callable[..., Any]) -> None:
    """The warm path (each leaf on its in_sharding object) must not let a changed leaf through."""
    proc = python8(JIT_PRELUDE + FORCE_WRAPPER + textwrap.dedent("""
        from reshard_lint.runtime import ReshardError, strict

        s = NamedSharding(mesh, P("x"))
        good = jax.device_put(data, s)
        with strict():
            g = jax.jit(lambda t, n: t["w"] * n + t["b"], in_shardings=(s, None))
            h = jax.jit(lambda t: t["w"]["deep"] + t["b"][0] + t["b"][1][0], in_shardings=s)
            nested = {"w": {"deep": good}, "b": [good, (good,)]}
            for _ in range(3):
                g({"w": good, "b": good}, 2)  # a dict of arrays: no flatten
                h(nested)  # nested: flattened, one plan for its shape
            # On the in_sharding object itself: no verdict needed, none cached.
            assert not g._rsh_signature.plans and not g._rsh_signature.verdicts
            assert len(h._rsh_signature.plans) == 1 and not h._rsh_signature.verdicts
            g({"w": good, "b": data}, 2)  # host data in the same shape: nothing to judge
            g({"w": good, "b": jax.device_put(x, NamedSharding(mesh, P("x")))}, 2)  # equal, not the same
            assert len(g._rsh_signature.verdicts) == 1
            bad = jax.device_put(data, NamedSharding(rev, P("x")))
            for _ in range(2):  # the second call of the same shape is judged too
                try:
                    g({"w": good, "b": bad}, 2)
                except ReshardError as e:
                    assert e.code == "RSH204", e
                    assert "takes argument 0 leaf ['b'] on devices [7, 6, 5, 4, 3, 2, 1, 0]" in str(e), e
                else:
                    raise AssertionError("no RSH204")
            try:
                h({"w": {"deep": good}, "b": [good, (bad,)]})
            except ReshardError as e:
                assert "takes argument 0 leaf ['b'][1][0] on devices [7, 6" in str(e), e
            else:
                raise AssertionError("no RSH204 for a nested leaf")
        print("OK")
    """))
    assert proc.returncode == 0 and proc.stdout.strip().endswith("OK"), proc.stdout + proc.stderr


def test_pytest_flag_fails_the_test_instead_of_crashing(tmp_path: Path,
                                                        jax_subprocess_env: dict[str, str]) -> None:
    (tmp_path / "test_user.py").write_text(textwrap.dedent("""\
        from functools import partial

        import jax
        import numpy as np
        from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

        REV = NamedSharding(Mesh(np.array(jax.devices()[::-1]), ("x",)), P("x"))


        @partial(jax.jit, in_shardings=REV)  # made at import: the plugin is on by then
        def step(a):
            return a * 2


        def test_step_twice():
            mesh = Mesh(np.array(jax.devices()), ("x",))
            x = jax.device_put(np.arange(16.0), NamedSharding(mesh, P("x")))
            step(x)
            step(x)


        def test_step_on_its_sharding():
            step(jax.device_put(np.arange(16.0), REV))
    """))
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rA",
                           "--reshard-strict", str(tmp_path / "test_user.py")],
                          cwd=tmp_path, capture_output=True, text=True, env=jax_subprocess_env,
                          timeout=TIMEOUT)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out  # failed tests, not a dead process
    assert "FAILED test_user.py::test_step_twice" in out
    assert "PASSED test_user.py::test_step_on_its_sharding" in out
    assert "ReshardError: RSH204 jit(step) takes argument 0 on devices [0, 1, 2, 3, 4, 5, 6, 7]" in out
    assert "rule:    RSH204 (in jit)" in out
