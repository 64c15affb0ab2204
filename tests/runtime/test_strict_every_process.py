"""Strict mode judges a placement step as every simulated process runs it (issue 57).

Each program of every_process_cases.py is written to a file (strict mode reads the source
of the lines a step runs under) and run in one child process with 8 CPU devices under
``rt.enable(processes=2, reorder="raise")``, playing process 0: the programs that fail on
process 1 only must stop at their line, the others must run. The same programs under 2
real processes: test_grounding_every_process.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from every_process_cases import CASES  # noqa: E402

pytestmark = pytest.mark.xdist_group("runtime-every-process")

DRIVER = textwrap.dedent("""
    import json, os, runpy, sys, warnings
    import reshard_lint.runtime as rt
    import jax
    out = {}
    for path in sys.argv[2:]:
        rt.enable(processes=2, reorder="raise")
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                runpy.run_path(path, run_name="__main__")
            out[path] = None
        except Exception as exc:
            out[path] = [type(exc).__name__, getattr(exc, "code", None), getattr(exc, "lineno", None),
                         str(exc)]
        finally:
            rt.disable()
    json.dump(out, open(sys.argv[1], "w"))
""")


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("every_process")
    paths = []
    for case in CASES:
        path = root / f"{case.name}.py"
        path.write_text(case.code)
        paths.append(str(path))
    out = root / "out.json"
    # A file, not ``-c``: strict mode reads the source of every frame a step runs under
    driver = root / "driver.py"
    driver.write_text(DRIVER)
    env = {**os.environ, "JAX_NUM_CPU_DEVICES": "8", "JAX_PLATFORMS": "cpu"}
    subprocess.run([sys.executable, str(driver), str(out), *paths], check=True, env=env,
                   capture_output=True, timeout=600)
    got = json.loads(out.read_text())
    return {case.name: got[path] for case, path in zip(CASES, paths)}


@pytest.mark.parametrize("name", [case.name for case in CASES])
def test_every_process(outcomes: dict[str, Any], name: str) -> None:
    case = next(c for c in CASES if c.name == name)
    got = outcomes[name]
    if case.strict is None:
        assert got is None, got
        return
    assert got is not None, f"{name} ran"
    exc_type, code, line, message = got
    assert (exc_type, code, line) == ("ReshardError", *case.strict), got
    assert "on process 1 of 2" in message and "belongs to process 0" in message, message
