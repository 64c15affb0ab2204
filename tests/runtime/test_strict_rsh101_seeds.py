"""RSH101 at run time and the global generators' history: a seed strict mode did not see.

A mesh built from ``random.shuffle(devs)`` is a bug only when each process draws another
order. ``random.seed(0)`` set before strict mode was switched on (a test module's body, run
at collection; a conftest; a script's first lines) makes every process draw the same order,
so strict mode takes the global generators' draws for another process's only when it saw
their whole history: the pytest plugin follows their seeds from before the conftest files
load when strict mode is on for the run, a script from ``rt.watch_seeds()``. Otherwise
their draws never raise (unknown), unless strict mode sees ``seed()`` or
``seed(jax.process_index())``; a generator made while strict mode is on
(``np.random.default_rng()``) is followed from its start.

The pytest runs are real ``pytest`` child processes; the scripts run in child processes with
8 CPU devices (the ``python8`` fixture) and assert on their own.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Callable

from conftest import outcomes  # this directory is on sys.path (see conftest.py)

Run = Callable[..., subprocess.CompletedProcess[str]]

# ------------------------------------------------------------------------------ pytest runs

TESTS = '''\
import random
import jax
import numpy as np
import pytest
from jax.sharding import Mesh
{head}

def test_random_shuffle():
    devs = jax.devices()
    random.shuffle(devs)
    Mesh(np.array(devs), ("x",))


def test_numpy_permutation():
    Mesh(np.random.permutation(jax.devices()), ("x",))


def test_default_rng():
    rng = np.random.default_rng()
    Mesh(rng.permutation(jax.devices()), ("x",))
'''


def _mesh_lines() -> dict[str, int]:
    """Each test's Mesh line (``{head}`` is one line)."""
    found, test = {}, ""
    for number, text in enumerate(TESTS.splitlines(), start=1):
        if text.startswith("def test_"):
            test = text[4:text.index("(")]
        elif text.lstrip().startswith("Mesh("):
            found[test] = number
    return found


LINES = _mesh_lines()


def pytest_run(tmp: Path, env: dict[str, str], *args: str, head: str = "", conftest: str = "",
               ini: str = "") -> tuple[int, str]:
    assert "\n" not in head  # LINES stay the Mesh lines
    tests = TESTS.format(head=head)
    (tmp / "test_user.py").write_text(tests)
    (tmp / "conftest.py").write_text(conftest)
    (tmp / "pytest.ini").write_text("[pytest]\n" + ini)
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rA",
                           str(tmp / "test_user.py"), *args],
                          cwd=tmp, capture_output=True, text=True, env=env, timeout=240)
    return proc.returncode, proc.stdout + proc.stderr


def assert_stopped_at_mesh(out: str, failed: set[str]) -> None:
    assert out.count("rule:    RSH101 (in Mesh)") == len(failed), out
    for name in failed:
        assert f"test:    test_user.py::{name}\n" in out, out
        assert f"test_user.py:{LINES[name]}]" in out, out  # the error names the Mesh line


def test_a_module_level_seed_at_collection_is_seen(tmp_path: Path,
                                                   jax_subprocess_env: dict[str, str]) -> None:
    # random.seed(0) in the module's body: every process draws the same shuffle. numpy's
    # global generator, never seeded, draws another order on each process.
    code, out = pytest_run(tmp_path, jax_subprocess_env, "--reshard-strict", head="random.seed(0)")
    assert code == 1, out
    assert outcomes(out) == {"test_random_shuffle": "PASSED", "test_numpy_permutation": "FAILED",
                             "test_default_rng": "FAILED"}, out
    assert_stopped_at_mesh(out, {"test_numpy_permutation", "test_default_rng"})

    code, out = pytest_run(tmp_path, jax_subprocess_env, "--reshard-strict", head="np.random.seed(0)")
    assert code == 1, out
    assert outcomes(out) == {"test_random_shuffle": "FAILED", "test_numpy_permutation": "PASSED",
                             "test_default_rng": "FAILED"}, out
    assert_stopped_at_mesh(out, {"test_random_shuffle", "test_default_rng"})


def test_unseeded_draws_stop_at_the_mesh(tmp_path: Path, jax_subprocess_env: dict[str, str]) -> None:
    code, out = pytest_run(tmp_path, jax_subprocess_env, "--reshard-strict")
    assert code == 1, out
    assert outcomes(out) == dict.fromkeys(LINES, "FAILED"), out
    assert_stopped_at_mesh(out, set(LINES))
    drawn_at = LINES["test_random_shuffle"] - 1
    assert f"shuffled by random.shuffle (line {drawn_at}) with no seed shared by all processes" in out, out


def test_a_seed_in_the_root_conftest_is_seen(tmp_path: Path,
                                             jax_subprocess_env: dict[str, str]) -> None:
    # Switched on by the ini option; the conftest loads before pytest_configure.
    conftest = "import random\nimport numpy as np\nrandom.seed(1)\nnp.random.seed(1)\n"
    code, out = pytest_run(tmp_path, jax_subprocess_env, conftest=conftest, ini="reshard_strict = true\n")
    assert code == 1, out
    assert outcomes(out) == {"test_random_shuffle": "PASSED", "test_numpy_permutation": "PASSED",
                             "test_default_rng": "FAILED"}, out
    assert_stopped_at_mesh(out, {"test_default_rng"})


def test_under_the_marker_alone_the_global_generators_are_unknown(
        tmp_path: Path, jax_subprocess_env: dict[str, str]) -> None:
    # Strict mode starts with the test: what ran before (here a seed at collection; it might
    # be none) is unknown, so the global generators' draws do not raise. A generator made in
    # the test is followed from its start.
    marked = "pytestmark = pytest.mark.reshard_strict(processes=2)"
    for head in (marked + "; random.seed(0); np.random.seed(0)", marked):
        code, out = pytest_run(tmp_path, jax_subprocess_env, head=head)
        assert code == 1, out
        assert outcomes(out) == {"test_random_shuffle": "PASSED", "test_numpy_permutation": "PASSED",
                                 "test_default_rng": "FAILED"}, out
        assert_stopped_at_mesh(out, {"test_default_rng"})


# ------------------------------------------------------------------------------ scripts

SETUP = '''
import random, sys
import jax, numpy as np
from jax.sharding import Mesh
import reshard_lint.runtime as rt
from reshard_lint.runtime import ReshardError

def mesh_code(draw):
    """Build a mesh from draw()'s device order under strict mode: RSH101's line, or None."""
    rt.enable(processes=2)
    try:
        devs = draw()
        line = sys._getframe().f_lineno + 1
        Mesh(np.array(devs), ('x',))
    except ReshardError as e:
        assert (e.code, e.lineno) == ("RSH101", line), str(e)
        return e.code
    finally:
        rt.disable()
    return None

def shuffled():
    devs = jax.devices()
    random.shuffle(devs)
    return devs

def permuted():
    return list(np.random.permutation(jax.devices()))

def deliberate(devs):
    """A draw that came out in an order a program could build on purpose (never remembered):
    sorted, reversed, a transposed grid, these reversed, and their rotations."""
    ids = [d.id for d in devs]
    bases = [list(range(8)), list(range(8))[::-1]]
    for rows, cols in ((2, 4), (4, 2)):
        t = [r * cols + c for c in range(cols) for r in range(rows)]
        bases += [t, t[::-1]]
    return any(ids == b[k:] + b[:k] for b in bases for k in range(8))

def stops(draw):
    """RSH101 at the mesh, unless the draw came out deliberate-looking (about 0.1%)."""
    drawn = []
    def keep():
        drawn[:] = draw()
        return drawn
    code = mesh_code(keep)
    return code == "RSH101" or (code is None and deliberate(drawn))
'''


def check(run: Run, body: str) -> None:
    proc = run(SETUP + textwrap.dedent(body) + "\nprint('OK')\n")
    assert proc.returncode == 0 and proc.stdout.strip().endswith("OK"), proc.stdout + proc.stderr


def test_a_script_seeded_before_strict_mode_runs(python8: Run) -> None:
    check(python8, """
    random.seed(0)
    np.random.seed(0)
    assert mesh_code(shuffled) is None
    assert mesh_code(permuted) is None
    """)


def test_a_script_without_watch_seeds_leaves_the_global_generators_unknown(python8: Run) -> None:
    # Nothing seeded them, but strict mode, switched on here, cannot know that.
    check(python8, """
    assert mesh_code(shuffled) is None
    assert mesh_code(permuted) is None
    assert stops(lambda: np.random.default_rng().permutation(jax.devices()))  # made under strict mode
    random.seed(3)
    rt.enable(processes=2); random.seed(); rt.disable()  # seen: entropy again
    random.seed(3)                                      # not seen: strict mode is off
    assert mesh_code(shuffled) is None
    """)


def test_a_script_that_watches_seeds_from_its_start_stops_unseeded_draws(python8: Run) -> None:
    check(python8, """
    rt.watch_seeds()
    assert stops(shuffled)
    assert stops(permuted)
    random.seed(0)                       # seen, with strict mode off
    assert mesh_code(shuffled) is None
    assert stops(permuted)
    np.random.seed(0)
    assert mesh_code(permuted) is None
    random.seed()                        # the operating system's entropy again
    assert stops(shuffled)
    random.setstate(random.getstate())   # a state from elsewhere: unknown
    assert mesh_code(shuffled) is None
    original = random.seed
    rt.enable(processes=2); rt.disable()
    assert random.seed is original       # the watch stays after strict mode
    """)
