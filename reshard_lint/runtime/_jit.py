"""Strict mode's check of ``jax.jit(f, in_shardings=...)`` calls (RSH203, RSH204). Imports jax.

Loaded by ``_patch``. Two ways in. Where JAX has the Python path its C++ dispatch falls back
to on a cache miss (``check_jit_miss``), the check runs there: JAX's cache is keyed by the
arguments' shardings, so every new sharding of an argument passes through it once and a
warm call runs no Python at all. Elsewhere the functions jitted under strict mode are
wrapped and each call checked (``check_jit_call``), with verdicts cached per (argument
sharding, in_sharding, rank) so that a warm call stays a small fraction of the call
(bench/strict_overhead.py).
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import jax
from jax.sharding import Sharding

from ._checks import Finding, checkable, memoized, trace_state_clean, ArrayImpl, ids, \
    ordered_devices, topology
from ._format import fmt_ids, fmt_procs
from ._state import Split, StrictConfig
from .errors import ReshardError

try:  # the C++ flatten without jax.tree_util's Python frame around it
    from jax._src.tree_util import default_registry as _registry

    _flatten: Callable[[Any], tuple[list[Any], Any]] = _registry.flatten
except ImportError:  # pragma: no cover - other jax versions
    _flatten = jax.tree_util.tree_flatten

# What JAX 0.10.2 does with `jax.jit(f, in_shardings=s)(x)`, x committed, when s's device
# assignment (mesh order) is not x's. Observed with 1 process x 8 CPU devices and with
# 2 processes x 4 (tests/runtime/test_strict_jit.py, RUNTIME-FACTS.md):
#   - JAX compares only the HLO shardings (device positions, not device ids). Where they
#     differ it raises its own ValueError on every host count.
#   - Where they are equal and both sides span the same number (> 1) of devices, the first
#     call copies x (a full copy), and C++'s fast path then hands x's buffers straight to the
#     executable: the second call crashes the process (SIGSEGV after XLA's INVALID_ARGUMENT
#     "Buffer passed to Execute() ... is on device cpu:0, but replica is assigned to device
#     cpu:7"). Under 2 processes the processes crash, or raise "Cannot reshard an input that
#     is not fully addressable".
#   - Other counts (a single device, 4 devices to 8 replicated) are copied on every call, on
#     one process and when both sides sit on one process; when they span processes the
#     process that does not hold all of x raises "NotImplementedError: Cannot reshard an
#     input that is not fully addressable".
_JIT_MISMATCH = ('"ValueError: Sharding passed to jit does not match the sharding on the '
                 'respective arg"')
_JIT_CRASH = ('on one process the first call silently copies it and the second call of the '
              'same jitted function crashes the process (SIGSEGV after XLA INVALID_ARGUMENT '
              '"Buffer passed to Execute() ... is on device ..., but replica is assigned to '
              'device ..."); multi-controller JAX crashes the processes')
_JIT_FIX = ("x = jax.device_put(x, s) before the call (s: the jit's in_sharding), or build "
            "in_shardings on the argument's mesh: NamedSharding(x.sharding.mesh, spec)")
_JIT_RANK = {"RSH204": 0, "RSH203": 1}


def _hlo_equal(src: Sharding, dst: Sharding, ndim: int) -> bool | None:
    """JAX's own test in pjit._resolve_in_shardings; None when it cannot be read."""
    try:
        from jax._src import op_shardings

        return bool(op_shardings.are_hlo_shardings_equal(dst._to_xla_hlo_sharding(ndim),
                                                         src._to_xla_hlo_sharding(ndim)))
    except Exception:
        return None


def _classify_jit_uncached(src: Sharding, dst: Sharding, ndim: int,
                           requested: Split) -> Finding | None:
    src_devices = ordered_devices(src)
    dst_devices = ordered_devices(dst)
    src_ids, dst_ids = ids(src_devices), ids(dst_devices)
    if src_ids == dst_ids:
        return None
    same_set = set(src_ids) == set(dst_ids)
    code = "RSH204" if same_set else "RSH203"
    how = "the same devices in another order" if same_set else "a different device set"
    head = (f"takes {{what}} on devices {fmt_ids(src_ids)} through in_shardings on "
            f"{fmt_ids(dst_ids)}, {how}: ")
    equal = _hlo_equal(src, dst, ndim)
    if equal is None:
        return None  # cannot tell what JAX will do: it judges the call itself
    if not equal:
        return Finding(code, src_ids, dst_ids,
                       f"{head}JAX raises {_JIT_MISMATCH} on one host and on many; {_JIT_FIX}")
    if len(src_ids) == len(dst_ids) > 1:
        return Finding(code, src_ids, dst_ids, f"{head}{_JIT_CRASH}; {_JIT_FIX}")
    # Copied on every call on one process; fails only where the two sides span processes.
    topo = topology(requested, src_devices[0].platform)
    if topo.processes < 2:
        return None
    procs = topo.processes_of(src_devices + dst_devices)
    if procs is None or len(procs) < 2:
        return None
    return Finding(code, src_ids, dst_ids,
                   f"{head}one process copies it on every call, but the two sides span "
                   f"{topo.word}es {fmt_procs(procs)}, and multi-controller JAX raises "
                   f"\"NotImplementedError: Cannot reshard an input that is not fully "
                   f"addressable\" on a process that does not hold all of it (and can crash another); "
                   f"{_JIT_FIX}")


def reorder_effect(src: Sharding, dst: Sharding, ndim: int) -> str | None:
    """What JAX does when an argument on ``src`` meets an in_sharding ``dst`` of the same
    devices in another order (as another platform orders them), with the fix; None when
    this cannot tell."""
    equal = _hlo_equal(src, dst, ndim)
    if equal is None:
        return None
    return (f"JAX raises {_JIT_MISMATCH}" if not equal else _JIT_CRASH) + f"; {_JIT_FIX}"


# Set by _across when strict mode installs: the same argument judged on the target platforms.
across_jit: Callable[[Any, Any, int, tuple[str, ...]], Finding | None] | None = None


def _classify_jit_everywhere(src: Sharding, dst: Sharding, ndim: int, requested: Split,
                             targets: tuple[str, ...]) -> Finding | None:
    found = _classify_jit_uncached(src, dst, ndim, requested)
    if found is None and targets and across_jit is not None:
        found = across_jit(src, dst, ndim, targets)
    return found


classify_jit = memoized(_classify_jit_everywhere)

_DEEP = object()  # JitSignature.per_argument when in_shardings is a deeper pytree


class JitSignature:
    """What strict mode reads from one ``jax.jit(f, in_shardings=...)``, and what it learnt.

    ``plans``: per shape of the arguments (their count when all are arrays, else their
    treedef), the in_sharding each leaf meets (None where there is nothing to check), or
    ``()`` when in_shardings do not fit the arguments (JAX then judges the call). A leaf
    whose sharding *is* its in_sharding object (JAX keeps the object through device_put,
    jit outputs and eager ops) is on the same devices in the same order: clean, with no
    verdict needed. ``verdicts``: the verdict per (simulated processes, argument shape,
    arguments' shardings and ranks) for the calls that get past that test.
    """

    __slots__ = ("name", "static", "in_shardings", "per_argument", "plans", "verdicts")

    _LIMIT = 1024  # distinct argument shapes / sharding signatures kept per function

    def __init__(self, name: str, static_argnums: Sequence[int], in_shardings: Any) -> None:
        self.name = name
        self.static = frozenset(static_argnums)
        self.in_shardings = in_shardings  # a pytree prefix of the dynamic positional args
        # One in_sharding for every argument, or one (or None) per argument: then a leaf's
        # in_sharding is its argument's, and shallow arguments need no flatten.
        self.per_argument: Any = _DEEP
        if isinstance(in_shardings, Sharding) or (type(in_shardings) is tuple and all(
                t is None or isinstance(t, Sharding) for t in in_shardings)):
            self.per_argument = in_shardings
        self.plans: dict[Any, tuple[Sharding | None, ...]] = {}
        self.verdicts: dict[Any, tuple[Finding, str] | None] = {}


def _shallow_clean(per_argument: Any, dyn: tuple[Any, ...]) -> bool:
    """True when each argument is an array, or a dict, list or tuple of arrays, and each
    of those arrays is uncommitted or on its argument's in_sharding object. Anything
    else (nesting, host data, another sharding) is left to the full check."""
    each = type(per_argument) is tuple
    if each and len(per_argument) != len(dyn):
        return False  # JAX raises its own error for the call
    for i, a in enumerate(dyn):
        target = per_argument[i] if each else per_argument
        if target is None:
            continue  # nothing to check anywhere in this argument
        kind = type(a)
        items = (a,) if kind is ArrayImpl else a.values() if kind is dict \
            else a if kind is list or kind is tuple else None
        if items is None:
            return False
        for leaf in items:
            if type(leaf) is not ArrayImpl or (leaf._committed and leaf._sharding is not target):
                return False
    return True


def _dynamic(sig: JitSignature, args: tuple[Any, ...]) -> tuple[tuple[Any, ...], list[int]]:
    if not sig.static:
        return args, list(range(len(args)))
    n = len(args)
    static = {i % n for i in sig.static if -n <= i < n}
    positions = [i for i in range(n) if i not in static]
    return tuple(args[i] for i in positions), positions


def _in_shardings_per_leaf(sig: JitSignature, dyn: tuple[Any, ...],
                           count: int) -> tuple[Sharding | None, ...]:
    try:
        from jax._src.tree_util import broadcast_prefix

        targets = broadcast_prefix(sig.in_shardings, dyn, is_leaf=lambda v: v is None)
    except Exception:  # in_shardings that do not fit the arguments: JAX says so itself
        return ()
    if len(targets) != count:
        return ()
    return tuple(t if isinstance(t, Sharding) else None for t in targets)


def _new_plan(sig: JitSignature, shape: Any, dyn: tuple[Any, ...],
              count: int) -> tuple[Sharding | None, ...]:
    plan = _in_shardings_per_leaf(sig, dyn, count)
    try:
        if len(sig.plans) >= sig._LIMIT:
            sig.plans.clear()
        sig.plans[shape] = plan
    except TypeError:  # a custom pytree node with unhashable data: no cache
        pass
    return plan


def _jit_verdict(sig: JitSignature, dyn: tuple[Any, ...], positions: list[int],
                 requested: Split, platforms: tuple[str, ...]) -> tuple[Finding, str] | None:
    path_leaves, _ = jax.tree_util.tree_flatten_with_path(dyn)
    targets = _in_shardings_per_leaf(sig, dyn, len(path_leaves))
    best: tuple[Finding, str] | None = None
    for (path, leaf), target in zip(path_leaves, targets):
        if target is None or not checkable(leaf):
            continue  # host data, uncommitted arrays, None / PartitionSpec entries
        found = classify_jit(leaf.sharding, target, leaf.ndim, requested, platforms)
        if found is None:
            continue
        if best is None or _JIT_RANK[found.code] < _JIT_RANK[best[0].code]:
            index = getattr(path[0], "idx", None) if path else None
            best = (found, _path_name(positions[index] if isinstance(index, int) else None, path))
    return best


def _path_name(position: int | None, path: Sequence[Any]) -> str:
    """``argument 1 leaf ['w']``: the argument at ``position``, and the rest of a pytree
    ``path`` whose first key is that argument's."""
    if position is None:
        return "an argument"
    rest = jax.tree_util.keystr(tuple(path[1:])) if len(path) > 1 else ""
    return f"argument {position} leaf {rest}" if rest else f"argument {position}"


def check_jit_miss(config: StrictConfig, params: dict[str, Any], args_flat: Sequence[Any],
                   fun: Any, args: tuple[Any, ...]) -> None:
    """Check a jitted call JAX could not serve from its cache, before it compiles or runs it
    (JAX has traced the function by then).

    ``params['in_shardings']`` holds one entry per flat argument: the user's ``Sharding``, a
    ``PartitionSpec`` already resolved on the context mesh (JAX treats both the same from
    here on: the same crash, observed), or an unspecified marker.
    """
    __tracebackhide__ = True  # pytest shows the user's call, not these frames
    if _is_jax_module(fun):
        return  # JAX's own jits (jnp functions, pmap): their placement is JAX's business
    targets = params.get("in_shardings", ())
    if len(targets) != len(args_flat):
        return  # a layout this check does not know: JAX judges the call
    best: tuple[Finding, int] | None = None
    for index, (leaf, target) in enumerate(zip(args_flat, targets)):
        if not isinstance(target, Sharding) or not checkable(leaf):
            continue
        found = classify_jit(leaf.sharding, target, leaf.ndim, config.split, config.platforms)
        if found is not None and (best is None or _JIT_RANK[found.code] < _JIT_RANK[best[0].code]):
            best = (found, index)
    if best is None or not trace_state_clean():  # inside a trace nothing executes
        return
    found, index = best
    call = f"jit({params.get('name') or getattr(fun, '__name__', None) or 'fun'})"
    raise ReshardError(found.message(call, _argument_name(args, args_flat, index)),
                       code=found.code, call="jit", source=found.source, target=found.target)


def _is_jax_module(fun: Any) -> bool:
    module = getattr(fun, "__module__", None)
    return isinstance(module, str) and (module == "jax" or module.startswith(("jax.", "jaxlib.")))


def _argument_name(args: tuple[Any, ...], args_flat: Sequence[Any], index: int) -> str:
    """``argument 1 leaf ['w']`` for ``args_flat[index]``, found by identity among the
    positional arguments (jit takes no keyword arguments with in_shardings; static arguments
    are hashable, so never the array named here)."""
    leaf = args_flat[index]
    nth = sum(1 for a in args_flat[:index] if a is leaf)
    try:
        path_leaves, _ = jax.tree_util.tree_flatten_with_path(tuple(args))
    except Exception:
        return "an argument"
    for path, candidate in path_leaves:
        if candidate is not leaf:
            continue
        if nth:
            nth -= 1
            continue
        position = getattr(path[0], "idx", None) if path else None
        return _path_name(position if isinstance(position, int) else None, path)
    return "an argument"


def check_jit_call(config: StrictConfig, sig: JitSignature, args: tuple[Any, ...]) -> None:
    """Check a call of ``jax.jit(f, in_shardings=...)`` before JAX runs it (RSH203, RSH204)."""
    __tracebackhide__ = True  # pytest shows the user's call, not these frames
    dyn, positions = _dynamic(sig, args) if sig.static else (args, None)
    if sig.per_argument is not _DEEP and _shallow_clean(sig.per_argument, dyn):
        return
    # Arrays as arguments need no pytree work.
    shape: Any = len(dyn)
    leaves: Sequence[Any] = dyn
    for a in dyn:
        if type(a) is not ArrayImpl:
            leaves, shape = _flatten(dyn)
            break
    try:
        plan = sig.plans[shape]
    except (KeyError, TypeError):  # TypeError: a custom pytree node with unhashable data
        plan = _new_plan(sig, shape, dyn, len(leaves))
    # The warm path: every leaf is host data, uncommitted, or on its in_sharding object.
    for leaf, target in zip(leaves, plan):
        if target is None:
            continue
        if type(leaf) is ArrayImpl:
            if not leaf._committed or leaf._sharding is target:
                continue
            break
        if isinstance(leaf, ArrayImpl) and leaf._committed:
            break
    else:
        return
    _judge(config, sig, dyn, positions, leaves, shape)


def _judge(config: StrictConfig, sig: JitSignature, dyn: tuple[Any, ...], positions: list[int] | None,
           leaves: Sequence[Any], shape: Any) -> None:
    """The verdict for arguments some of which are not on their in_sharding object."""
    __tracebackhide__ = True  # pytest shows the user's call, not these frames
    # The key: each leaf's sharding (and rank) where it is a committed array, else None.
    key = (config.split, config.platforms, shape,
           tuple((leaf.sharding, leaf.ndim) if checkable(leaf) else None for leaf in leaves))
    try:
        verdict = sig.verdicts[key]
    except KeyError:
        verdict = _jit_verdict(sig, dyn, positions or list(range(len(dyn))), config.split,
                               config.platforms)
        if len(sig.verdicts) >= sig._LIMIT:
            sig.verdicts.clear()
        sig.verdicts[key] = verdict
    except TypeError:  # an unhashable sharding: no cache
        verdict = _jit_verdict(sig, dyn, positions or list(range(len(dyn))), config.split,
                               config.platforms)
    if verdict is None or not trace_state_clean():  # inside a trace nothing executes
        return
    found, what = verdict
    call = f"jit({sig.name})"
    raise ReshardError(found.message(call, what), code=found.code, call="jit",
                       source=found.source, target=found.target)
