"""Every rule has a docs page in ruff's sections, generated from the rule itself."""

from __future__ import annotations

import pytest

from reshard_lint.rules.docs import SECTIONS, rule_doc
from reshard_lint.rules import all_rules

from .conftest import ROOT


@pytest.mark.parametrize("rule", all_rules(), ids=lambda r: r.code)
def test_rule_page_exists_and_is_current(rule: type) -> None:
    page = ROOT / "docs" / "rules" / f"{rule.code}.md"
    assert page.exists(), f"missing {page}; run python -m reshard_lint.rules.docs"
    assert page.read_text(encoding="utf-8") == rule_doc(rule), \
        f"{page} is stale; run python -m reshard_lint.rules.docs"


@pytest.mark.parametrize("rule", all_rules(), ids=lambda r: r.code)
def test_rule_page_has_every_section(rule: type) -> None:
    text = rule_doc(rule)
    for section in SECTIONS:
        assert f"\n## {section}\n" in text, f"{rule.code} lacks '{section}'"
    for attr in ("what", "why", "fix_text"):
        assert getattr(rule, attr).strip(), f"{rule.code} has no {attr}"
