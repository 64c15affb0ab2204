"""``jax.tree.map(f, tree, *rest)``: ``f`` run on each leaf of ``tree``, with the subtree at
the same place of every other tree.

What JAX does (observed, jax 0.10.2 on 8 CPU devices): the leaves are visited in the
order ``jax.tree.leaves`` gives (a dict's values by sorted key, then a list's or tuple's
in order, depth first); ``None`` is a subtree with no leaf, so ``f`` never sees it and
the result keeps it; each other tree must have the first one's structure or have it as
a prefix (a leaf of the first tree takes the whole subtree of the others at its place),
else JAX raises a ValueError before ``f`` runs (a list against a tuple, other dict keys,
a leaf where the first tree has a container, anything but ``None`` where it has
``None``); the result has the first tree's structure, a dict's keys sorted, with what
``f`` returned at each leaf. ``NamedSharding``, ``Mesh`` and ``PartitionSpec`` are
leaves; so are ``d.values()``, ``enumerate(...)`` and the like (``SeqVal.view``).

Where the first tree's structure is known exactly (lists, tuples and dicts the
analysis holds, unchanged, with constant string keys, nested), every leaf is a value
JAX takes for a leaf, and the others match it, ``f`` runs once per leaf, in JAX's
order, within the bounds of loops run per element (``unroll.budget``: at most 8
leaves), each run's transfers reported; the result is the tree of the runs' results.
An array or host data may stand for a pytree of arrays on its devices (a jitted call's
result, ``np.split``'s list): its run stands for the runs on its leaves, which are on
the same devices, so another tree may hold only a leaf there (a container there is one
JAX would flatten only if the array were one), and what ``f`` returned stays only where
it stands for a pytree as well (an array, host data, a sharding, a mesh). Anywhere else ``f`` runs once,
on a leaf standing for every leaf where there is one (``_leaf``).
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Iterator, Optional

from ...core import vocabulary as api
from .. import unroll
from ..arguments import Call
from ..reasons import CONTAINER
from ..scope import Scope
from ..valueops import alike, leaves
from ..values import (
    UNKNOWN, ArrayVal, ConstVal, DevVal, FuncVal, HostVal, IntVal, MeshVal, OwnShardingVal, PartialVal, SeqVal,
    ShardingVal, SpecVal, Unknown, Value, unknown,
)
from .registry import handles

if TYPE_CHECKING:
    from ..interpreter import Analyzer

# Constants JAX takes for leaves (None is no leaf: a subtree with none).
_SCALARS = (bool, int, float, complex, str, bytes)
# What f's run on an array or host data that may be a pytree may give for the pytree of
# its runs on each leaf: arrays on one mesh, host data, shardings or meshes of one mesh
# (a target for each leaf: jax.tree.map(lambda a: NamedSharding(a.sharding.mesh, spec), tree)).
_STANDS_FOR_A_TREE = (ArrayVal, HostVal, ShardingVal, OwnShardingVal, MeshVal, Unknown)


@handles(api.TREE_MAP)
def _tree_map(an: Analyzer, call: Call, node: ast.Call, scope: Scope) -> Value:
    f = call.arg(0, "f")
    if not isinstance(f, (FuncVal, PartialVal)) or call.has_star or not call.positional[1:]:
        return UNKNOWN
    trees = [v for v, _ in call.positional[1:]]
    if not call.given(-1, "is_leaf"):
        runs = per_leaf(trees[0], trees[1:])
        weight = unroll.budget(an, len(runs)) if runs else None
        if runs and weight is not None:
            return _rebuilt(trees[0], iter(_each_run(an, f, runs, weight, node, scope)))
    picked = [_leaf(an, t) if not call.given(-1, "is_leaf") else (unknown(CONTAINER), False) for t in trees]
    each = [leaf for leaf, _ in picked]
    result = _run(an, f, each, node, scope)
    tree = trees[0]
    if len(trees) == 1 and picked[0][1] and isinstance(tree, SeqVal):
        return SeqVal(tuple(result for _ in tree.items), tree.kind, tree.keys)
    return result if len(trees) == 1 and picked[0][1] else UNKNOWN


def per_leaf(first: Value, others: list[Value]) -> Optional[list[tuple[Value, ...]]]:
    """The arguments of each of ``f``'s runs, in JAX's order: each leaf of ``first`` with
    the subtree at its place in each of ``others``; None where the analysis does not know
    them exactly (or there are more than ``unroll.MAX_ELEMENTS``)."""
    out: list[tuple[Value, ...]] = []
    return out if _zipped(first, others, out) else None


def _zipped(first: Value, others: list[Value], out: list[tuple[Value, ...]]) -> bool:
    if _none(first):
        return all(_none(o) for o in others)
    if isinstance(first, SeqVal):
        children = _children(first)
        if children is None:
            return False
        theirs = []
        for o in others:
            c = _children(o) if isinstance(o, SeqVal) and o.kind == first.kind else None
            if c is None or [k for k, _ in c] != [k for k, _ in children]:
                return False  # JAX raises, or the analysis does not know
            theirs.append(c)
        return all(_zipped(child, [c[i][1] for c in theirs], out) for i, (_, child) in enumerate(children))
    if _is_leaf(first) or _stands_for_leaves(first) and all(
            _is_leaf(o) or _stands_for_leaves(o) or isinstance(o, Unknown) for o in others):
        out.append((first, *others))
        return len(out) <= unroll.MAX_ELEMENTS
    return False


def _children(v: SeqVal) -> Optional[list[tuple[object, Value]]]:
    """A list's, tuple's or dict's children in JAX's order, with their keys (a dict's
    sorted; JAX raises on keys it cannot sort), where the analysis knows them all."""
    if v.changed or v.view or v.kind not in ("tuple", "list", "dict"):
        return None
    if v.kind != "dict":
        return list(enumerate(v.items))
    keys = v.keys
    if len(keys) != len(v.items) or not all(type(k) is str for k in keys) or len(set(keys)) != len(keys):
        return None
    return sorted(zip(keys, v.items), key=lambda kv: str(kv[0]))


def _none(v: Value) -> bool:
    return isinstance(v, ConstVal) and v.value is None


def _is_leaf(v: Value) -> bool:
    """One leaf for JAX: a constant, an int, a sharding, a mesh, a spec, a device."""
    if isinstance(v, ConstVal):
        return type(v.value) in _SCALARS
    if isinstance(v, DevVal):
        return v.single
    return isinstance(v, (IntVal, ShardingVal, MeshVal, SpecVal))


def _stands_for_leaves(v: Value) -> bool:
    """A leaf or a pytree of leaves alike: an array (on its devices), host data."""
    return isinstance(v, (ArrayVal, HostVal))


def _each_run(an: Analyzer, f: Value, runs: list[tuple[Value, ...]], weight: int, node: ast.Call,
              scope: Scope) -> list[Value]:
    """``f`` run once per leaf, as unroll.py runs a loop's body once per element."""
    outer, an.unroll_weight = an.unroll_weight, weight
    roots: set[int] | None = None
    results = []
    try:
        for args in runs:
            an.unroll_runs += 1
            results.append(_run(an, f, list(args), node, scope))
            if roots is None:
                # RSH102 counts the device arrays meshes are built on: the same
                # construction run again is no second one (flow.py's loops).
                roots = set(an.ctx.mesh_roots)
    finally:
        an.unroll_weight = outer
        if roots is not None:
            an.ctx.mesh_roots.clear()
            an.ctx.mesh_roots.update(roots)
    return results


def _run(an: Analyzer, f: Value, args: list[Value], node: ast.Call, scope: Scope) -> Value:
    # A partial (jax.tree.map(partial(jax.device_put, device=s), tree)) is called as
    # the program would call it on the leaves: this call its site.
    if isinstance(f, FuncVal):
        return an.call_with_leaves(f, args, node)
    return an.call_value(f, Call.of_values(node, args), node, scope)


def _rebuilt(first: Value, results: Iterator[Value]) -> Value:
    """``first``'s structure with the runs' results at its leaves (a dict's keys sorted)."""
    if _none(first):
        return first
    if isinstance(first, SeqVal):
        children = _children(first) or []
        items = tuple(_rebuilt(child, results) for _, child in children)
        return SeqVal(items, first.kind, tuple(k for k, _ in children) if first.kind == "dict" else ())
    result = next(results)
    if _is_leaf(first) or isinstance(result, _STANDS_FOR_A_TREE):
        return result
    return unknown(CONTAINER)  # f's result on each leaf of a pytree: another pytree


def _leaf(an: Analyzer, tree: Value) -> tuple[Value, bool]:
    """A leaf that stands for every leaf of ``tree``, and whether the result of a
    callback on it stands for the others' (arrays on one mesh).

    Where every leaf of a tree is an array on one mesh, or host data, ``f`` runs on one
    leaf of it and the result has the tree's structure (arrays only: the host leaves of
    one tree need not be alike, so what ``f`` makes of the others is not known). Where
    the leaves are not known, ``f`` still runs, on a leaf the analysis does not know:
    its transfers are there to be counted, and those that need no leaf (a target built on
    the leaf's own sharding) are resolved."""
    if isinstance(tree, Unknown):
        return unknown(tree.reason or CONTAINER, tree.culprit), False
    ls = leaves(tree)
    first = ls[0] if ls else None
    if first is None:
        return unknown(CONTAINER), False
    if isinstance(first, ArrayVal) and first.mesh is not None and all(
            isinstance(leaf, ArrayVal) and leaf.mesh is not None
            and an.ctx.compare(leaf.mesh, first.mesh) == "same" for leaf in ls):
        return first, True
    if alike(ls):
        # One value for every leaf ({'w': s, 'b': s}), or NumPy data: the first stands
        # for all, as a loop variable does; constants do not (lambda i: arrays[i]).
        return first, all(leaf is first for leaf in ls)
    return unknown(CONTAINER), False
