"""What a fixture's markers claim of its run under real JAX, checked one way for all."""

from __future__ import annotations

from collections.abc import Iterable

from reshard_lint.rules import rule_by_code

from .harness import SnippetResult, matches


def assert_claimed(codes: Iterable[str], multi: SnippetResult, single: SnippetResult | None = None) -> None:
    """Each rule of ``codes`` shows the outcome its grounding claims under multi-controller
    JAX in ``multi`` and, given ``single``, in one process where it claims one there."""
    for code in codes:
        rule = rule_by_code(code)
        assert rule is not None and rule.grounding is not None and rule.grounding.multi is not None
        claim = rule.grounding.multi
        assert matches(multi, claim.status, claim.match, claim.where), multi.details()
        one = rule.grounding.single
        if single is not None and one is not None:
            assert matches(single, one.status, one.match, one.where), single.details()
