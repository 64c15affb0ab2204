"""Models of the APIs the source cannot show: JAX, NumPy, the random modules, builtins.

Each module of this package models one family and registers its handlers by canonical
qualified name (qualnames.py folds the public spellings) in one table, ``HANDLERS``,
as pytype's overlays register by module name. A handler takes the interpreter, the
call's evaluated arguments, the call node and the scope, and returns the value.
"""

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


from . import (  # noqa: E402,F401 (register)
    builtins, commitments, devices, fetches, host, meshes, numpy, randomness, shard_map, test_util,
    transfers, transforms,
)
