"""Strict mode's single-host verdicts, checked against real multi-controller JAX.

The example programs of test_strict_examples.py run under 2 processes of 4 CPU devices
(the project's harness in tests/multicontroller/harness.py, loaded by path so this module
does not depend on how pytest imported that package). A program that strict mode
(processes=2) fails must fail on some process; one it passes or only warns about must run
on every process. And the premise of RSH101 at run time: the global generators draw the same
device order on every process when seeded alike, another one on each when never seeded.
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from conftest import load_private  # this directory is on sys.path (see conftest.py)

# One xdist worker runs the whole module: its module-scoped JAX runs are made once.
pytestmark = [pytest.mark.multicontroller, pytest.mark.xdist_group("runtime-test_grounding_multicontroller")]

HERE = Path(__file__).resolve().parent
HARNESS = HERE.parent / "multicontroller" / "harness.py"


harness = load_private("_reshard_runtime_mc_harness", HARNESS)
examples = load_private("_reshard_runtime_examples", HERE / "test_strict_examples.py")
CASES = examples.CASES


@pytest.fixture(scope="module")
def multi_results() -> dict[str, Any]:
    try:
        results = harness.run_batch([case.code for case in CASES], mode="multi", processes=2,
                                    devices=4, timeout=90)
    finally:
        harness.kill_all()
    return {case.name: result for case, result in zip(CASES, results)}


@pytest.mark.parametrize("name", [case.name for case in CASES])
def test_strict_verdict_matches_multi_controller_jax(multi_results: dict[str, Any], name: str) -> None:
    case = examples.BY_NAME[name]
    result = multi_results[name]
    strict_fails = case.expected("p2").startswith("error:")
    statuses = set(result.statuses)
    if strict_fails:
        assert statuses != {"ok"}, f"strict mode fails {name} but multi-controller JAX runs it:\n" \
                                   + result.details()
        assert statuses <= {"ok", "error"}, result.details()  # a raised error, not a crash
    else:
        assert statuses == {"ok"}, f"strict mode passes {name} but multi-controller JAX fails:\n" \
                                   + textwrap.shorten(result.details(), 3000)


_FETCH_ERROR = "RuntimeError: Fetching value for `jax.Array` that spans non-addressable"


def test_numpy_read_of_another_process_device_is_jax_fetch_error(multi_results: dict[str, Any]) -> None:
    """What strict mode's RSH306 for np.asarray claims: RSH306's examples 3 and 4 (host data
    put on jax.devices()[0], read with np.asarray) run on process 0, the owner, and raise
    JAX's fetch error on process 1 (jaxlib's buffer export finds no buffer there, and numpy
    falls back to __array__); the mirror case (a device of process 1's) fails on process 0."""
    from reshard_lint.rules import all_rules

    (rule,) = [r for r in all_rules() if r.code == "RSH306"]
    programs = [rule.examples[i].code for i in (3, 4)]
    assert all("np.asarray(b" in code for code in programs)
    try:
        results = harness.run_batch(programs, mode="multi", processes=2, devices=4, timeout=90)
    finally:
        harness.kill_all()
    for result in results:
        first, second = sorted(result.processes, key=lambda p: p.process_id)
        assert first.status == "ok", result.details()
        assert second.status == "error" and second.error_text.startswith(_FETCH_ERROR), result.details()
    first, second = sorted(multi_results["numpy_read_of_another_process_device"].processes,
                           key=lambda p: p.process_id)
    assert first.status == "error" and first.error_text.startswith(_FETCH_ERROR), first
    assert second.status == "ok", second


# Each process prints the order its global generators draw, as RSH101 at run time assumes:
# seeded alike, the same order on every process; never seeded, another one on each. The
# unseeded program runs first: the processes are fresh (a seed would carry to the next).
DRAWS = textwrap.dedent("""
    import random
    import jax, numpy as np
    {seed}
    devs = jax.devices()
    random.shuffle(devs)
    print([d.id for d in devs], [d.id for d in np.random.permutation(jax.devices())], flush=True)
""")


def test_global_generators_draw_alike_on_every_process_only_when_seeded() -> None:
    programs = [DRAWS.format(seed=""), DRAWS.format(seed="random.seed(0); np.random.seed(0)")]
    try:
        unseeded, seeded = harness.run_batch(programs, mode="multi", processes=2, devices=4, timeout=90)
    finally:
        harness.kill_all()
    for result in (unseeded, seeded):
        assert result.all_ok() and len(result.processes) == 2, result.details()
    first, second = (p.stdout.strip() for p in seeded.processes)
    assert first == second and first, seeded.details()
    first, second = (p.stdout.strip() for p in unseeded.processes)
    # Both orders of 8 devices equal by chance: 1 in 40,320 squared.
    assert first != second and first and second, unseeded.details()
