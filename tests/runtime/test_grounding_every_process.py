"""The programs strict mode judges as every process runs them, under real multi-controller JAX.

Each program of every_process_cases.py runs under 2 processes of 4 CPU devices (the
harness in tests/multicontroller/harness.py): a program strict mode stops as process 0
must fail on process 1 with the error its case names and run on process 0; a program it
lets run must run on both.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from conftest import load_private  # this directory is on sys.path (see conftest.py)

pytestmark = [pytest.mark.multicontroller, pytest.mark.xdist_group("runtime-test_grounding_every_process")]

HERE = Path(__file__).resolve().parent

harness = load_private("_reshard_runtime_mc_harness", HERE.parent / "multicontroller" / "harness.py")
cases = load_private("_reshard_runtime_every_process_cases", HERE / "every_process_cases.py")


@pytest.fixture(scope="module")
def results() -> dict[str, Any]:
    try:
        got = harness.run_batch([case.code for case in cases.CASES], mode="multi", processes=2,
                                devices=4, timeout=90)
    finally:
        harness.kill_all()
    return {case.name: result for case, result in zip(cases.CASES, got)}


@pytest.mark.parametrize("name", [case.name for case in cases.CASES])
def test_each_process_does_what_the_case_says(results: dict[str, Any], name: str) -> None:
    case = next(c for c in cases.CASES if c.name == name)
    result = results[name]
    by_id = {p.process_id: p for p in result.processes}
    for pid, expected in enumerate(case.real):
        outcome = by_id[pid]
        if expected is None:
            assert outcome.status == "ok", result.details()
        else:
            assert outcome.status == "error", result.details()
            assert re.search(expected, outcome.error_text), result.details()
    # strict mode stops exactly the programs some process fails
    assert (case.strict is not None) == any(e is not None for e in case.real)
