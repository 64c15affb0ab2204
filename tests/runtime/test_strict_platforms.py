"""Strict mode judges a move between two meshes on every target platform (``platforms``).

Each run is a real ``pytest`` child process with 16 CPU devices on a temporary test file, as
a project's own suite runs under ``--reshard-strict``. On this CPU the meshes below agree;
on the catalogue's TPU topologies of 16 chips (tpu-v4-32, tpu-v5e-16) JAX's own builders,
run on mock TPU devices (tests/platforms checks those orders), order them differently.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import jax_env, outcomes  # this directory is on sys.path (see conftest.py)

USER_TESTS = textwrap.dedent('''\
    import jax
    import numpy as np
    import pytest
    from jax.experimental import mesh_utils
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P


    def test_make_mesh_shapes():
        flat = jax.make_mesh((16,), ("x",))
        grid = jax.make_mesh((4, 4), ("a", "b"))
        x = jax.device_put(np.arange(32.0), NamedSharding(flat, P("x")))
        jax.device_put(x, NamedSharding(grid, P(("a", "b"))))


    def test_builder_vs_sorted_by_id():
        built = jax.make_mesh((16,), ("x",))
        by_id = Mesh(np.array(sorted(jax.devices(), key=lambda d: d.id)), ("i",))
        x = jax.device_put(np.arange(32.0), NamedSharding(built, P("x")))
        jax.device_put(x, NamedSharding(by_id, P("i")))


    def test_jit_in_shardings_of_another_shape():
        flat = jax.make_mesh((16,), ("x",))
        grid = jax.make_mesh((4, 4), ("a", "b"))
        x = jax.device_put(np.arange(32.0), NamedSharding(flat, P("x")))
        step = jax.jit(lambda v: v * 2, in_shardings=NamedSharding(grid, P(("a", "b"))))
        step(x)
        step(x)


    def test_clean_same_builder_twice():
        one = jax.make_mesh((16,), ("x",))
        two = jax.make_mesh((16,), ("y",))
        x = jax.device_put(np.arange(32.0), NamedSharding(one, P("x")))
        jax.device_put(x, NamedSharding(two, P("y")))


    def test_clean_view_of_the_builders_devices():
        built = jax.make_mesh((16,), ("x",))
        grid = Mesh(built.devices.reshape(4, 4), ("a", "b"))
        x = jax.device_put(np.arange(32.0), NamedSharding(built, P("x")))
        jax.device_put(x, NamedSharding(grid, P(("a", "b"))))


    def test_clean_make_mesh_and_create_device_mesh():
        built = jax.make_mesh((4, 4), ("a", "b"))
        made = Mesh(mesh_utils.create_device_mesh((4, 4)), ("c", "d"))
        x = jax.device_put(np.arange(32.0), NamedSharding(built, P(("a", "b"))))
        jax.device_put(x, NamedSharding(made, P(("c", "d"))))


    @pytest.mark.reshard_strict(platforms=["cpu"])
    def test_marker_for_a_cpu_only_test():
        flat = jax.make_mesh((16,), ("x",))
        grid = jax.make_mesh((4, 4), ("a", "b"))
        x = jax.device_put(np.arange(32.0), NamedSharding(flat, P("x")))
        jax.device_put(x, NamedSharding(grid, P(("a", "b"))))


    def test_clean_replicated_target():
        flat = jax.make_mesh((16,), ("x",))
        grid = jax.make_mesh((2, 8), ("a", "b"))
        x = jax.device_put(np.arange(32.0), NamedSharding(flat, P("x")))
        jax.device_put(x, NamedSharding(grid, P()))
''')

FIRING = ("test_make_mesh_shapes", "test_builder_vs_sorted_by_id", "test_jit_in_shardings_of_another_shape")
CLEAN = ("test_clean_same_builder_twice", "test_clean_view_of_the_builders_devices",
         "test_clean_make_mesh_and_create_device_mesh", "test_clean_replicated_target")
MARKED = "test_marker_for_a_cpu_only_test"  # the marker's platforms=["cpu"] wins for that test


def _run(tmp: Path, *args: str, pyproject: str | None = None) -> tuple[int, str]:
    (tmp / "test_user.py").write_text(USER_TESTS)
    (tmp / "pytest.ini").write_text("[pytest]\n")
    if pyproject is not None:
        (tmp / "pyproject.toml").write_text(pyproject)
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rA", "-W",
                           "default", "--rootdir", str(tmp), str(tmp / "test_user.py"),
                           "--reshard-strict", *args],
                          cwd=tmp, capture_output=True, text=True, env=jax_env(16), timeout=240)
    return proc.returncode, proc.stdout + proc.stderr


def test_default_platforms_stop_the_moves_tpu_reorders(tmp_path: Path) -> None:
    code, out = _run(tmp_path, "--reshard-strict-reorder=raise")
    assert code == 1, out
    assert outcomes(out) == {**{t: "FAILED" for t in FIRING}, **{t: "PASSED" for t in CLEAN},
                             MARKED: "PASSED"}, out
    # Each names the platform, the topologies, their orders there, and both builders.
    every = "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]"
    assert f"ReshardError: RSH202 device_put moves an array from devices {every} to {every}: on TPU " \
           "(tpu-v4-32, tpu-v5e-16) the two meshes order the same devices differently, so jax " \
           "permutes shards: 12 of the 16 devices receive a shard" in out
    assert "(on tpu-v4-32, TPU v4 2x2x4, 4 hosts of 4 chips: x's mesh holds devices [0, 4, 8, 12, " \
           "2, 6, 10, 14, 1, 5, 9, 13, 3, 7, 11, 15], the target [0, 2, 1, 3, 4, 6, 5, 7, 8, 10, 9, " \
           "11, 12, 14, 13, 15]); x's mesh is ordered by jax.make_mesh((16,)), the target's by " \
           "jax.make_mesh((4, 4)), which agree on this run" in out
    assert f"the target [{every[1:-1]}]); x's mesh is ordered by jax.make_mesh((16,)), the target's " \
           "by sorted by id (np.array(sorted(jax.devices(), key=lambda d: d.id)))" in out
    assert "test_user.py:12]" in out and "test_user.py:19]" in out  # the user's lines
    assert f"ReshardError: RSH204 jit(<lambda>) takes argument 0 on devices {every} through " \
           "in_shardings on the same devices: on TPU (tpu-v4-32, tpu-v5e-16) the argument's mesh " \
           "and the in_sharding's order the same devices differently" in out
    assert "which agree on this run; there on one process the first call silently copies it and " \
           "the second call of the same jitted function crashes the process" in out
    assert "test_user.py:27]" in out
    assert "on GPU" not in out and "on CPU" not in out


def test_default_reorder_warns(tmp_path: Path) -> None:
    code, out = _run(tmp_path)
    assert code == 1, out
    assert sorted(t for t, o in outcomes(out).items() if o == "FAILED") == \
        ["test_jit_in_shardings_of_another_shape"], out
    assert out.count("ReshardWarning: RSH202") == 2, out
    assert outcomes(out)["test_jit_in_shardings_of_another_shape"] == "FAILED"  # RSH204 raises
    assert "on TPU (tpu-v4-32, tpu-v5e-16)" in out


@pytest.mark.parametrize("how", ["flag", "ini", "pyproject"])
def test_cpu_only_project_is_silent(tmp_path: Path, how: str) -> None:
    if how == "flag":
        code, out = _run(tmp_path, "--reshard-strict-reorder=raise", "--reshard-strict-platforms=cpu")
    elif how == "ini":
        code, out = _run(tmp_path, "--reshard-strict-reorder=raise", "-o", "reshard_strict_platforms=cpu")
    else:  # the linter's own setting: one fact about the project
        code, out = _run(tmp_path, "--reshard-strict-reorder=raise",
                         pyproject='[tool.reshard-lint]\nplatforms = ["gpu", "cpu"]\n')
    assert code == 0, out
    assert set(outcomes(out).values()) == {"PASSED"}, out
    assert "RSH202" not in out


def test_a_bad_platform_name_is_a_usage_error(tmp_path: Path) -> None:
    code, out = _run(tmp_path, "--reshard-strict-platforms=tpu,fpga")
    assert code == 4, out
    assert "reshard_strict_platforms must list some of tpu, gpu, cpu, not 'tpu,fpga'" in out


def test_the_setting_in_the_api() -> None:
    from reshard_lint.runtime import StrictConfig, StrictConfigError

    assert StrictConfig().platforms == ("tpu", "gpu", "cpu")
    assert StrictConfig(platforms=["CPU", "tpu"]).platforms == ("tpu", "cpu")  # type: ignore[arg-type]
    assert StrictConfig(platforms="gpu").platforms == ("gpu",)  # type: ignore[arg-type]
    with pytest.raises(StrictConfigError, match="'fpga' is not one of 'tpu', 'gpu', 'cpu'"):
        StrictConfig(platforms=("fpga",))


@pytest.mark.parametrize("platform", ["tpu-v4-32", "tpu-v5e-16"])
def test_the_simulated_platform_agrees(tmp_path: Path, platform: str) -> None:
    """The run simulating each TPU topology (its ids, hosts, and JAX's builders on its mock
    chips: ``--reshard-strict-platform``) stops the same three steps by its own check, with
    nothing judged on other platforms: the placements computed for every platform are that
    simulation's."""
    code, out = _run(tmp_path, "--reshard-strict-reorder=raise", f"--reshard-strict-platform={platform}",
                     "--reshard-strict-platforms=cpu")
    assert code == 1, out
    # the simulated TPU's own order stops the marked test too: its marker names CPU only
    assert outcomes(out) == {**{t: "FAILED" for t in FIRING}, **{t: "PASSED" for t in CLEAN},
                             MARKED: "FAILED"}, out
    assert "the same devices in another order" in out
    assert "on TPU (" not in out
