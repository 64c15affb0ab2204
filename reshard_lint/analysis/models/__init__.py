"""Models of the APIs the source cannot show: JAX, NumPy, the random modules, builtins.

Each module of this package models one family and registers its handlers by canonical
qualified name (qualnames.py folds the public spellings) in one table, ``HANDLERS``,
as pytype's overlays register by module name. A handler takes the interpreter, the
call's evaluated arguments, the call node and the scope, and returns the value.
"""

from __future__ import annotations

from .registry import HANDLERS, Handler, handles  # noqa: F401 - the table and its decorator

from . import (  # noqa: F401 (register)
               builtins, commitments, devices, fetches, host, iteration, meshes, numpy, randomness, ranges, shard_map,
               test_util,
               transfers, transforms, tree_map,
               )
