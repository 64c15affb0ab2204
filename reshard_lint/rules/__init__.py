"""Rules are found by walking this package: one module, one rule, no registry."""

from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache

from .base import Example, Grounding, Invalid, Outcome, Rule, Valid, expected_markers

__all__ = ["Example", "Grounding", "Invalid", "Outcome", "Rule", "Valid", "all_rules",
           "expected_markers", "rule_by_code"]


@lru_cache(maxsize=1)
def all_rules() -> tuple[type[Rule], ...]:
    found: list[type[Rule]] = []
    for info in pkgutil.iter_modules(__path__):
        if not info.name.startswith("rsh"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, Rule) and value is not Rule \
                    and value.__module__ == module.__name__:
                found.append(value)
    return tuple(sorted(found, key=lambda r: r.code))


def rule_by_code(code: str) -> type[Rule] | None:
    for rule in all_rules():
        if rule.code == code:
            return rule
    return None
