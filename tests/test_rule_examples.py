"""Every rule's own examples: exact diagnostics, and the fix's result."""

from __future__ import annotations

import pytest

from reshard_lint.core import fixes
from reshard_lint.engine.engine import Engine
from reshard_lint.rules import Example, all_rules

ENGINE = Engine()
CASES = [(rule, i, ex) for rule in all_rules() for i, ex in enumerate(rule.examples)]


def _diags(code: str) -> list[tuple[int, int, str]]:
    result = ENGINE.lint_source(code, "example.py")
    assert result.error is None, result.error
    return sorted((d.line, d.col + 1, d.code) for d in result.diagnostics)


@pytest.mark.parametrize("rule,index,example", CASES,
                         ids=[f"{r.code}-{'fires' if e.fires else 'clean'}-{i}" for r, i, e in CASES])
def test_example_diagnostics_are_exactly_the_markers(rule: type, index: int, example: Example) -> None:
    got = _diags(example.code)
    assert got == example.expected()
    codes = {c for _, _, c in got}
    if example.fires:
        assert rule.code in codes
    else:
        assert rule.code not in codes


FIXED = [(rule, i, ex) for rule, i, ex in CASES if ex.fixed]


@pytest.mark.parametrize("rule,index,example", FIXED, ids=[f"{r.code}-{i}" for r, i, _ in FIXED])
def test_fix_gives_the_documented_program(rule: type, index: int, example: Example) -> None:
    result = ENGINE.lint_source(example.code, "example.py")
    own = [d for d in result.diagnostics if d.code == rule.code]
    assert own and all(d.fix is not None for d in own)
    assert all(d.fix.safe == (rule.fix_safety == "safe") for d in own)  # type: ignore[union-attr]
    new, applied = fixes.apply(example.code, own, unsafe=True)
    assert applied
    assert new == example.fixed
    # Other rules' fixes may follow (RSH103's mesh can be reordered: RSH102); applied
    # until nothing changes, the result is a fixpoint and still parses.
    current = new
    for _ in range(10):
        diags = ENGINE.lint_source(current, "example.py").diagnostics
        nxt, _ = fixes.apply(current, diags, unsafe=True)
        if nxt == current:
            break
        current = nxt
    final = ENGINE.lint_source(current, "example.py")
    assert final.error is None
    assert fixes.apply(current, final.diagnostics, unsafe=True)[0] == current
    assert rule.code not in {d.code for d in final.diagnostics if d.fix is not None}


@pytest.mark.parametrize("rule", all_rules(), ids=lambda r: r.code)
def test_rule_has_firing_and_ten_clean_examples(rule: type) -> None:
    assert len(rule.firing()) >= 1
    assert len(rule.clean()) >= 10


@pytest.mark.parametrize("rule", all_rules(), ids=lambda r: r.code)
def test_safe_fix_rules_document_a_fix(rule: type) -> None:
    if rule.fix_safety != "none":
        assert any(e.fixed for e in rule.firing()), f"{rule.code} has a fix but no example of it"


def test_codes_are_unique_and_stable() -> None:
    codes = [r.code for r in all_rules()]
    assert codes == sorted(set(codes))
    assert codes == ["RSH101", "RSH102", "RSH103", "RSH104", "RSH201", "RSH202", "RSH203", "RSH204",
                     "RSH301", "RSH302", "RSH303", "RSH304", "RSH305", "RSH306", "RSH307", "RSH308"]
