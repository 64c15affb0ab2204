"""numpy's conversion functions, checked once an array on another process's device exists.

numpy reads an array on *one CPU device* without ``ArrayImpl._value``: jaxlib serves numpy's
buffer protocol in C++ (an array on several devices has no single buffer, and a TPU or GPU
array none at all: numpy falls back to ``__array__``, which ``_fetch`` checks). So the
read of such an array that another simulated process owns (RSH306: host data put on
``jax.devices()[k]``) runs no Python of JAX's. Strict mode then replaces numpy's conversion
functions (``NUMPY_READS``) on the ``numpy`` module: a ``jax.Array`` argument gets
``_value``'s check first (``_fetch.check_read``), anything else passes after one type check.

Any wrapper written in Python costs more than ``np.asarray`` of numpy data itself (13 ns),
so the wrappers are installed only once they can matter: when a call strict mode checks
(``jax.device_put``, ``Array.to_device``, the ``make_array_*`` functions,
``host_local_array_to_global_array``, a jitted call's cache miss) targets a single device
that another simulated process owns (``note``; its callers in ``_patch`` test ``watching``
inline first). Until then numpy's functions are numpy's. They stay for the rest of the
activation (another setting that simulates several processes included), are removed while
the settings simulate one process, and go when strict mode switches off. An array that gets
onto such a device by a path strict mode does not see stays unchecked for numpy reads: a
miss, never a false error.
"""

from __future__ import annotations

import functools
import inspect
import sys
from typing import Any, Callable

import jax
import numpy as np
from jax._src.array import ArrayImpl
from jax.sharding import Sharding

from . import _state
from ._checks import is_leaf_target, resolve_target
from ._fetch import check_read
from ._pod import pod

# numpy's module functions that read an array's memory: the first argument is the array read.
NUMPY_READS = ("asarray", "array", "asanyarray", "ascontiguousarray", "asfortranarray", "frombuffer")
_NO_ARGUMENT = object()

# True while numpy's functions are numpy's own: the checked calls then look at their targets.
watching = True
# Since strict mode switched on, a checked call targeted one device of another simulated
# process: the wrappers belong while the settings simulate several processes.
_armed = False
# (name, numpy's function, strict mode's wrapper) while installed.
_installed: list[tuple[str, Any, Any]] = []
# (target, split) -> whether the target is one device of another simulated process; only
# for Device and Sharding targets (a PartitionSpec's mesh is the context's).
_judged: dict[Any, bool] = {}


def note(config: _state.StrictConfig, target: Any) -> bool:
    """A call strict mode checks, under ``config``, is about to make an array on ``target``
    (a Device, a Sharding, a PartitionSpec, a pytree of them): install the wrappers when
    that is one device another simulated process owns (and say so). Never raises."""
    key: tuple[Any, Any] | None = (target, config.split)
    try:
        foreign = _judged.get(key)
    except TypeError:  # a list or dict of targets, an unhashable sharding: judged every time
        key, foreign = None, None
    if foreign is None:
        try:
            foreign = _foreign(target)
        except Exception:  # a target this cannot read: no wrappers (a miss at worst)
            foreign = False
        if key is not None and isinstance(target, (jax.Device, Sharding)):
            if len(_judged) >= 4096:
                _judged.clear()
            _judged[key] = foreign
    if foreign:
        _arm(config)
    return bool(foreign)


def note_jit(config: _state.StrictConfig, params: dict[str, Any]) -> None:
    """``note`` for a jitted call's cache miss: its outputs land on its in or out shardings."""
    for shardings in (params.get("in_shardings", ()), params.get("out_shardings", ())):
        for sharding in shardings:
            if watching and isinstance(sharding, Sharding):
                note(config, sharding)


def _foreign(target: Any) -> bool:
    leaves = [target] if is_leaf_target(target) else jax.tree_util.tree_leaves(target, is_leaf=is_leaf_target)
    for leaf in leaves:
        resolved = resolve_target(leaf, "device_put")
        if isinstance(resolved, jax.Device):
            devices = [resolved]
        elif isinstance(resolved, Sharding):
            devices = list(resolved.device_set)
        else:
            continue
        if len(devices) != 1:  # several buffers: numpy reads through __array__ (_fetch)
            continue
        (device,) = devices
        topo = pod(device.platform)
        if topo is None:
            continue
        owner = topo.process_of.get(device)
        if owner is not None and owner != topo.me:
            return True
    return False


def arm(config: _state.StrictConfig) -> None:
    """Install the wrappers now (an array on one device exists that another simulated
    process cannot read: ``_everyone``)."""
    if watching:
        _arm(config)


def _arm(config: _state.StrictConfig) -> None:
    global _armed
    with _state.settings_lock():
        if _state.current is not config:  # the settings changed meanwhile (another thread)
            return
        _armed = True
        _install()


def may_split(config: _state.StrictConfig) -> bool:
    """Whether ``config`` may simulate more than one process: not ``processes=1`` nor a
    one-host platform (``processes=None`` decides on the devices, when JAX has started)."""
    if config.platform is not None:
        from .platforms import platform

        return platform(config.platform).hosts > 1
    return config.processes != 1


def settle(config: _state.StrictConfig | None) -> None:
    """The settings are about to become ``config`` (None: suspended, the wrappers stay and
    pass calls through). Caller holds the settings lock."""
    if config is None:
        return
    if _armed and may_split(config):
        _install()
    else:
        _remove()


def restore() -> None:
    """Strict mode switched off: numpy's own functions back, and the next activation starts
    without wrappers. Caller holds the settings lock."""
    global _armed
    _armed = False
    _remove()


def installed() -> bool:
    return bool(_installed)


def _install() -> None:
    global watching
    if _installed:
        return
    for name in NUMPY_READS:
        original = getattr(np, name)
        wrapper = wrap_numpy_read(original)
        setattr(np, name, wrapper)
        _installed.append((name, original, wrapper))
    watching = False


def _remove() -> None:
    global watching
    while _installed:
        name, original, wrapper = _installed.pop()
        # Someone patched over us meanwhile: theirs stays, and ours under it passes calls
        # through once strict mode is off.
        if getattr(np, name, None) is wrapper:
            setattr(np, name, original)
    watching = True


def wrap_numpy_read(original: Callable[..., Any]) -> Callable[..., Any]:
    """numpy's ``original`` (``np.asarray`` ...), checking a ``jax.Array`` argument first."""
    spelled = f"np.{original.__name__}"
    try:  # np.array(object=x): the first parameter's keyword
        keyword: str | None = next(iter(inspect.signature(original).parameters))
    except (StopIteration, TypeError, ValueError):
        keyword = None
    getframe = sys._getframe

    @functools.wraps(original)
    def read(a: Any = _NO_ARGUMENT, /, *args: Any, **kwargs: Any) -> Any:
        __tracebackhide__ = True
        if type(a) is ArrayImpl:  # numpy data, lists, scalars: this one check
            if _state.current is not None:
                check_read(a, getframe(1), spelled)
        elif a is _NO_ARGUMENT:  # the array given by keyword, or no argument (numpy's error)
            given = kwargs.get(keyword) if keyword is not None else None
            if type(given) is ArrayImpl and _state.current is not None:
                check_read(given, getframe(1), spelled)
            return original(*args, **kwargs)
        if args or kwargs:
            return original(a, *args, **kwargs)
        return original(a)

    return read
