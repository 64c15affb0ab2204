"""An analysis leaves nothing for Python's cyclic collector to rescan: its values and
trees are freed by reference counting, and leaving ``paused()`` starts no collection
while the caller still holds a file's tree."""

from __future__ import annotations

import ast
import gc
import weakref
from typing import Any


from reshard_lint.analysis.tree import Module
from reshard_lint.core.collector import paused
from reshard_lint.engine.engine import Engine, check_source

SOURCE = '''\
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P


def make(shape):
    return jax.make_mesh(shape, ("x",))


class Trainer:
    def __init__(self, mesh):
        self.mesh = mesh
        self.put = lambda x: jax.device_put(x, NamedSharding(self.mesh, P("x")))

    def step(self, x):
        return self.put(x)


a = Trainer(make((8,))).step(np.arange(8))
b = jax.device_put(a, NamedSharding(make((4,)), P("x")))
'''


def _garbage_after(run: Any) -> list[object]:
    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        run()
        gc.collect()
        return list(gc.garbage)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()


def test_analysis_leaves_no_tree_to_the_collector() -> None:
    engine = Engine()
    engine.lint_source(SOURCE, "t.py", force=True)  # imports and rules built before measuring
    garbage = _garbage_after(lambda: engine.lint_source(SOURCE, "t.py", force=True))
    trees = [o for o in garbage if isinstance(o, (Module, ast.AST))]
    assert trees == []


REJECTED = """\
import jax
import numpy as np
from jax.sharding import NamedSharding, PartitionSpec as P


def make():
    return jax.make_mesh((8,), ("x",))


x = jax.device_put(np.arange(8), NamedSharding(make(), P("x")))
"""


def test_gate_leaves_no_tree_behind() -> None:
    verdicts: list[bool] = []
    garbage = _garbage_after(lambda: verdicts.append(
        check_source(REJECTED, "r.py", imported=frozenset(), analyse=False).prepared is not None))
    assert verdicts == [False]
    assert [o for o in garbage if isinstance(o, ast.AST)] == []


class _Held:
    pass


def test_leaving_paused_starts_no_collection_while_the_tree_is_held() -> None:
    alive_at_collection: list[bool] = []
    ref: list[Any] = []

    def watch(phase: str, info: dict[str, int]) -> None:
        if phase == "start" and ref:
            alive_at_collection.append(ref[0]() is not None)

    def analyse() -> int:
        with paused(freeze=False):
            held = _Held()
            ref.append(weakref.ref(held))
            tree = [[] for _ in range(50_000)]  # far past the collector's threshold
        return len(tree)

    gc.callbacks.append(watch)
    try:
        analyse()
        [[] for _ in range(5_000)]  # the collection the allocations above are owed
    finally:
        gc.callbacks.remove(watch)
    assert alive_at_collection and not any(alive_at_collection)
