"""RSH305 / RSH306 at run time: reading an array's value that this process cannot hold.

Every read of a ``jax.Array``'s value (``np.asarray``, ``np.array``, ``jax.device_get``,
``.tolist()``, ``.item()``, ``float()``, ``int()``) goes through ``ArrayImpl._value``,
where multi-controller JAX raises "Fetching value for jax.Array that spans non-addressable
(non process local) devices is not possible" unless this process's devices hold every
piece (``_process_has_full_value_in_mcjax``: a replicated array is fine). Strict mode
checks there, as the simulated pod's process 0.

JAX's own reads are left alone (``process_allgather`` reads the gathered array, printing
shows a summary on a pod): only a read whose first caller outside JAX's fetch path is the
user's code is checked.

numpy reads an array on *one CPU device* without ``_value``: jaxlib serves numpy's buffer
protocol in C++ (a TPU or GPU array has no such buffer and goes through ``__array__``).
``_numpy_reads`` replaces numpy's conversion functions once such an array on another
process's device exists; they check a ``jax.Array`` argument with ``check_read``.
"""

from __future__ import annotations

import os
import sys
from functools import lru_cache
from types import FrameType
from typing import Any

from . import _sites, _state, _where
from ._kinds import GLOBAL, kind_of, kinds
from ._checks import Topology, ids, topology, trace_state_clean
from ._format import fmt_ids, fmt_procs, fmt_spec
from ._pod import pod
from .errors import ReshardError

_FETCH_ERROR = ('"RuntimeError: Fetching value for jax.Array that spans non-addressable (non '
                'process local) devices is not possible"')

# JAX's frames between a user's read and _value: the array's own conversions, and
# jax.device_get's tree walk. A read that reaches _value through any other JAX code
# (multihost_utils.process_allgather, printing) is JAX's business.
_FETCH_PATH = {
    "array.py": {"__array__", "tolist", "item", "__float__", "__int__", "__complex__", "__index__",
                 "__bool__", "tobytes", "_value"},
    "api.py": {"device_get", "_device_get"},
    "tree_util.py": {"tree_map", "<lambda>", "<listcomp>", "<genexpr>"},
    "tree.py": {"map"},
}
_SHOWN = {"__repr__", "__str__", "__format__"}
_OWN = __name__.rpartition(".")[0] + "."  # reshard_lint.runtime.
_SPELLING = {"__array__": "np.asarray", "tolist": ".tolist()", "item": ".item()",
             "__float__": "float()", "__int__": "int()", "__complex__": "complex()",
             "__index__": "operator.index()", "__bool__": "bool()", "tobytes": ".tobytes()"}


def _index_key(index: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple((s.start, s.stop, s.step) if isinstance(s, slice) else s for s in index)


@lru_cache(maxsize=4096)
def _unreadable(sharding: Any, shape: tuple[int, ...], topo: Topology) -> frozenset[int] | None:
    """The processes that hold pieces of the array when this process does not hold all of
    them (JAX's _process_has_full_value_in_mcjax, on the simulated split); else None."""
    indices = sharding.devices_indices_map(shape)
    me = topo.me
    everything = {_index_key(v) for v in indices.values()}
    mine = {_index_key(v) for d, v in indices.items() if topo.process_of.get(d) == me}
    if mine == everything:
        return None
    return frozenset(topo.process_of.get(d, -1) for d in indices)


def _who_reads(frame: FrameType | None, spelled: str | None = None) -> str | None:
    """How the user spelled the read, or None when JAX's own code is reading (``spelled``:
    the read's name when the caller of ``frame`` is known, numpy's function)."""
    while frame is not None:
        module = frame.f_globals.get("__name__", "")
        if module.startswith(_OWN):  # strict mode's numpy wrapper, between numpy and its caller
            frame = frame.f_back
            continue
        if not (module == "jax" or module.startswith(("jax.", "jaxlib."))):
            return spelled or "reading its value"
        name = frame.f_code.co_name
        if name in _SHOWN:
            return None  # printing: a pod prints a summary instead of the values
        if name not in _FETCH_PATH.get(os.path.basename(frame.f_code.co_filename), ()):
            return None
        if name in ("device_get", "_device_get"):
            spelled = "jax.device_get"
        elif spelled is None and name in _SPELLING:
            spelled = _SPELLING[name]
        frame = frame.f_back
    return None


# (sharding, shape, split) -> True for a value this process can read: a warm read costs one
# dict lookup (every np.asarray of a fresh array passes here).
_readable: dict[Any, bool] = {}


def check_fetch(array: Any, frame: FrameType | None, spelled: str | None = None) -> None:
    """Raise RSH305 / RSH306 when the simulated process cannot read ``array``'s value and the
    read, made from ``frame``, is the user's (``spelled``: how, when the caller knows)."""
    __tracebackhide__ = True  # pytest shows the user's call, not these frames
    if not getattr(array, "committed", True):
        # An uncommitted array sits on JAX's default device, here the first of all; on the
        # pod, on the simulated process's own first device: always readable there.
        return
    if kinds and id(array) in kinds:
        _judge_everyone(array, frame, spelled)
    sharding = array.sharding
    config = _state.current
    key: tuple[Any, ...] | None = (sharding, array.shape, config.split if config is not None else None)
    try:
        if _readable.get(key):
            return
    except TypeError:  # an unhashable custom sharding: judged every time
        key = None
    holders = _holders(sharding, array.shape, key)
    if holders is None:
        return
    if not trace_state_clean():
        return
    spelled = _who_reads(frame, spelled)
    if spelled is None:
        return
    devices = ids(sorted(sharding.device_set, key=lambda d: d.id))
    topo = pod(next(iter(sharding.device_set)).platform)
    assert topo is not None  # (it told the holders)
    me = topo.me
    if me not in holders:
        # Nothing of it is here: it was put on another process's device (RSH306's case).
        message = (
            f"RSH306 {spelled} reads an array on devices {fmt_ids(devices)}, owned by simulated "
            f"process{'es' if len(holders) > 1 else ''} {fmt_procs(holders)}, from simulated "
            f"process {me}: on a pod this process cannot read it (a device_put onto a device "
            f"taken from the global jax.devices() list leaves an array other processes cannot "
            f"address; TPU: \"Cannot copy array to non-addressable device\", CPU: \"Cross-host "
            f"transfers are not supported by this backend\", and reading it raises "
            f"{_FETCH_ERROR}); put it on jax.local_devices(backend=...)[k] instead")
        raise ReshardError(message, code="RSH306", call=spelled, source=devices)
    spec = getattr(sharding, "spec", None)
    how = f"sharded {fmt_spec(spec)}" if spec is not None else "sharded"
    message = (
        f"RSH305 {spelled} fetches an array {how} on devices {fmt_ids(devices)}, whose pieces "
        f"are split across simulated processes {fmt_procs(holders)}: multi-controller JAX raises "
        f"{_FETCH_ERROR} on every process; gather it with multihost_utils.process_allgather(x, "
        f"tiled=True) (a collective: every process must call it), or read this process's pieces "
        f"from x.addressable_shards")
    raise ReshardError(message, code="RSH305", call=spelled, source=devices)


def wrap_value(prop: property) -> property:
    fget = prop.fget
    assert fget is not None

    def _value(self: Any) -> Any:
        __tracebackhide__ = True
        config = _state.current
        # Also when JAX holds the value on the host already: JAX's own read (a CPU reshard
        # within one mesh goes through the host) is no user's, and checked nothing.
        if config is not None and not _where.running.jax_put:
            try:  # the warm path inline: no call frame for a value already judged readable
                hit = _readable.get((self.sharding, self.shape, config.split))
            except TypeError:
                hit = None
            if not hit or (kinds and id(self) in kinds):
                check_fetch(self, sys._getframe(1))
        return fget(self)

    return property(_value, doc=prop.__doc__)


def _holders(sharding: Any, shape: Any, key: tuple[Any, ...] | None) -> frozenset[int] | None:
    """The simulated processes holding pieces of a value of this sharding and shape when this
    process cannot read it, else None (then remembered as readable under ``key``; None: not
    hashable)."""
    topo = pod(next(iter(sharding.device_set)).platform)
    if topo is None:
        if key is not None:
            _readable[key] = True  # nothing simulated for this split: every value is readable
        return None
    try:
        holders = _unreadable(sharding, tuple(shape), topo)
    except Exception:  # a sharding that cannot say where its pieces are: JAX decides
        return None
    if holders is None and key is not None:
        if len(_readable) > 4096:
            _readable.clear()
        _readable[key] = True
    return holders


def check_read(array: Any, frame: FrameType | None, spelled: str) -> None:
    """``check_fetch`` for a read outside ``_value`` (numpy's), with _value's warm path."""
    __tracebackhide__ = True
    config = _state.current
    if config is None:
        return
    try:
        hit = _readable.get((array.sharding, array.shape, config.split))
    except TypeError:
        hit = None
    if not hit or (kinds and id(array) in kinds):
        check_fetch(array, frame, spelled)


def _judge_everyone(array: Any, frame: FrameType | None, spelled: str | None) -> None:
    """A read of an array put on a global pick: the processes that do not own it fail."""
    __tracebackhide__ = True
    known = kind_of(array)
    config = _state.current
    if known is None or known[0] != GLOBAL or config is None:
        return
    device = known[1]
    try:
        devices = set(array.sharding.device_set)
    except Exception:
        return
    if devices != {device}:
        return
    topo = topology(config.split, device.platform)
    owner = topo.process_of.get(device)
    if not topo.simulated or owner is None or owner != topo.me:
        return  # the played process's own read is the fetch check's
    if not trace_state_clean():
        return
    spelled = _who_reads(frame, spelled)
    user = next(_sites.user_frames(frame), None)
    if spelled is None or user is None or not _sites.runs_on_every_process(user):
        return
    other = next(q for q in range(topo.processes) if q != owner)
    message = (
        f"RSH306 {spelled} reads an array on device {device.id}, which fails on process {other} of "
        f"{topo.processes}: {known[2]} belongs to process {owner}, so every process put its data "
        f"there and process {other} holds none of it: multi-controller JAX raises \"RuntimeError: "
        f"Fetching value for jax.Array that spans non-addressable (non process local) devices is "
        f"not possible\"; put it on jax.local_devices(backend=...)[k] instead, or read it only "
        f"under `if jax.process_index() == {owner}:`")
    raise ReshardError(message, code="RSH306", call=spelled, source=(int(device.id),))
