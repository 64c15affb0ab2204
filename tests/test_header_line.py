"""A body on its header's line (``if flag: m = rollout``) is run like any other: what
`reshard-lint coverage` says of tests/fixtures/header_line.py, whose diagnostics the
fixture states (test_fixtures.py)."""

from __future__ import annotations

from reshard_lint.analysis.values import PATHS
from reshard_lint.frontends.coverage import file_coverage

from .conftest import FIXTURES


def test_a_name_a_header_line_body_rebinds_is_not_what_it_was() -> None:
    path = FIXTURES / "header_line.py"
    cov = file_coverage(path.read_text(encoding="utf-8"), str(path), {})
    v = {s.line: (s.verdict, s.detail) for s in cov.sites}
    # Was "same devices" (train on both sides) before such bodies ran: m may be rollout.
    assert v[16] == ("unresolved", PATHS)
    assert v[17][0] == "crossing" and v[17][1].startswith("RSH201 ")
