"""Loops and comprehensions over sequences the analysis knows run once per element, as
Python runs them (analysis/unroll.py): what `reshard-lint coverage` says of each site of
tests/fixtures/loops.py, whose diagnostics the fixture states (test_fixtures.py). The
fixture's values were checked under JAX on 8 CPU devices: cur0 and b1 end on
rollout's devices, cur2 on all eight, `final` is train, c4 is on all eight."""

from __future__ import annotations

from reshard_lint.analysis.values import PATHS
from reshard_lint.frontends.coverage import file_coverage

from .conftest import FIXTURES

CONTAINER = "an element of a container the analysis does not know"


def _verdicts() -> dict[int, tuple[str, str]]:
    path = FIXTURES / "loops.py"
    cov = file_coverage(path.read_text(encoding="utf-8"), str(path), {})
    assert cov.error is None
    return {s.line: (s.verdict, s.detail) for s in cov.sites}


def test_each_element_runs_and_a_crossing_in_one_run_is_a_crossing() -> None:
    v = _verdicts()
    # The loop's second run crosses, its first stays: crossing.
    assert v[16][0] == "crossing" and v[16][1].startswith("RSH201 ")
    # range, enumerate, a dict's keys; list and dict comprehensions.
    for line in (36, 38, 41, 52, 55, 57):
        assert v[line][0] == "crossing", line
    # Every run on the same devices: same devices, after the loop too.
    assert v[29][0] == "same_devices" and v[30][0] == "same_devices"
    # The target after the loop (and its else block) is the last element.
    assert v[48][0] == "same_devices"
    assert v[53][0] == "same_devices" and v[56][0] == "same_devices"


def test_a_dict_filled_with_constant_keys_holds_them() -> None:
    v = _verdicts()
    assert v[23][0] == "crossing" and v[24][0] == "same_devices"  # filled in a loop
    assert v[62][0] == "crossing" and v[65][0] == "same_devices"  # a store outside loops
    # Another holder of the changed dict: unknown, never the value it held before.
    assert v[71] == ("unresolved", CONTAINER)


def test_what_it_cannot_run_exactly_stays_unknown() -> None:
    v = _verdicts()
    assert v[77] == ("unresolved", PATHS)  # a break that may happen
    assert v[84] == ("unresolved", CONTAINER)  # a store a branch may make
    assert v[89] == ("unresolved", CONTAINER)  # a store in a loop of unknown length
    # The body changes the list it iterates: the first run (the same devices) and the
    # rest (unknown) disagree.
    assert v[94] == ("unresolved", PATHS)
    assert v[97] == ("unresolved", PATHS)  # nine elements: more than it runs one by one


def test_a_loop_body_with_a_function_or_a_return_is_joined() -> None:
    src = (FIXTURES / "loops.py").read_text(encoding="utf-8") + '''

def with_def():
    for m in (train, rollout):
        def put(a):
            return a
        jax.device_put(x, NamedSharding(m, P()))


def with_return():
    for m in (train, rollout):
        jax.device_put(x, NamedSharding(m, P()))
        return m


def with_try():
    for m in (train, rollout):
        try:
            jax.device_put(x, NamedSharding(m, P()))
        except ValueError:
            pass


with_def()
with_return()
with_try()
'''
    cov = file_coverage(src, "loops2.py", {})
    base = len((FIXTURES / "loops.py").read_text(encoding="utf-8").splitlines())
    added = {s.line - base: s.verdict for s in cov.sites if s.line > base}
    assert added == {7: "unresolved", 12: "unresolved", 19: "unresolved"}


def test_a_name_each_run_binds_again_is_unknown_to_a_function_that_runs_later() -> None:
    # put_current runs after the module with one value of cur10, while its call in the
    # loop's first run saw rollout and the second train: unknown, not the last one.
    assert _verdicts()[108] == ("unresolved", PATHS)


def test_a_generator_a_builtin_consumes_where_it_stands_runs_there() -> None:
    # tuple(...) and list(...) iterate the generator at once: each element's put runs,
    # the second of `moved` to rollout (JAX on 8 CPU devices: the puts happen inside the
    # tuple() call, on 8 and then 4 devices). `lazy` is iterated by nothing: its puts
    # would run later, with what the names hold then.
    v = _verdicts()
    assert v[117][0] == "crossing" and v[118][0] == "same_devices"
    assert v[119] == ("unresolved", "a value the analysis does not model")
