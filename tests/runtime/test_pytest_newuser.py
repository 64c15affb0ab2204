"""Strict mode as a new user meets it in a real ``pytest`` child process (issue 56, items 7-8):
a marker beside the run's flags, a spec printed as it is written, a patched ``Mesh.__new__``."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from conftest import outcomes  # this directory is on sys.path (see conftest.py)


def _pytest(tmp: Path, env: dict[str, str], tests: str, *args: str, conftest: str = "") -> tuple[int, str]:
    (tmp / "test_user.py").write_text(textwrap.dedent(tests))
    (tmp / "conftest.py").write_text(textwrap.dedent(conftest))
    (tmp / "pytest.ini").write_text("[pytest]\n")
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rA", "-W", "default",
                           str(tmp / "test_user.py"), *args],
                          cwd=tmp, capture_output=True, text=True, env=env, timeout=240)
    return proc.returncode, proc.stdout + proc.stderr


MARKED = '''\
    import jax
    import pytest

    POD = [0, 1, 2, 3, 2048, 2049, 2050, 2051]  # cpu-2x4's ids: 2 processes of 4 devices


    @pytest.mark.reshard_strict(processes=2)
    def test_marker_keeps_the_runs_platform():
        assert [d.id for d in jax.devices()] == POD


    @pytest.mark.reshard_strict(processes=2, platform=None)
    def test_marker_that_names_no_platform():
        assert [d.id for d in jax.devices()] == list(range(8))


    def test_unmarked():
        assert [d.id for d in jax.devices()] == POD
'''


def test_marker_composes_with_the_command_lines_platform(tmp_path: Path,
                                                         jax_subprocess_env: dict[str, str]) -> None:
    code, out = _pytest(tmp_path, jax_subprocess_env, MARKED, "--reshard-strict",
                        "--reshard-strict-platform=cpu-2x4")
    assert code == 0, out
    assert outcomes(out) == {"test_marker_keeps_the_runs_platform": "PASSED",
                             "test_marker_that_names_no_platform": "PASSED", "test_unmarked": "PASSED"}
    # Without --reshard-strict the marker alone switches strict mode on, with the run's platform.
    code, out = _pytest(tmp_path, jax_subprocess_env, MARKED, "--reshard-strict-platform=cpu-2x4",
                        "-k", "marker")
    assert code == 0, out
    assert outcomes(out) == {"test_marker_keeps_the_runs_platform": "PASSED",
                             "test_marker_that_names_no_platform": "PASSED"}


FETCH = '''\
    import jax
    import numpy as np
    from jax.sharding import NamedSharding, PartitionSpec as P


    def test_reads_a_split_array():
        mesh = jax.make_mesh((8,), ("data",))
        x = jax.device_put(np.arange(16.0), NamedSharding(mesh, P("data")))
        np.asarray(x)
'''


def test_spec_printed_as_users_write_it(tmp_path: Path, jax_subprocess_env: dict[str, str]) -> None:
    code, out = _pytest(tmp_path, jax_subprocess_env, FETCH, "--reshard-strict",
                        "--reshard-strict-processes=2")
    assert code == 1, out
    assert "np.asarray fetches an array sharded P('data') on devices [0, 1, 2, 3, 4, 5, 6, 7]" in out
    assert "P('data',)" not in out


PATCHED_MESH = '''\
    # A test harness that replaced Mesh.__new__ with a plain function (Python accepts it and
    # calls it with the class first), before strict mode switches on in pytest_configure.
    import jax

    _made = []
    _original = jax.sharding.Mesh.__new__  # the function inside JAX's staticmethod


    def _counting_new(cls, *args, **kwargs):
        _made.append(1)
        return _original(cls, *args, **kwargs)


    jax.sharding.Mesh.__new__ = _counting_new
'''

SHUFFLED = '''\
    import random

    import jax
    import numpy as np
    from jax.sharding import Mesh

    import conftest


    def test_mesh_is_built_through_the_harness():
        before = len(conftest._made)
        Mesh(np.array(jax.devices()), ("x",))
        assert len(conftest._made) == before + 1


    def test_unseeded_shuffle_still_raises():
        devs = jax.devices()
        random.shuffle(devs)
        Mesh(np.array(devs), ("x",))
'''


def test_strict_mode_over_a_plain_function_mesh_new(tmp_path: Path,
                                                    jax_subprocess_env: dict[str, str]) -> None:
    code, out = _pytest(tmp_path, jax_subprocess_env, SHUFFLED, "--reshard-strict",
                        "--reshard-strict-processes=2", conftest=PATCHED_MESH)
    assert "AttributeError" not in out, out
    assert code == 1, out
    assert outcomes(out) == {"test_mesh_is_built_through_the_harness": "PASSED",
                             "test_unseeded_shuffle_still_raises": "FAILED"}
    assert "rule:    RSH101" in out
    # The harness's function is what stays after the run (disable() puts back what it found).
    check = SHUFFLED + '''

    def test_restored_after_disable():
        import reshard_lint.runtime as rt
        rt.disable()
        assert jax.sharding.Mesh.__dict__["__new__"] is conftest._counting_new
    '''
    code, out = _pytest(tmp_path, jax_subprocess_env, check, "--reshard-strict", "-k", "restored",
                        conftest=PATCHED_MESH)
    assert code == 0, out
