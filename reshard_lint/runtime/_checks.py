"""The checks strict mode runs before JAX sees a call. Imports jax: loaded only by ``_patch``.

Every decision here mirrors a row of RUNTIME-FACTS.md or JAX's own dispatch logic, and
tests/runtime/test_grounding_multicontroller.py checks each verdict against real 2-process
JAX, so a single-host run fails where a multi-controller run would.
Anything this module cannot read (an unknown sharding type, a malformed pytree) passes
through unchecked: JAX then raises its own error, and strict mode never invents one.
"""

from __future__ import annotations

import threading
import warnings
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Callable, Sequence

import jax
import numpy as np
from jax._src import xla_bridge as _xb
from jax.sharding import PartitionSpec, Sharding

from ._format import fmt_ids, fmt_procs
from ._order import order_moves
from ._state import Split, StrictConfig
from .errors import ReshardError, ReshardWarning, StrictConfigError

try:  # internal, but the cheapest exact test for "we are eagerly executing"
    from jax._src.core import trace_state_clean
except ImportError:  # pragma: no cover - other jax versions
    def trace_state_clean() -> bool:
        return True

try:
    from jax._src.array import ArrayImpl
except ImportError:  # pragma: no cover
    ArrayImpl = jax.Array

_Device = jax.Device

# Set by _pod once the program asks for this process's devices (jax.local_devices(),
# local_device_count()): only then is a mesh on exactly those devices "process-local"
# (RSH302, RSH303), as the linter sees a mesh built on jax.local_devices(); a subset of
# jax.devices() that happens to sit on one process is RSH201, as the linter says.
local_asked = False
_PLAIN_DATA = (np.ndarray, np.generic, int, float, complex, bool)

_SEED = ('"ValueError: For a cross-host reshard in multi-controller JAX, input and target '
         'sharding should have the same set of devices"')
_MESH_FIX = "build the target on x's mesh: NamedSharding(x.sharding.mesh, spec)"

# Most specific first: one call gets one error, the one ranked lowest here.
_RANK = {"RSH301": 0, "RSH302": 1, "RSH303": 2, "RSH304": 3, "RSH306": 4, "RSH201": 5, "RSH202": 6}


# --------------------------------------------------------------------------- topology

@dataclass(frozen=True, eq=False)  # one object per split (cached): hashed by identity
class Topology:
    """How devices map to (real or simulated) processes, and, when a platform is simulated,
    which of its devices each CPU device plays (``plays``)."""

    processes: int
    simulated: bool
    process_of: dict[Any, int]
    plays: dict[Any, Any] | None = None  # CPU device -> platforms.SimDevice
    me: int = 0  # the process this run is (or plays: StrictConfig.process)

    def processes_of(self, devices: Sequence[Any]) -> frozenset[int] | None:
        try:
            return frozenset(self.process_of[d] for d in devices)
        except KeyError:  # a device outside jax.devices(platform): the split is unknown
            return None

    @property
    def word(self) -> str:
        return "simulated process" if self.simulated else "process"


_topologies: dict[tuple[Split, str], Topology] = {}
_topology_lock = threading.Lock()


def topology(split: Split, platform: str) -> Topology:
    """The process split, computed on first use (after the backend exists) and cached.

    ``split``: a simulated platform's name, a number of processes, or None (automatic),
    paired with the simulated process the run plays when it is not 0 (StrictConfig.split).
    """
    key = (split, platform)
    found = _topologies.get(key)
    if found is not None:
        return found
    requested, process = split if isinstance(split, tuple) else (split, 0)
    with _topology_lock:
        devices = jax.devices(platform)
        # xla_bridge's answers: jax.process_count() may be the simulated pod's (_pod.py).
        if _xb.process_count() > 1:
            # Real multi-controller: the real split is the truth, whatever was asked for.
            topo = Topology(_xb.process_count(), False, {d: d.process_index for d in devices},
                            me=_xb.process_index())
        elif isinstance(requested, str):
            from .platforms import platform as simulated

            sim = simulated(requested)
            if sim.size != len(devices):
                raise StrictConfigError(
                    f"reshard-lint strict mode: platform {requested!r} has {sim.size} devices, this "
                    f"process {len(devices)} {platform} devices; run with JAX_NUM_CPU_DEVICES="
                    f"{sim.size} (or jax.config.update('jax_num_cpu_devices', {sim.size}))")
            plays = dict(zip(devices, sim.devices))
            topo = Topology(sim.hosts, True, {d: s.process_index for d, s in plays.items()}, plays,
                            _played(process, sim.hosts))
        else:
            n = len(devices)
            count = requested if requested is not None else (2 if n > 1 and n % 2 == 0 else 1)
            if n % count:
                raise StrictConfigError(
                    f"reshard-lint strict mode: processes={count} does not divide the "
                    f"{n} {platform} devices into equal hosts; pick a divisor of {n}, "
                    f"or processes=1 to turn the RSH3xx checks off")
            per = n // count
            topo = Topology(count, True, {d: i // per for i, d in enumerate(devices)},
                            me=_played(process, count))
        _topologies[key] = topo
        return topo


def _played(process: int, processes: int) -> int:
    if not -processes <= process < processes:
        raise StrictConfigError(f"reshard-lint strict mode: process={process} is not one of the "
                                f"{processes} simulated processes (0 ... {processes - 1}, or -1 "
                                f"for the last)")
    return process % processes


# --------------------------------------------------------------------------- formatting

def ids(devices: Sequence[Any]) -> tuple[int, ...]:
    return tuple(int(d.id) for d in devices)


def ordered_devices(sharding: Sharding) -> tuple[Any, ...]:
    """A sharding's devices in mesh order (the order that decides which shard goes where)."""
    mesh = getattr(sharding, "mesh", None)
    mesh_devices = getattr(mesh, "devices", None)
    if mesh_devices is not None and hasattr(mesh_devices, "flat"):
        return tuple(mesh_devices.flat)
    assignment = getattr(sharding, "_device_assignment", None)
    if assignment is not None:
        return tuple(assignment)
    # A sharding with no order of its own: id order is the only stable one.
    return tuple(sorted(sharding.device_set, key=lambda d: d.id))


# --------------------------------------------------------------------------- findings

@dataclass(frozen=True)
class Finding:
    code: str
    source: tuple[int, ...]
    target: tuple[int, ...]
    detail: str  # the message after "RSHnnn <call> <what> ", without the call and subject

    def message(self, call: str, what: str) -> str:
        return f"{self.code} {call} {self.detail.format(what=what)}"


def _classify_uncached(src: Sharding, dst: Any, ndim: int, requested: Split,
                       asked: bool = False) -> Finding | None:
    src_devices = ordered_devices(src)
    src_ids = ids(src_devices)
    topo = topology(requested, src_devices[0].platform)
    src_procs = topo.processes_of(src_devices) if topo.processes > 1 else None
    word = topo.word

    if dst is None or isinstance(dst, _Device):
        # RSH301: a Device target needs a fully addressable input, and JAX takes a missing
        # target (device_put(x), device_put(x, may_alias=True)) down the same path.
        if src_procs is not None and len(src_procs) > 1:
            jax_error = ('"ValueError: When the second argument to device_put is a Device, the '
                         'first argument must be a fully addressable array"')
            if dst is None:
                return Finding(
                    "RSH301", src_ids, (),
                    f"moves {{what}} from devices {fmt_ids(src_ids)}, spanning {word}es "
                    f"{fmt_procs(src_procs)}, with no target, which JAX handles as a put to one "
                    f"device: multi-controller JAX raises {jax_error}; to copy x keep its "
                    f"sharding: jax.device_put(x, x.sharding)")
            return Finding(
                "RSH301", src_ids, (int(dst.id),),
                f"moves {{what}} from devices {fmt_ids(src_ids)}, spanning {word}es "
                f"{fmt_procs(src_procs)}, to the single device {dst.id}: multi-controller JAX "
                f"raises {jax_error}; gather it first with multihost_utils.process_allgather(x), "
                f"or take this process's shard with x.addressable_data(i)")
        owner = topo.process_of.get(dst) if dst is not None and src_procs is not None else None
        if owner is not None and dst is not None and src_procs is not None \
                and len(src_procs) == 1 and owner not in src_procs:  # (owner: dst and src_procs are known)
            # A device of another process: a transfer between hosts, which device_put cannot do
            # (RUNTIME-FACTS: the process that does not own the device fails).
            (p,) = src_procs
            return Finding(
                "RSH306", src_ids, (int(dst.id),),
                f"moves {{what}} from devices {fmt_ids(src_ids)}, all on {word} {p}, to device "
                f"{dst.id}, owned by {word} {owner}: multi-controller JAX cannot copy between "
                f"hosts (TPU: \"Cannot copy array to non-addressable device\", CPU: \"Cross-host "
                f"transfers are not supported by this backend\"); take the device from this "
                f"process's list: jax.local_devices(backend=...)[k]")
        return None

    dst_devices = ordered_devices(dst)
    dst_ids = ids(dst_devices)
    dst_procs = topo.processes_of(dst_devices) if topo.processes > 1 else None

    # This process (the one the simulated pod plays) is the one whose local devices the
    # program asked for; under real multi-controller JAX every device set is what it is.
    local = frozenset({topo.me}) if topo.simulated else None
    if src_procs is not None and dst_procs is not None and (
            not topo.simulated or asked):
        if len(src_procs) > 1 and len(dst_procs) == 1 and (local is None or dst_procs == local):
            (p,) = dst_procs
            return Finding(
                "RSH303", src_ids, dst_ids,
                f"moves {{what}} from devices {fmt_ids(src_ids)}, spanning {word}es "
                f"{fmt_procs(src_procs)}, to {fmt_ids(dst_ids)}, all on {word} {p} (a "
                f"process-local mesh): multi-controller JAX raises \"NotImplementedError: "
                f"Cannot reshard an input that is not fully addressable\" (or {_SEED}); to get "
                f"each process's part use multihost_utils.global_array_to_host_local_array(x, "
                f"mesh, spec), or keep the target on x's mesh: NamedSharding(x.sharding.mesh, spec)")
        if len(src_procs) == 1 and len(dst_procs) > 1 and (local is None or src_procs == local):
            (p,) = src_procs
            return Finding(
                "RSH302", src_ids, dst_ids,
                f"moves {{what}} from devices {fmt_ids(src_ids)}, all on {word} {p}, to "
                f"{fmt_ids(dst_ids)}, spanning {word}es {fmt_procs(dst_procs)}: multi-controller "
                f"JAX raises \"ValueError: device_put's second argument must be a Device or a "
                f"Sharding which represents addressable devices\" (or {_SEED}); build the global "
                f"array from process-local data with multihost_utils.host_local_array_to_global_"
                f"array(x, mesh, spec) or jax.make_array_from_process_local_data(s, x)")

    if local is not None and asked and src_procs == local and dst_procs == local:
        # Both sides on the devices this process asked for: a process-local move, which
        # works on every process of a pod (each moves its own data).
        return None

    if set(src_ids) != set(dst_ids):
        # Every process runs this call, and some process holds only part of x or of the
        # target (with 2+ processes one always does), so JAX fails there even when both
        # device groups sit on one process (observed under 2-process JAX: the process that
        # holds neither raises the SEED error).
        return Finding(
            "RSH201", src_ids, dst_ids,
            f"moves {{what}} from devices {fmt_ids(src_ids)} to {fmt_ids(dst_ids)}, a "
            f"different device set: multi-controller JAX raises {_SEED} (or \"Cannot reshard "
            f"an input that is not fully addressable\", or \"The backend ... does not support "
            f"cross-host device transfers\"); {_MESH_FIX}; moving between device groups needs "
            f"a host transfer or jax.make_array_from_process_local_data")

    if src_ids != dst_ids:
        try:
            cost = order_moves(src, dst, ndim)
        except Exception:
            # Not two NamedShardings: order only matters when shards differ per device (a
            # replicated side means every device holds or gets the whole array whatever
            # the order; an equivalent pair puts the same shard on the same device).
            try:
                if src.is_fully_replicated or dst.is_fully_replicated or src.is_equivalent_to(dst, ndim):
                    return None
            except Exception:
                pass
            cost = (len(dst_ids), len(dst_ids))
        if cost is None:
            return None
        moved, total = cost
        effect = ("so every shard is permuted (about a full copy, over the network across hosts)"
                  if moved == total else
                  f"so {moved} of the {total} devices receive a shard (over the network across hosts) "
                  "that the same spec on x's mesh leaves in place")
        return Finding(
            "RSH202", src_ids, dst_ids,
            f"moves {{what}} from devices {fmt_ids(src_ids)} to {fmt_ids(dst_ids)}: the same "
            f"devices in another order, {effect}; {_MESH_FIX}")
    return None


def memoized(fn: Callable[..., Finding | None]) -> Callable[..., Finding | None]:
    """A warm call must cost next to nothing: shardings are hashable and few, so the
    verdict for a (source, target) pair is computed once; an unhashable custom sharding
    is judged every time.

    Two levels: the very same two objects again (a loop putting onto one sharding) are
    found by identity, without hashing shardings (JAX's NamedSharding hashes in Python);
    equal objects made anew (``NamedSharding(mesh, spec)`` written in the loop) by equality.
    The identity entry holds the two objects, so their ids cannot be reused meanwhile."""
    cached = lru_cache(maxsize=4096)(fn)
    same: dict[tuple[Any, ...], tuple[Any, Any, Finding | None]] = {}
    _caches.append((cached.cache_clear, same.clear))

    def verdict(source: Any, target: Any, *rest: Any) -> Finding | None:
        key = (id(source), id(target), *rest)
        hit = same.get(key)
        if hit is not None and hit[0] is source and hit[1] is target:
            return hit[2]
        try:
            found = cached(source, target, *rest)
        except TypeError:
            return fn(source, target, *rest)
        if len(same) >= 4096:
            same.clear()
        same[key] = (source, target, found)
        return found

    return verdict


_caches: list[tuple[Callable[[], None], Callable[[], None]]] = []


def forget_verdicts() -> None:
    """What a mesh was known to be changed (_across): verdicts made before are dropped."""
    for clear_cache, clear_same in _caches:
        clear_cache()
        clear_same()
    quiet.clear()


# Set by _across when strict mode installs: the same step judged on the target platforms.
across: Callable[[Any, Any, int, tuple[str, ...]], Finding | None] | None = None


def _classify_everywhere(src: Sharding, dst: Any, ndim: int, requested: Split, asked: bool,
                         targets: tuple[str, ...]) -> Finding | None:
    found = _classify_uncached(src, dst, ndim, requested, asked)
    if found is None and targets and across is not None:
        found = across(src, dst, ndim, targets)
    return found


classify = memoized(_classify_everywhere)


# --------------------------------------------------------------------------- targets

_NO_TARGET = object()


# Warm device_put calls of one array that need no check (``check_device_put`` said so, and
# the target is no single device of another simulated process): key (id of the array's
# sharding, id of the target, rank, committed, split, local_asked) -> (sharding, target).
# The entry holds the two objects, so their ids cannot be reused while it stands.
quiet: dict[tuple[Any, ...], tuple[Any, Any]] = {}


# Types of targets checked as they are (JAX's shardings and its Device), learned as met.
TARGET_TYPES: set[type] = set()


def resolve_target(target: Any, call: str) -> Any:
    """A Device or Sharding to check against, None for no target, _NO_TARGET to skip."""
    if target is None:
        return target
    if isinstance(target, (_Device, Sharding)):
        TARGET_TYPES.add(type(target))
        return target
    if isinstance(target, PartitionSpec):
        try:
            from jax._src.api import pspec_to_sharding

            return pspec_to_sharding(call, target)
        except Exception:  # no mesh set: JAX raises its own error for this call
            return _NO_TARGET
    sharding = getattr(target, "sharding", None)  # jax.experimental.layout.Format
    if isinstance(sharding, (_Device, Sharding)):
        return sharding
    return _NO_TARGET  # a MemorySpace, anything JAX will judge itself


def is_leaf_target(target: Any) -> bool:
    return target is None or isinstance(target, (_Device, Sharding, PartitionSpec)) \
        or hasattr(target, "sharding") or type(target).__name__ == "MemorySpace"


def checkable(leaf: Any) -> bool:
    # Only committed concrete arrays: numpy data, Python scalars and uncommitted arrays
    # (jnp.arange with no device) are placed freely by JAX on every host count.
    return isinstance(leaf, ArrayImpl) and leaf._committed


def _emit(config: StrictConfig, found: Finding, call: str, what: str, stacklevel: int) -> None:
    __tracebackhide__ = True  # pytest shows the user's call, not these frames
    message = found.message(call, what)
    if found.code == "RSH202":
        if config.reorder == "ignore":
            return
        if config.reorder == "warn":
            warnings.warn(ReshardWarning(message, code=found.code, call=call, source=found.source,
                                         target=found.target), stacklevel=stacklevel + 1)
            return
    raise ReshardError(message, code=found.code, call=call, source=found.source, target=found.target)


def check_device_put(config: StrictConfig, x: Any, device: Any, call: str, stacklevel: int) -> bool:
    """Check ``jax.device_put(x, device)`` (or ``x.to_device(device)``) before JAX runs it.
    True when ``x`` is one array and the call, under these settings, has nothing to report
    whatever the trace state: the same call again needs no check (``quiet``).

    ``stacklevel`` counts frames from this function's caller to the user's call, as
    ``warnings.warn`` does.
    """
    __tracebackhide__ = True  # pytest shows the user's call, not these frames
    if type(x) is ArrayImpl:  # the common case, kept free of pytree work
        if not x._committed:
            return True
        sharding = x.sharding
        if device is sharding:  # device_put(x, x.sharding): JAX's cheapest call stays cheap
            return True
        if type(device) in TARGET_TYPES:  # (isinstance against JAX's types costs more)
            target = device
        else:
            target = resolve_target(device, call)
            if target is _NO_TARGET:
                return True
        found = classify(sharding, target, len(x.aval.shape), config.split, local_asked,
                         config.platforms)
        # Tracing is ruled out last: it costs more than the cached verdict and rarely matters.
        if found is not None and trace_state_clean():
            _emit(config, found, call, "an array", stacklevel + 1)
        return found is None

    if isinstance(x, _PLAIN_DATA):  # host data: JAX places it freely on every host count
        return False
    # The cheap C++ flatten first; paths (for the message) only when something can fire.
    if not any(checkable(leaf) for leaf in jax.tree_util.tree_leaves(x)) or not trace_state_clean():
        return False
    leaves, treedef = jax.tree_util.tree_flatten_with_path(x)
    if is_leaf_target(device):
        targets: list[Any] = [device] * len(leaves)
    else:
        try:
            from jax._src.api_util import flatten_axes

            targets = list(flatten_axes(f"{call} device", treedef, device))
        except Exception:  # a device tree that is not a prefix of x: JAX says so itself
            return False
    findings: list[tuple[Finding, str]] = []
    for (path, leaf), raw_target in zip(leaves, targets):
        if not checkable(leaf):
            continue
        target = resolve_target(raw_target, call)
        if target is _NO_TARGET:
            continue
        found = classify(leaf.sharding, target, leaf.ndim, config.split, local_asked, config.platforms)
        if found is not None:
            what = f"leaf {jax.tree_util.keystr(path) or '(root)'}"
            findings.append((found, what))
    if not findings:
        return False
    errors = [f for f in findings if f[0].code != "RSH202" or config.reorder == "raise"]
    if errors:
        found, what = min(errors, key=lambda f: _RANK[f[0].code])
        _emit(config, found, call, what, stacklevel + 1)
    for found, what in findings:
        _emit(config, found, call, what, stacklevel + 1)
    return False
