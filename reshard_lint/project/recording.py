"""The interpreter a summary runs a module body with: it also keeps the value each
module-level assignment of a guarded name bound (guarded.py), which the join after an
``if`` or ``try`` block loses."""

from __future__ import annotations

import ast
from typing import Callable

from ..analysis import Analyzer
from ..analysis.context import FileContext
from ..analysis.scope import Scope
from ..analysis.values import Value


class RecordingAnalyzer(Analyzer):
    def __init__(self, ctx: FileContext, sink: Callable[[object], None], names: set[str]) -> None:
        super().__init__(ctx, sink)
        self.guarded = names
        self.bound_at: dict[str, Value] = {}  # guarded name -> the value its one statement bound

    def bind(self, target: ast.expr, value: Value, scope: Scope) -> None:
        super().bind(target, value, scope)
        if scope.kind == "module" and isinstance(target, ast.Name) and target.id in self.guarded:
            self.bound_at[target.id] = scope.vars.get(target.id, value)
