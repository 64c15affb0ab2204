"""Where code runs, under real JAX (docs/runtimes.md): the moves reshard-lint leaves silent
in code that says it runs in one process do run there, with 8 CPU devices, and the same
moves fail as RSH201 claims once several processes run them (so the runtime, not the move,
is what made them silent). The fixture project tests/fixtures/runtimes is run as its files
are: a module with its own settings as a script, the tests with their conftest.py under
pytest, the demo with the project root on the path.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from reshard_lint.rules import expected_markers

from ..conftest import FIXTURES
from .claims import assert_claimed
from .harness import SnippetResult, run_batch

pytestmark = [pytest.mark.multicontroller, pytest.mark.xdist_group("multicontroller-test_runtimes")]

ROOT = FIXTURES / "runtimes"
# Silent because they say they run in one process (their own code or what they import).
ONE_PROCESS = ["docs.notebook", "docs.num_cpu_env", "app.demo"]
# Reported although a conftest.py asks for one process: it starts the distributed runtime.
LAUNCHES = "tests.multi.test_launch"
TIMEOUT = 300


def _env() -> dict[str, str]:
    env = dict(os.environ)
    for var in ("XLA_FLAGS", "JAX_NUM_CPU_DEVICES", "JAX_PLATFORMS", "PYTEST_ADDOPTS"):
        env.pop(var, None)
    env["JAX_PLATFORMS"] = "cpu"
    return env


def _python(code: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, env=_env(), capture_output=True, text=True,
                          timeout=TIMEOUT)


def _marked(module: str) -> set[str]:
    text = (ROOT / (module.replace(".", "/") + ".py")).read_text(encoding="utf-8")
    return {code for _, _, code in expected_markers(text)}


@pytest.mark.parametrize("module", ONE_PROCESS)
def test_silent_moves_run_in_the_one_process_the_code_asks_for(module: str) -> None:
    assert _marked(module) == set()
    # Run as `python -m module` runs it: JAX imported by the module itself (JAX_NUM_CPU_DEVICES
    # is read when JAX is imported, XLA_FLAGS when its CPU backend starts).
    proc = _python("import runpy, sys\n"
                   f"sys.path.insert(0, {str(ROOT)!r})\n"
                   f"g = runpy.run_module({module!r}, run_name='__main__')\n"
                   "jax = g['jax']\n"
                   "print(jax.process_count(), len(jax.devices()), len(g['x'].sharding.device_set),"
                   " len(g['y'].sharding.device_set))\n", ROOT)
    assert proc.returncode == 0, proc.stderr[-2000:]
    # One process, the 8 CPU devices its own settings asked for, and x moved from all 8 to 4.
    assert proc.stdout.split() == ["1", "8", "8", "4"], proc.stdout


def test_silent_moves_run_under_pytest_with_the_conftest(tmp_path: Path) -> None:
    root = tmp_path / "runtimes"
    shutil.copytree(ROOT, root)
    (root / "tests" / "test_zz_where.py").write_text(
        "import jax\nfrom test_moves import y, z\n\n\ndef test_one_process_of_8_devices():\n"
        "    assert (jax.process_count(), len(jax.devices())) == (1, 8)\n"
        "    assert (len(y.sharding.device_set), len(z.sharding.device_set)) == (4, 8)\n", encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
                           "tests/test_zz_where.py"], cwd=root, env=_env(), capture_output=True, text=True,
                          timeout=TIMEOUT)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "1 passed" in proc.stdout


def test_an_attribute_assignment_sets_nothing() -> None:
    """Why ``jax.config.jax_num_cpu_devices = 8`` is not read as one process: JAX refuses it."""
    proc = _python("import jax\njax.config.jax_num_cpu_devices = 8\n", ROOT)
    assert proc.returncode != 0
    assert "AttributeError" in proc.stderr and "has no setter" in proc.stderr, proc.stderr[-2000:]


@pytest.fixture(scope="module")
def several() -> dict[str, SnippetResult]:
    modules = [*ONE_PROCESS, LAUNCHES]
    snippets = [f"import runpy, sys\nsys.path.insert(0, {str(ROOT)!r})\n"
                f"runpy.run_module({m!r}, run_name='__main__')\n" for m in modules]
    # 2 processes of 4 CPU devices, joined by jax.distributed.initialize (the harness's);
    # a program's own device count and initialize are the harness's there.
    return dict(zip(modules, run_batch(snippets, mode="multi", processes=2, devices=4, timeout=60.0)))


@pytest.mark.parametrize("module", [*ONE_PROCESS, LAUNCHES])
def test_the_same_moves_fail_on_several_processes(module: str, several: dict[str, SnippetResult]) -> None:
    assert _marked(module) == ({"RSH201"} if module == LAUNCHES else set())
    assert_claimed({"RSH201"}, several[module])
