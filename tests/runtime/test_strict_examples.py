"""Strict mode on small programs modelled on RUNTIME-FACTS.md, under real JAX (8 CPU devices).

Every program runs in one child process (see strict_driver.py) in each mode: plain JAX,
strict(processes=1), strict(processes=2), strict() (auto, = 2 here), reorder='raise', and
plain again after strict mode has exited. A firing program must fail (or warn for RSH202)
with its rule; a clean one must behave exactly as plain JAX does.

To add an example: append a ``Case`` with its program (the PRELUDE is prepended) and the
expected outcome per mode; mark the line that fires with ``# fires``.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import pytest

# One xdist worker runs the whole module: its module-scoped set-up is made once.
pytestmark = pytest.mark.xdist_group("runtime-test_strict_examples")


PRELUDE = textwrap.dedent("""\
    import jax
    import numpy as np
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

    devs = jax.devices()
    mesh = Mesh(np.array(devs), ("x",))
    x = jax.device_put(np.arange(64.0).reshape(8, 8), NamedSharding(mesh, P("x")))
""")

OK = "ok"
MODES = ("p1", "p2", "auto", "raise")


@dataclass(frozen=True)
class Case:
    name: str
    body: str
    p1: str  # "ok", "error:RSHnnn" or "warn:RSHnnn"
    p2: str
    raise_: str | None = None  # reorder='raise' (processes=2); defaults to p2 with warn -> error

    @property
    def code(self) -> str:
        return PRELUDE + textwrap.dedent(self.body)

    def expected(self, mode: str) -> str:
        if mode == "p1":
            return self.p1
        if mode == "auto":  # 8 devices: auto means 2 simulated processes
            return self.p2
        if mode == "raise":
            return self.raise_ or self.p2.replace("warn:", "error:")
        return self.p2

    @property
    def fires_line(self) -> int | None:
        for number, line in enumerate(self.code.splitlines(), start=1):
            if line.rstrip().endswith("# fires"):
                return number
        return None


CASES: tuple[Case, ...] = (
    # --- RSH201: different device set (RUNTIME-FACTS "device_put to a different set") ---
    Case("all_to_first_half", """
        half = Mesh(np.array(devs[:4]), ("x",))
        out = jax.device_put(x, NamedSharding(half, P("x")))  # fires
        """, p1="error:RSH201", p2="error:RSH201"),
    Case("all_to_local_devices", """
        local = Mesh(np.array(jax.local_devices()[:4]), ("x",))
        out = jax.device_put(x, NamedSharding(local, P("x")))  # fires
        """, p1="error:RSH201", p2="error:RSH303"),
    Case("all_to_straddling_subset", """
        mid = Mesh(np.array(devs[2:6]), ("x",))
        out = jax.device_put(x, NamedSharding(mid, P("x")))  # fires
        """, p1="error:RSH201", p2="error:RSH201"),
    Case("same_processes_other_devices", """
        a = Mesh(np.array([devs[0], devs[1], devs[4], devs[5]]), ("x",))
        b = Mesh(np.array([devs[2], devs[3], devs[6], devs[7]]), ("x",))
        y = jax.device_put(np.arange(8.0), NamedSharding(a, P("x")))
        out = jax.device_put(y, NamedSharding(b, P("x")))  # fires
        """, p1="error:RSH201", p2="error:RSH201"),
    Case("pytree_leaf_to_subset", """
        mid = Mesh(np.array(devs[2:6]), ("x",))
        params = {"w": x, "b": np.ones(4)}
        out = jax.device_put(params, NamedSharding(mid, P()))  # fires
        """, p1="error:RSH201", p2="error:RSH201"),
    Case("pytree_prefix_of_shardings", """
        rev = Mesh(np.array(devs[::-1]), ("x",))
        mid = Mesh(np.array(devs[2:6]), ("x",))
        out = jax.device_put((x, x), (NamedSharding(rev, P("x")), NamedSharding(mid, P("x"))))  # fires
        """, p1="error:RSH201", p2="error:RSH201"),
    Case("to_device_subset", """
        mid = Mesh(np.array(devs[2:6]), ("x",))
        out = x.to_device(NamedSharding(mid, P("x")))  # fires
        """, p1="error:RSH201", p2="error:RSH201"),
    Case("partition_spec_under_set_mesh", """
        mid = Mesh(np.array(devs[2:6]), ("x",))
        with jax.set_mesh(mid):
            out = jax.device_put(x, P("x"))  # fires
        """, p1="error:RSH201", p2="error:RSH201"),
    Case("src_and_may_alias_arguments", """
        mid = Mesh(np.array(devs[2:6]), ("x",))
        out = jax.device_put(x, NamedSharding(mid, P("x")), src=x.sharding, may_alias=False)  # fires
        """, p1="error:RSH201", p2="error:RSH201"),
    Case("callback_origin_to_subset", """
        data = np.arange(64.0).reshape(8, 8)
        y = jax.make_array_from_callback((8, 8), NamedSharding(mesh, P("x")), lambda idx: data[idx])
        out = jax.device_put(y, NamedSharding(Mesh(np.array(devs[2:6]), ("x",)), P("x")))  # fires
        """, p1="error:RSH201", p2="error:RSH201"),
    Case("move_between_devices_of_one_host", """
        # Under 2-process JAX the process holding neither group raises the SEED error.
        y = jax.device_put(np.arange(8.0), NamedSharding(Mesh(np.array(devs[:2]), ("x",)), P("x")))
        out = jax.device_put(y, NamedSharding(Mesh(np.array(devs[2:4]), ("x",)), P("x")))  # fires
        """, p1="error:RSH201", p2="error:RSH201"),
    Case("one_host_to_the_other_same_layout", """
        y = jax.device_put(np.arange(8.0), NamedSharding(Mesh(np.array(devs[:4]), ("x",)), P("x")))
        out = jax.device_put(y, NamedSharding(Mesh(np.array(devs[4:]), ("x",)), P("x")))  # fires
        """, p1="error:RSH201", p2="error:RSH201"),
    # --- RSH202: same set, another order ---
    Case("reversed_mesh", """
        rev = Mesh(np.array(devs[::-1]), ("x",))
        out = jax.device_put(x, NamedSharding(rev, P("x")))  # fires
        """, p1="warn:RSH202", p2="warn:RSH202"),
    Case("transposed_grid", """
        grid = np.array(devs).reshape(2, 4)
        t = Mesh(grid.T, ("a", "b"))
        out = jax.device_put(x, NamedSharding(t, P(("a", "b"))))  # fires
        """, p1="warn:RSH202", p2="warn:RSH202"),
    Case("to_device_reversed", """
        rev = Mesh(np.array(devs[::-1]), ("x",))
        out = x.to_device(NamedSharding(rev, P("x")))  # fires
        """, p1="warn:RSH202", p2="warn:RSH202"),
    # --- RSH3xx: global versus process-local (processes=2) ---
    Case("global_to_device", """
        out = jax.device_put(x, devs[0])  # fires
        """, p1=OK, p2="error:RSH301"),
    Case("global_without_target", """
        out = jax.device_put(x, may_alias=True)  # fires
        """, p1=OK, p2="error:RSH301"),
    Case("global_to_device_method", """
        out = x.to_device(devs[3])  # fires
        """, p1=OK, p2="error:RSH301"),
    Case("local_to_global", """
        local = Mesh(np.array(jax.local_devices()[:4]), ("x",))
        y = jax.device_put(np.arange(8.0), NamedSharding(local, P("x")))
        out = jax.device_put(y, NamedSharding(mesh, P("x")))  # fires
        """, p1="error:RSH201", p2="error:RSH302"),
    Case("global_to_local_mesh_replicated", """
        local = Mesh(np.array(jax.local_devices()[:4]).reshape(2, 2), ("a", "b"))
        out = jax.device_put(x, NamedSharding(local, P()))  # fires
        """, p1="error:RSH201", p2="error:RSH303"),
    Case("process_local_data_on_local_mesh", """
        local = Mesh(np.array(devs[:4]), ("x",))
        per_host = np.arange(8.0)
        global_shape = (per_host.shape[0] * jax.process_count(),)
        s = NamedSharding(local, P("x"))
        out = jax.make_array_from_process_local_data(s, per_host, global_shape)  # fires
        """, p1=OK, p2="error:RSH304"),
    Case("host_local_to_global_on_local_mesh", """
        from jax.experimental import multihost_utils
        local = Mesh(np.array(devs[:4]), ("x",))
        out = multihost_utils.host_local_array_to_global_array(np.arange(8.0), local, P("x"))  # fires
        """, p1=OK, p2="error:RSH304"),
    # --- RSH306: reading an array on another process's device (numpy's buffer protocol) ---
    Case("numpy_read_of_another_process_device", """
        far = jax.device_put(np.arange(8.0), devs[-1])  # legal: the owner gets it, the others cannot read it
        out = np.asarray(far)  # fires
        """, p1=OK, p2="error:RSH306"),
    # --- clean programs: strict mode must not notice them ---
    Case("same_mesh_new_spec", """
        out = jax.device_put(x, NamedSharding(mesh, P(None, "x")))
        """, p1=OK, p2=OK),
    Case("fixed_on_own_mesh", """
        out = jax.device_put(x, NamedSharding(x.sharding.mesh, P()))
        """, p1=OK, p2=OK),
    Case("same_sharding_and_uncommitted_without_target", """
        out = (jax.device_put(x, x.sharding), jax.device_put(jax.numpy.arange(8.0)))
        """, p1=OK, p2=OK),
    Case("uncommitted_to_subset", """
        half = Mesh(np.array(devs[:4]), ("x",))
        out = jax.device_put(jax.numpy.arange(8.0), NamedSharding(half, P("x")))
        """, p1=OK, p2=OK),
    Case("numpy_to_subset", """
        half = Mesh(np.array(devs[:4]), ("x",))
        out = jax.device_put({"a": np.arange(8.0), "b": 3.0}, NamedSharding(half, P()))
        """, p1=OK, p2=OK),
    Case("single_device_local_data", """
        from jax.sharding import SingleDeviceSharding
        local = jax.local_devices()  # each process's own devices (on one host: all of them)
        y = jax.device_put(np.arange(4.0), local[0])
        moved = jax.device_put(y, local[1])
        made = jax.make_array_from_process_local_data(SingleDeviceSharding(local[0]), np.arange(4.0))
        out = (moved, made)
        """, p1=OK, p2=OK),
    Case("global_process_local_data", """
        out = jax.make_array_from_process_local_data(NamedSharding(mesh, P("x")), np.arange(16.0), (16,))
        """, p1=OK, p2=OK),
    Case("host_local_to_global_full_mesh", """
        from jax.experimental import multihost_utils
        # P(): every process passes the whole array, so the pod's global array is JAX's.
        out = multihost_utils.host_local_array_to_global_array(np.arange(16.0), mesh, P())
        """, p1=OK, p2=OK),
    Case("reversed_but_replicated", """
        xr = jax.device_put(np.arange(8.0), NamedSharding(mesh, P()))
        out = jax.device_put(xr, NamedSharding(Mesh(np.array(devs[::-1]), ("x",)), P()))
        """, p1=OK, p2=OK),
    Case("numpy_read_of_own_device", """
        mine = jax.device_put(np.arange(8.0), jax.local_devices()[-1])
        out = (np.asarray(mine), np.array(mine + 1), np.asarray([1.0, 2.0]))
        """, p1=OK, p2=OK),
    Case("jit_on_one_mesh", """
        f = jax.jit(lambda a: jax.device_put(a * 2, NamedSharding(mesh, P(None, "x"))))
        out = f(x)
        """, p1=OK, p2=OK),
)

BY_NAME = {case.name: case for case in CASES}


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory,
            driver: Callable[[list[dict[str, Any]], Path], dict[str, Any]]) -> dict[str, Any]:
    cases = [{"name": c.name, "code": c.code} for c in CASES]
    return driver(cases, tmp_path_factory.mktemp("strict"))


def outcome(result: dict[str, Any]) -> str:
    if result["status"] == "error":
        return f"error:{result['code']}" if result["code"] else f"error:{result['exc_type']}"
    codes = sorted({w["code"] for w in result["warnings"]})
    return f"warn:{','.join(codes)}" if codes else OK


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", list(BY_NAME))
def test_outcome(results: dict[str, Any], name: str, mode: str) -> None:
    case = BY_NAME[name]
    result = results[mode][name]
    assert outcome(result) == case.expected(mode), result


@pytest.mark.parametrize("name", list(BY_NAME))
def test_every_example_runs_on_plain_jax(results: dict[str, Any], name: str) -> None:
    # On one host JAX accepts all of them: that is exactly why strict mode exists.
    assert results["plain"][name]["status"] == "ok", results["plain"][name]
    assert results["plain"][name]["warnings"] == []


@pytest.mark.parametrize("name", list(BY_NAME))
def test_off_changes_nothing(results: dict[str, Any], name: str) -> None:
    plain, off = results["plain"][name], results["off"][name]
    assert off == plain
    for mode in MODES:
        assert results["restored_after"][f"{mode}:{name}"], f"JAX functions not restored after {mode}"


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", list(BY_NAME))
def test_passing_calls_compute_what_jax_computes(results: dict[str, Any], name: str, mode: str) -> None:
    result = results[mode][name]
    if result["status"] != "ok":
        return
    assert result["out"] == results["plain"][name]["out"]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", list(BY_NAME))
def test_error_message_names_rule_devices_and_fix(results: dict[str, Any], name: str, mode: str) -> None:
    result = results[mode][name]
    if result["status"] != "error":
        return
    code = result["code"]
    message = result["message"]
    assert result["exc_type"] == "ReshardError"
    assert message.startswith(f"{code} ")
    target = result["target"]
    read = code == "RSH306" and not target  # a read of a value, not a move: no target
    if code == "RSH202":  # works in JAX, only costs: the message says what it costs
        # the transposed grid keeps devices 0 and 7 in place (devices_indices_map)
        cost = ("so 6 of the 8 devices receive a shard" if name == "transposed_grid"
                else "so every shard is permuted")
        assert f"the same devices in another order, {cost}" in message
    elif read:
        assert "this process cannot read it" in message and "Fetching value for jax.Array" in message
    else:
        assert "multi-controller JAX raises" in message
    if code != "RSH304":
        assert "[" + ", ".join(map(str, result["source"])) + "]" in message
    if read:
        assert "from simulated process 0" in message and "jax.local_devices(backend=...)[k]" in message
    elif code == "RSH301" and not target:
        assert "with no target" in message
    elif code == "RSH301":
        assert f"single device {target[0]}" in message
    else:
        assert "[" + ", ".join(map(str, target)) + "]" in message
    if code in ("RSH201", "RSH202"):
        assert "build the target on x's mesh: NamedSharding(x.sharding.mesh, spec)" in message


def test_rsh201_message_shape(results: dict[str, Any]) -> None:
    message = results["p1"]["all_to_first_half"]["message"]
    assert message.startswith(
        "RSH201 device_put moves an array from devices [0, 1, 2, 3, 4, 5, 6, 7] to [0, 1, 2, 3], "
        "a different device set: multi-controller JAX raises")
    leaf = results["p1"]["pytree_leaf_to_subset"]["message"]
    assert leaf.startswith("RSH201 device_put moves leaf ['w'] from devices")
    assert results["p2"]["to_device_subset"]["message"].startswith("RSH201 Array.to_device ")


def test_simulated_processes_are_named(results: dict[str, Any]) -> None:
    message = results["p2"]["all_to_local_devices"]["message"]
    assert "spanning simulated processes [0, 1]" in message
    assert "all on simulated process 0" in message


@pytest.mark.parametrize("name", [c.name for c in CASES if "warn:" in c.p2])
def test_reorder_warning_points_at_the_users_line(results: dict[str, Any], name: str) -> None:
    case = BY_NAME[name]
    (warning,) = results["p2"][name]["warnings"]
    assert warning["category"] == "ReshardWarning"
    assert warning["filename"] == f"<case {name}>"
    assert warning["lineno"] == case.fires_line
    assert warning["message"].startswith("RSH202 ")


def test_cases_mark_their_firing_line() -> None:
    for case in CASES:
        fires = any(case.expected(m) != OK for m in MODES)
        assert (case.fires_line is not None) == fires, case.name


def test_driver_file_exists() -> None:
    assert (Path(__file__).parent / "strict_driver.py").is_file()
