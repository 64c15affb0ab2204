"""The pytest plugin, run as a real ``pytest`` child process on a temporary test file."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Callable

import pytest

from conftest import outcomes  # this directory is on sys.path (see conftest.py)

USER_TESTS = textwrap.dedent('''\
    import jax
    import numpy as np
    import pytest
    from jax import device_put  # bound at import: strict mode must still see these calls
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P


    def make():
        devs = jax.devices()
        mesh = Mesh(np.array(devs), ("x",))
        return devs, jax.device_put(np.arange(16.0), NamedSharding(mesh, P("x")))


    def test_subset():
        devs, x = make()
        jax.device_put(x, NamedSharding(Mesh(np.array(devs[2:6]), ("x",)), P("x")))


    def test_subset_bound_name():
        devs, x = make()
        device_put(x, NamedSharding(Mesh(np.array(devs[2:6]), ("x",)), P("x")))


    def test_clean():
        devs, x = make()
        jax.device_put(x, NamedSharding(x.sharding.mesh, P()))


    def test_reversed():
        devs, x = make()
        jax.device_put(x, NamedSharding(Mesh(np.array(devs[::-1]), ("x",)), P("x")))


    def test_global_to_device():
        devs, x = make()
        jax.device_put(x, devs[0])


    @pytest.mark.reshard_strict(enabled=False)
    def test_opted_out():
        devs, x = make()
        jax.device_put(x, NamedSharding(Mesh(np.array(devs[2:6]), ("x",)), P("x")))
''')

ALL = ("test_subset", "test_subset_bound_name", "test_clean", "test_reversed", "test_global_to_device",
       "test_opted_out")


@pytest.fixture
def pytest_run(tmp_path: Path, jax_subprocess_env: dict[str, str]) -> Callable[..., tuple[int, str]]:
    """Run pytest on USER_TESTS (or ``tests``) in tmp_path; (exit code, output)."""
    def run(*args: str, tests: str = USER_TESTS, ini: str | None = None) -> tuple[int, str]:
        return _pytest_run(tmp_path, jax_subprocess_env, *args, tests=tests, ini=ini)

    return run


def _pytest_run(tmp: Path, env: dict[str, str], *args: str, tests: str, ini: str | None) -> tuple[int, str]:
    (tmp / "test_user.py").write_text(tests)
    (tmp / "pytest.ini").write_text("[pytest]\n" + (ini or ""))
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rA", "-W",
                           "default", str(tmp / "test_user.py"), *args],
                          cwd=tmp, capture_output=True, text=True, env=env, timeout=240)
    return proc.returncode, proc.stdout + proc.stderr


def test_off_by_default_changes_nothing(pytest_run: Callable[..., tuple[int, str]]) -> None:
    code, out = pytest_run()
    assert code == 0, out
    assert outcomes(out) == {name: "PASSED" for name in ALL}
    assert "reshard-lint strict mode" not in out
    assert "RSH" not in out


def test_flag_fails_the_tests_a_multi_host_job_would_fail(pytest_run: Callable[..., tuple[int, str]]) -> None:
    code, out = pytest_run("--reshard-strict")
    assert code == 1, out
    assert outcomes(out) == {"test_subset": "FAILED", "test_subset_bound_name": "FAILED",
                             "test_clean": "PASSED", "test_reversed": "PASSED",
                             "test_global_to_device": "FAILED", "test_opted_out": "PASSED"}
    assert "reshard-lint strict mode: on (processes=auto, reorder=warn)" in out
    assert "ReshardError: RSH201 device_put moves an array from devices [0, 1, 2, 3, 4, 5, 6, 7] to " \
           "[2, 3, 4, 5]" in out
    assert "ReshardError: RSH301 device_put" in out
    # The report section: the test, the rule and both device lists.
    assert "reshard-lint strict mode" in out
    assert "test:    test_user.py::test_subset\n" in out
    assert "rule:    RSH201 (in device_put)" in out
    assert "source:  [0, 1, 2, 3, 4, 5, 6, 7]" in out
    assert "target:  [2, 3, 4, 5]" in out
    assert "test:    test_user.py::test_global_to_device\n" in out and "rule:    RSH301" in out
    # RSH202 only warns, through pytest's warnings summary.
    assert "ReshardWarning: RSH202 device_put moves an array from devices [0, 1, 2, 3, 4, 5, 6, 7] " \
           "to [7, 6, 5, 4, 3, 2, 1, 0]" in out


def test_processes_and_reorder_options(pytest_run: Callable[..., tuple[int, str]]) -> None:
    code, out = pytest_run("--reshard-strict", "--reshard-strict-processes=1",
                           "--reshard-strict-reorder=raise")
    assert code == 1, out
    assert outcomes(out) == {"test_subset": "FAILED", "test_subset_bound_name": "FAILED",
                             "test_clean": "PASSED", "test_reversed": "FAILED",
                             "test_global_to_device": "PASSED", "test_opted_out": "PASSED"}
    assert "reshard-lint strict mode: on (processes=1, reorder=raise)" in out
    assert "rule:    RSH202" in out


def test_ini_options_and_the_command_line_override(pytest_run: Callable[..., tuple[int, str]]) -> None:
    ini = "reshard_strict = true\nreshard_strict_processes = 1\n"
    code, out = pytest_run(ini=ini)
    assert code == 1, out
    assert outcomes(out)["test_subset"] == "FAILED"
    assert outcomes(out)["test_global_to_device"] == "PASSED"  # processes = 1: no RSH301
    assert "reshard-lint strict mode: on (processes=1, reorder=warn)" in out

    code, out = pytest_run("--no-reshard-strict", ini=ini)
    assert code == 0, out
    assert "reshard-lint strict mode" not in out


def test_marker_turns_strict_mode_on_for_one_test(pytest_run: Callable[..., tuple[int, str]]) -> None:
    tests = USER_TESTS.replace("def test_global_to_device():",
                               "@pytest.mark.reshard_strict(processes=2)\ndef test_global_to_device():")
    code, out = pytest_run(tests=tests)
    assert code == 1, out
    assert outcomes(out) == {"test_subset": "PASSED", "test_subset_bound_name": "PASSED",
                             "test_clean": "PASSED", "test_reversed": "PASSED",
                             "test_global_to_device": "FAILED", "test_opted_out": "PASSED"}
    assert "rule:    RSH301 (in device_put)" in out


def test_plugin_off_does_not_import_jax(pytest_run: Callable[..., tuple[int, str]]) -> None:
    tests = "import sys\n\n\ndef test_no_jax():\n    assert 'jax' not in sys.modules\n"
    code, out = pytest_run(tests=tests)
    assert code == 0, out


@pytest.mark.parametrize("args", [("--reshard-strict-processes=two",),
                                  ("--reshard-strict-reorder=loud",)])
def test_bad_option_values_are_usage_errors(pytest_run: Callable[..., tuple[int, str]],
                                            args: tuple[str, ...]) -> None:
    code, out = pytest_run("--reshard-strict", *args)
    assert code == 4, out  # pytest's exit code for usage errors


POD_TESTS = textwrap.dedent('''\
    import jax
    import numpy as np
    from jax.sharding import NamedSharding, PartitionSpec as P


    def test_asks_for_local_devices():
        assert jax.process_count() == 2 and len(jax.local_devices()) == 4
        assert [d.id for d in jax.devices()] == [0, 1, 2, 3, 2048, 2049, 2050, 2051]


    def test_reads_a_split_array():
        mesh = jax.make_mesh((8,), ("x",))
        x = jax.device_put(np.arange(16.0), NamedSharding(mesh, P("x")))
        np.asarray(x)
''')


def test_platform_option_simulates_the_pod(pytest_run: Callable[..., tuple[int, str]]) -> None:
    code, out = pytest_run("--reshard-strict", "--reshard-strict-platform=cpu-2x4", tests=POD_TESTS)
    assert code == 1, out
    assert outcomes(out) == {"test_asks_for_local_devices": "PASSED", "test_reads_a_split_array": "FAILED"}
    assert "reshard-lint strict mode: on (processes=auto, reorder=warn, platform=cpu-2x4)" in out
    assert "rule:    RSH305 (in np.asarray)" in out

    code, out = pytest_run("--reshard-strict", "--reshard-strict-platform=tpu-v9", tests=POD_TESTS)
    assert code == 4 and "unknown platform 'tpu-v9'" in out, out


# The device reaches the put through a parameter: strict mode cannot show from the source
# that it is the same on every process, so the step is judged as the played process only.
PROCESS_TESTS = textwrap.dedent('''
    import jax
    import numpy as np


    def put(x, device):
        return jax.device_put(x, device)


    def test_takes_process_0s_device():
        a = jax.device_put(np.arange(4.0), jax.local_devices()[0])
        put(a, jax.devices()[0])
''')

# Spelled at the put, the device is the same on every process: judged as process 1 too.
EVERY_PROCESS_TESTS = textwrap.dedent('''
    import jax
    import numpy as np


    def test_takes_process_0s_device():
        a = jax.device_put(np.arange(4.0), jax.local_devices()[0])
        jax.device_put(a, jax.devices()[0])


    def test_only_on_process_0():
        if jax.process_index() == 0:
            a = jax.device_put(np.arange(4.0), jax.local_devices()[0])
            jax.device_put(a, jax.devices()[0])
''')


def test_process_0_judges_a_global_pick_as_every_process(pytest_run: Callable[..., tuple[int, str]]) -> None:
    code, out = pytest_run("--reshard-strict", tests=EVERY_PROCESS_TESTS)
    assert code == 1 and outcomes(out) == {"test_takes_process_0s_device": "FAILED",
                                           "test_only_on_process_0": "PASSED"}, out
    assert "rule:    RSH306 (in device_put)" in out, out
    assert "fails on process 1 of 2: jax.devices()[0] belongs to process 0" in out, out


def test_process_option_plays_another_process(pytest_run: Callable[..., tuple[int, str]]) -> None:
    code, out = pytest_run("--reshard-strict", tests=PROCESS_TESTS)
    assert code == 0 and outcomes(out) == {"test_takes_process_0s_device": "PASSED"}, out

    code, out = pytest_run("--reshard-strict", "--reshard-strict-process=last", tests=PROCESS_TESTS)
    assert code == 1 and outcomes(out) == {"test_takes_process_0s_device": "FAILED"}, out
    assert "reshard-lint strict mode: on (processes=auto, reorder=warn, process=-1)" in out
    assert "rule:    RSH306 (in device_put)" in out, out

    code, out = pytest_run("--reshard-strict", "--reshard-strict-process=first", tests=PROCESS_TESTS)
    assert code == 0, out
    code, out = pytest_run("--reshard-strict", "--reshard-strict-processes=2", "--reshard-strict-process=2",
                           tests=PROCESS_TESTS)
    assert code == 4 and "process=2 is not one of the 2 simulated processes" in out, out
    # With processes=auto the count is known once JAX's backend runs: the first check says so.
    code, out = pytest_run("--reshard-strict", "--reshard-strict-process=2", tests=PROCESS_TESTS)
    assert code == 1 and "StrictConfigError: reshard-lint strict mode: process=2 is not one of" in out, out
