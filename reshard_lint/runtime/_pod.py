"""The simulated pod: the user's code sees process 0 of N while JAX runs every device here.

On one host ``jax.local_devices()`` is every device and ``jax.process_index()`` is 0 of 1,
so a "process-local" mesh is the global one and every array is fully addressable: the
code that breaks on a pod runs. While strict mode simulates N processes, the answers the
*user's* code gets are the pod's: ``jax.process_index()`` 0, ``jax.process_count()`` N,
``jax.local_devices()`` / ``local_device_count()`` process 0's block of ``jax.devices()``,
each ``Device.process_index`` its block, and an array's ``is_fully_addressable``,
``addressable_shards`` and ``addressable_data(i)`` only what process 0 holds.

JAX's own code keeps the real answers (one process, every device addressable): it runs the
computation, and it would refuse to build arrays it believes it cannot address. So the
patched attributes look at their caller: a caller in ``jax``/``jaxlib`` (or strict mode)
gets JAX's answer. The module-level functions are patched on the ``jax`` namespace only,
where users call them; JAX's internals call ``xla_bridge``'s.
"""

from __future__ import annotations

import functools
import sys
import warnings
from typing import Any, Callable

import jax
from jax._src import xla_bridge as _xb

from . import _checks, _kinds, _state, _where
from ._checks import Topology, topology
from ._seeds import ProcessIndex
from ._where import from_library, library_globals


def _user_pod(backend: Any) -> Topology | None:
    """``pod(backend)`` for a call from the user's code; None for JAX's own calls through the
    ``jax`` namespace (multihost_utils asks jax.process_count() and must get the truth)."""
    if _state.current is None or from_library(sys._getframe(2)):
        return None
    return pod(backend)


_real_count: int | None = None  # the real process count: fixed once the backend exists
_default_platform: str | None = None


def pod(backend: Any = None) -> Topology | None:
    """The simulated split for ``backend``'s platform, or None when nothing is simulated
    (strict mode off, processes=1, real multi-controller JAX, a backend given as a client)."""
    global _last
    config = _state.current
    last = _last
    if config is last[0] and backend == last[1]:
        return last[2]  # the same settings and backend as the previous question
    if config is None or not (backend is None or isinstance(backend, str)):
        return None
    found = _pod(config, backend)
    _last = (config, backend, found)
    return found


_last: tuple[Any, Any, Topology | None] = (object(), object(), None)


def _pod(config: Any, backend: Any) -> Topology | None:
    global _real_count, _default_platform
    if _real_count is None:
        _real_count = _xb.process_count()
    if _real_count > 1:
        return None  # real multi-controller JAX: the real answers are the pod's
    if backend is None:
        if _default_platform is None:
            _default_platform = _xb.get_backend().platform
        backend = _default_platform
    topo = topology(config.split, backend)
    return topo if topo.simulated and topo.processes > 1 else None


# --------------------------------------------------------------------------- jax.* functions
#
# Programs ask these in loops, and JAX answers from caches: jax.local_devices() and
# jax.process_count() are functools caches (about 0.05 us), jax.process_index() a cached
# backend's method (about 0.15 us). The answer for the user's code depends on the settings
# and on who asks (JAX's own code gets the truth), so each function remembers the last user
# caller's namespace (its module's globals) with the answer it got: a call from the same
# namespace, with no arguments, returns that answer after one frame read. The first call
# after any change of settings (or a new program) takes the full path and remembers again.

_MISS: tuple[Any, Any] = (None, None)  # no frame's f_globals is None
# (caller's globals, answer) for jax.process_index(), process_count(), local_device_count()
_hits: dict[str, tuple[Any, Any]] = {"index": _MISS, "count": _MISS, "local_count": _MISS}
_local_hit: tuple[Any, Any] = _MISS  # jax.local_devices()
_device_hit: tuple[Any, Any] = _MISS  # (caller's globals, device -> process) for Device.process_index


def forget() -> None:
    """Drop the remembered answers: the settings changed, or a new program starts (which
    forgets that it asked for jax.local_devices())."""
    global _local_hit, _device_hit
    _local_hit = _device_hit = _MISS
    for slot in _hits:
        _hits[slot] = _MISS


def _remembered(config: Any) -> bool:
    """After storing an answer computed under ``config``: whether it may stay. Settings that
    changed meanwhile (another thread) forget it, so no stale answer outlives them."""
    if _state.current is config:
        return True
    forget()
    return False


def _answering(original: Callable[..., Any], slot: str, answer: Callable[[Topology, Any], Any]) \
        -> Callable[..., Any]:
    """``original`` (``jax.process_index`` and the like, which take only ``backend``) as the
    simulated pod answers it: ``answer(topology, backend)``, remembered under ``slot`` for
    the last namespace that asked with no backend."""
    getframe = sys._getframe

    @functools.wraps(original)
    def answered(backend: Any = None) -> Any:
        if backend is None:
            hit = _hits[slot]
            if getframe(1).f_globals is hit[0]:
                return hit[1]
        config = _state.current
        topo = _user_pod(backend)
        if topo is None:
            return original(backend)
        value = answer(topo, backend)
        if backend is None:
            _hits[slot] = (getframe(1).f_globals, value)
            _remembered(config)
        return value

    return answered


def wrap_process_index(original: Callable[..., int]) -> Callable[..., int]:
    # An int that remembers it is this process's index: a generator seeded with it differs
    # between processes (RSH101, _seeds.py).
    return _answering(original, "index", lambda topo, backend: ProcessIndex(topo.me, topo.processes))


def wrap_process_count(original: Callable[..., int]) -> Callable[..., int]:
    return _answering(original, "count", lambda topo, backend: topo.processes)


_locals: dict[tuple[Topology, Any, int], tuple[Any, ...]] = {}
_local_lists: dict[tuple[Topology, Any, int, str | None], list[Any]] = {}


def _local(topo: Topology, backend: Any, process: int) -> tuple[Any, ...]:
    key = (topo, backend, process)
    found = _locals.get(key)
    if found is None:
        found = _locals[key] = tuple(d for d in _xb.devices(backend) if topo.process_of.get(d) == process)
    return found


def _local_list(topo: Topology, backend: Any, process: int, platform: str | None) -> list[Any]:
    """``jax.local_devices()`` as the pod answers it: one list per process, returned again on
    every call, as JAX's own (a functools cache) returns one list."""
    key = (topo, backend, process, platform)
    found = _local_lists.get(key)
    if found is None:
        found = list(_local(topo, backend, process))
        if platform is not None:
            from ._platform_patch import user_list  # ids are the platform's: id lookups checked

            found = user_list(found)
        found = _local_lists.setdefault(key, found)
    return found


def wrap_local_devices(original: Callable[..., list[Any]]) -> Callable[..., list[Any]]:
    getframe = sys._getframe

    @functools.wraps(original)
    def local_devices(process_index: int | None = None, backend: Any = None,
                      host_id: int | None = None) -> list[Any]:
        global _local_hit
        if process_index is None and backend is None and host_id is None:
            hit = _local_hit
            if getframe(1).f_globals is hit[0]:
                return hit[1]
        config = _state.current
        if config is None:
            return original(process_index, backend, host_id)
        frame = getframe(1)
        topo = None if from_library(frame) else pod(backend)
        if topo is None:
            return original(process_index, backend, host_id)
        if host_id is not None:
            warnings.warn(  # JAX's own words (jax/_src/xla_bridge.py)
                "The argument to jax.local_devices has been renamed from `host_id` to "
                "`process_index`. This alias will eventually be removed; please update "
                "your code.", stacklevel=2)
            process_index = host_id
        process = topo.me if process_index is None else process_index
        if not 0 <= process < topo.processes:
            raise ValueError(f"Unknown process_index {process}")  # as JAX on the pod
        _checks.local_asked = True  # see there: meshes on these devices are process-local
        found = _local_list(topo, backend, process, config.platform)
        if process_index is None and backend is None:
            _local_hit = (frame.f_globals, found)
            _remembered(config)
        return found

    return local_devices


def wrap_local_device_count(original: Callable[..., int]) -> Callable[..., int]:
    def count(topo: Topology, backend: Any) -> int:
        _checks.local_asked = True
        return len(_local(topo, backend, topo.me))

    return _answering(original, "local_count", count)


# --------------------------------------------------------------------------- attributes

def wrap_device_process_index(prop: property) -> property:
    fget = prop.fget
    assert fget is not None
    getframe = sys._getframe

    def process_index(self: Any) -> int:
        global _device_hit
        hit = _device_hit
        frame = getframe(1)
        if frame.f_globals is hit[0]:
            p = hit[1].get(self)
            if p is not None:
                return p
        config = _state.current
        if config is not None and not from_library(frame):
            topo = pod(self.platform)
            if topo is not None:
                p = topo.process_of.get(self)
                if p is not None:
                    _device_hit = (frame.f_globals, topo.process_of)
                    _remembered(config)
                    return p
        return fget(self)

    return property(process_index, doc=prop.__doc__)


def _local_shards(array: Any, shards: list[Any]) -> list[Any] | None:
    topo = pod(shards[0].device.platform) if shards else None
    if topo is None:
        return None
    return [s for s in shards if topo.process_of.get(s.device) == topo.me]


def wrap_addressable_shards(prop: property) -> property:
    fget = prop.fget
    assert fget is not None

    def addressable_shards(self: Any) -> Any:
        shards = fget(self)
        if _state.current is not None and not _where.running.jax_put and not from_library(sys._getframe(1)):
            local = _local_shards(self, shards)
            if local is not None:
                return local
        return shards

    return property(addressable_shards, doc=prop.__doc__)


def wrap_is_fully_addressable(prop: property) -> property:
    fget = prop.fget
    assert fget is not None

    def is_fully_addressable(self: Any) -> bool:
        # JAX's own device_put asks on every call: its answer is JAX's property body,
        # inline (without its call of the sharding property), after one set lookup.
        if id(sys._getframe(1).f_globals) in library_globals or _state.current is None \
                or from_library(sys._getframe(1)):
            return self._sharding.is_fully_addressable
        devices = self.sharding.device_set
        topo = pod(next(iter(devices)).platform)
        if topo is not None:
            return all(topo.process_of.get(d) == topo.me for d in devices)
        return fget(self)

    return property(is_fully_addressable, doc=prop.__doc__)


def wrap_addressable_data(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def addressable_data(self: Any, index: int) -> Any:
        if _state.current is not None and not from_library(sys._getframe(1)) \
                and not self.is_fully_replicated:
            # The pod's list: this process's shards in the array's device order.
            local = _local_shards(self, self.addressable_shards)
            if local is not None:
                data = local[index].data
                _kinds.remember_local(data)  # on process k, k's own piece
                return data
        data = original(self, index)
        if _state.current is not None and not from_library(sys._getframe(1)):
            _kinds.remember_local(data)
        return data

    return addressable_data


def wrap_distributed_initialize(original: Callable[..., Any]) -> Callable[..., Any]:
    """``jax.distributed.initialize()`` under the simulated pod: there is no coordinator to
    join, and every device already runs here, so the call does nothing (strict mode plays
    process 0 of an initialised job). Nothing asks the backend first: JAX wants initialize
    before anything starts it."""
    @functools.wraps(original)
    def initialize(*args: Any, **kwargs: Any) -> Any:
        config = _state.current
        if config is not None and config.processes != 1 and not from_library(sys._getframe(1)):
            return None
        return original(*args, **kwargs)

    return initialize
