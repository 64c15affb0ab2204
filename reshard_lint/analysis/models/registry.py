"""The table of the models' handlers, ``HANDLERS``: canonical qualified name -> handler.
Each model module registers its handlers with ``@handles(...)``; the package imports
every model module, so that importing ``analysis.models`` fills the table."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Callable

from ..arguments import Call
from ..scope import Scope
from ..values import Value

if TYPE_CHECKING:
    from ..interpreter import Analyzer

Handler = Callable[["Analyzer", Call, ast.Call, Scope], Value]
HANDLERS: dict[str, Handler] = {}


def handles(*names: str) -> Callable[[Handler], Handler]:
    def deco(fn: Handler) -> Handler:
        for n in names:
            HANDLERS[n] = fn
        return fn
    return deco
