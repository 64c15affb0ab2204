"""Device lists filtered by id (analysis/models/id_filters.py), as `reshard-lint coverage`
and `check` report tests/fixtures/id_filters.py (whose diagnostics the fixture states,
test_fixtures.py). What multi-controller JAX does with them: tests/multicontroller/test_id_filters.py."""

from __future__ import annotations

from reshard_lint.engine.engine import check_source
from reshard_lint.frontends.coverage import file_coverage

from .conftest import FIXTURES

PATH = FIXTURES / "id_filters.py"


def test_verdicts_of_each_filter() -> None:
    cov = file_coverage(PATH.read_text(encoding="utf-8"), str(PATH), {})
    assert cov.error is None
    v = {s.line: (s.verdict, s.detail) for s in cov.sites}
    for line in (17, 19, 21):
        assert v[line][0] == "crossing", line
    assert v[23][0] == "same_devices"
    assert v[26][0] == "unresolved"  # d.process_index: not a test of the id


def test_the_message_names_the_platforms_where_the_sets_differ() -> None:
    diags = check_source(PATH.read_text(encoding="utf-8"), str(PATH)).diagnostics
    evens = next(d for d in diags if d.line == 17)
    assert evens.code == "RSH201"
    assert "a different device set on TPU and GPU (not certain on CPU)" in evens.message
    assert "[d for d in devs if d.id % 2 == 0]" in evens.message
