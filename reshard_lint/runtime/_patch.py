"""Installs and removes the wrappers around JAX's entry points. Imports jax.

The wrappers are thin: one read of ``_state.current``, and when strict mode is off they call
straight through. That keeps a wrapper that escaped removal (``from jax import device_put``
run while strict mode was on) harmless afterwards.

Jitted calls are checked where JAX's C++ dispatch falls back to Python on a cache miss
(``jax._src.pjit._run_python_pjit``): every jitted function, whenever it was made, is
checked the first time it meets an argument sharding, and warm calls run no Python of
ours. A JAX without that function (another version) gets the older way instead:
``jax.jit`` is wrapped so that the functions it makes while strict mode is on check every
call (``StrictJitted``).

The calls that place arrays also tell ``_numpy_reads`` their targets while it is
``watching``: numpy's conversion functions are replaced only once something is put on one
device of another simulated process.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import random
import sys
import types
from typing import Any, Callable, Iterator

import jax
import numpy as np
import jax.experimental.multihost_utils as _multihost_utils
from jax._src import mesh_utils as _mesh_utils
from jax._src import stages as _stages
from jax.experimental import mesh_utils as _public_mesh_utils
from jax._src.array import ArrayImpl

from . import (_across, _checks, _draws, _everyone, _fetch, _incompat, _jit, _local_data, _numpy_reads,
               _platform_patch, _pod, _seeds, _state, _where)

_HOST_TYPES = frozenset({np.ndarray, int, float, complex, bool})
# Target types that are (and are not) JAX Device classes, learned as met: a Device target's
# line is judged as every process runs it (_everyone).
_DEVICE_TYPES = _everyone.DEVICE_TYPES
_OTHER_TYPES = _everyone.OTHER_TYPES
_quiet = _checks.quiet
_running = _where.running

# (owner, attribute, original, wrapper), in installation order.
_patches: list[tuple[Any, str, Any, Any]] = []


def _check_array_put(config: _state.StrictConfig, x: Any, device: Any, key: tuple[Any, ...]) -> None:
    """The device_put wrapper's check of one array, remembered under ``key`` when the same
    call again needs none."""
    __tracebackhide__ = True
    foreign = device is not None and _numpy_reads.watching and _numpy_reads.note(config, device)
    # Only a Sharding or Device target means the same thing every time: a PartitionSpec's
    # mesh is the context's, None the default device.
    if _checks.check_device_put(config, x, device, "device_put", stacklevel=3) \
            and type(device) in _checks.TARGET_TYPES and _numpy_reads.watching and not foreign:
        if len(_quiet) >= 4096:
            _quiet.clear()
        _quiet[key] = (x._sharding, device)


def _wrap_device_put(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def device_put(x: Any, device: Any = None, **kwargs: Any) -> Any:
        __tracebackhide__ = True  # pytest: show the user's line, not this frame
        config = _state.current
        # Inline, the calls that need no check: host data, device_put(x, x.sharding) (JAX's
        # cheapest call, where a function call of ours would be a visible share), and a call
        # already found quiet (the same array sharding and target again, as in a loop).
        if config is None:
            return original(x, device, **kwargs)
        if type(x) is ArrayImpl and device is x._sharding:
            # JAX hands x back after one read of its is_fully_addressable, which the
            # pod's property answers from its caller's frame: cheaper than marking.
            return original(x, device, **kwargs)
        verdict = None
        if type(device) in _DEVICE_TYPES or (type(device) not in _OTHER_TYPES and _everyone.learn(device)):
            # A device picked from the global list is the same on every process: judge the
            # line as the others run it (and remember what the result is there).
            verdict = _everyone.judge_put(config, x, device, "device_put", sys._getframe(1))
        if type(x) is ArrayImpl:
            source = x._sharding
            key = (id(source), id(device), len(x.aval.shape), x._committed, config.split,
                   _checks.local_asked, config.platforms)
            seen = _quiet.get(key)
            if seen is None or seen[0] is not source or seen[1] is not device:
                _check_array_put(config, x, device, key)
        else:
            if device is not None and _numpy_reads.watching:
                _numpy_reads.note(config, device)
            if type(x) not in _HOST_TYPES:
                _checks.check_device_put(config, x, device, "device_put", stacklevel=2)
        # JAX's own reads of the array's properties below answer truthfully (_where.running).
        running = _running
        outer = running.jax_put
        running.jax_put = True
        try:
            result = original(x, device, **kwargs)
        finally:
            running.jax_put = outer
        if verdict is not None:
            _everyone.after_put(config, result, verdict)
        return result

    return device_put


def _wrap_to_device(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def to_device(self: Any, device: Any, **kwargs: Any) -> Any:
        __tracebackhide__ = True
        config = _state.current
        if config is not None:
            if _numpy_reads.watching:
                _numpy_reads.note(config, device)
            verdict = _everyone.judge_put(config, self, device, "Array.to_device", sys._getframe(1)) \
                if type(device) in _DEVICE_TYPES or _everyone.learn(device) else None
            _checks.check_device_put(config, self, device, "Array.to_device", stacklevel=2)
            if verdict is not None:
                result = original(self, device, **kwargs)
                _everyone.after_put(config, result, verdict)
                return result
        return original(self, device, **kwargs)

    return to_device


def _wrap_process_local(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def make_array_from_process_local_data(sharding: Any, local_data: Any,
                                           global_shape: Any = None) -> Any:
        __tracebackhide__ = True
        config = _state.current
        if config is not None:
            if _numpy_reads.watching:
                _numpy_reads.note(config, sharding)
            _local_data.check_process_local_data(config, sharding, local_data, global_shape)
            built = _simulated_local(sharding, local_data, global_shape,
                                     "make_array_from_process_local_data")
            if built is not None:
                return built
        return original(sharding, local_data, global_shape)

    return make_array_from_process_local_data


def _simulated_local(sharding: Any, local_data: Any, global_shape: Any, call: str) -> Any:
    """The pod's global arrays from this process's data (a pytree, with a prefix tree of
    shardings or PartitionSpecs under jax.set_mesh, and of global shapes), or None to leave
    the call to JAX (nothing simulated, leaves that are not arrays, anything unusual)."""
    __tracebackhide__ = True
    from jax._src.tree_util import broadcast_prefix

    leaves, treedef = jax.tree_util.tree_flatten(local_data)
    if not leaves or not all(isinstance(leaf, (np.ndarray, np.generic, ArrayImpl)) for leaf in leaves):
        return None
    try:
        shardings = [_checks.resolve_target(s, call) for s in broadcast_prefix(sharding, local_data)]
        shapes = broadcast_prefix(global_shape, local_data,
                                  is_leaf=lambda v: v is None or isinstance(v, tuple))
    except Exception:  # not a prefix of the data: JAX says what is wrong
        return None
    if not all(isinstance(s, jax.sharding.Sharding) for s in shardings):
        return None
    topo = _pod.pod(next(iter(shardings[0].device_set)).platform)
    if topo is None:
        return None
    with _state_suspended():
        built = [_local_data.global_from_local(s, leaf, shape, topo, call)
                 for s, leaf, shape in zip(shardings, leaves, shapes)]
    if any(b is None for b in built):
        return None
    return jax.tree_util.tree_unflatten(treedef, built)


@contextlib.contextmanager
def _state_suspended() -> Iterator[None]:
    """``runtime.suspended()``: building the stand-in array is strict mode's own work."""
    token = _state.push(None)
    try:
        yield
    finally:
        _state.pop(token)


def _wrap_host_local(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def host_local_array_to_global_array(local_inputs: Any, global_mesh: Any, pspecs: Any) -> Any:
        __tracebackhide__ = True
        config = _state.current
        if config is not None:
            _local_data.check_host_local_to_global(config, global_mesh)
            if isinstance(global_mesh, jax.sharding.Mesh):
                shardings = jax.tree_util.tree_map(
                    lambda spec: jax.sharding.NamedSharding(global_mesh, spec), pspecs,
                    is_leaf=lambda v: isinstance(v, jax.sharding.PartitionSpec))
                if _numpy_reads.watching:
                    _numpy_reads.note(config, shardings)
                built = _simulated_local(shardings, local_inputs, None, "host_local_array_to_global_array")
                if built is not None:
                    return built
        return original(local_inputs, global_mesh, pspecs)

    return host_local_array_to_global_array


def _wrap_from_callback(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def make_array_from_callback(shape: Any, sharding: Any, data_callback: Any, *args: Any,
                                 **kwargs: Any) -> Any:
        __tracebackhide__ = True
        config = _state.current
        if config is not None and _numpy_reads.watching:
            _numpy_reads.note(config, sharding)
        if config is not None and isinstance(sharding, jax.sharding.Sharding) \
                and not args and not kwargs.get("dtype"):
            topo = _pod.pod(next(iter(sharding.device_set)).platform)
            if topo is not None:
                with _state_suspended():
                    built = _local_data.from_callback(shape, sharding, data_callback, topo)
                if built is not None:
                    return built
        return original(shape, sharding, data_callback, *args, **kwargs)

    return make_array_from_callback


def _wrap_single_device_arrays(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def make_array_from_single_device_arrays(shape: Any, sharding: Any, arrays: Any, **kwargs: Any) -> Any:
        __tracebackhide__ = True
        config = _state.current
        if config is not None and _numpy_reads.watching:
            _numpy_reads.note(config, sharding)
        if config is not None and isinstance(sharding, jax.sharding.Sharding):
            topo = _pod.pod(next(iter(sharding.device_set)).platform)
            if topo is not None:
                with _state_suspended():
                    filled = _local_data.fill_single_device_arrays(shape, sharding, list(arrays), topo)
                if filled is not None:
                    arrays = filled
        return original(shape, sharding, arrays, **kwargs)

    return make_array_from_single_device_arrays


class StrictJitted:
    """``jax.jit(f, in_shardings=...)`` under strict mode: checks each call, then runs JAX's.

    Made only for jitted functions whose ``in_shardings`` hold a concrete ``Sharding``; the
    rest stay JAX's own objects. Everything but the call (``lower``, ``trace``,
    ``eval_shape``, ``clear_cache``, ``_fun`` ...) is the jitted function's. Once strict mode
    is off the call goes straight through.
    """

    def __init__(self, jitted: Any, signature: _jit.JitSignature) -> None:
        functools.update_wrapper(self, jitted)  # __name__, __doc__, __wrapped__ = jitted ...
        self._rsh_jitted = jitted
        self._rsh_signature = signature

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        __tracebackhide__ = True  # pytest: show the user's line, not this frame
        config = _state.current
        if config is not None:
            _jit.check_jit_call(config, self._rsh_signature, args)
        return self._rsh_jitted(*args, **kwargs)

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        # A jitted method: JAX's PjitFunction binds like a function, so does this.
        return self if obj is None else types.MethodType(self, obj)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_rsh_"):  # not set yet (copy, pickle): no recursion
            raise AttributeError(name)
        return getattr(self._rsh_jitted, name)

    def __repr__(self) -> str:
        return repr(self._rsh_jitted)


def _checked_jit(jitted: Any) -> Any:
    """Wrap a jitted function when its in_shardings give strict mode something to check."""
    info = getattr(jitted, "_jit_info", None)
    if info is None or not getattr(info, "user_specified_in_shardings", False):
        return jitted
    leaves = tuple(getattr(info, "in_shardings_leaves", ()))
    if not any(isinstance(leaf, jax.sharding.Sharding) for leaf in leaves):
        return jitted  # None / PartitionSpec entries only: JAX resolves and judges them
    try:
        in_shardings = jax.tree_util.tree_unflatten(info.in_shardings_treedef, leaves)
        static = tuple(int(i) for i in info.static_argnums)
    except Exception:  # a jax whose PjitInfo reads differently: leave the call to JAX
        return jitted
    name = getattr(jitted, "__name__", None) or "fun"
    return StrictJitted(jitted, _jit.JitSignature(name, static, in_shardings))


_NO_FUN = object()


def _wrap_jit(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def jit(fun: Any = _NO_FUN, /, **kwargs: Any) -> Any:
        if fun is _NO_FUN:  # jax.jit(in_shardings=...) as a decorator factory
            make = original(**kwargs)
            return lambda f: _checked_jit(make(f))
        return _checked_jit(original(fun, **kwargs))

    return jit


_MISS_PARAMETERS = ["p", "args_flat", "fun", "args", "kwargs"]


def miss_path_owner() -> Any:
    """The module whose ``_run_python_pjit`` JAX's jit calls on a cache miss, when this JAX
    has it with the parameters the hook reads; else None."""
    try:
        from jax._src import pjit
    except ImportError:  # pragma: no cover - other jax versions
        return None
    original = getattr(pjit, "_run_python_pjit", None)
    try:
        parameters = list(inspect.signature(original).parameters)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return pjit if parameters == _MISS_PARAMETERS else None


def _wrap_miss_path(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def _run_python_pjit(p: Any, args_flat: Any, fun: Any, args: Any, kwargs: Any) -> Any:
        __tracebackhide__ = True  # pytest: show the user's line, not this frame
        config = _state.current
        if config is not None:
            if _numpy_reads.watching:
                _numpy_reads.note_jit(config, p.params)
            _jit.check_jit_miss(config, p.params, args_flat, fun, args)
        out = original(p, args_flat, fun, args, kwargs)
        if config is not None:
            _everyone.after_jit(config, out, sys._getframe(1))
        return out

    return _run_python_pjit


def _targets() -> list[tuple[Any, str, Callable[[Any], Any]]]:  # a wrapper of a function or a property
    owner = miss_path_owner()
    jit_target = (owner, "_run_python_pjit", _wrap_miss_path) if owner is not None \
        else (jax, "jit", _wrap_jit)
    return [
        (jax, "device_put", _wrap_device_put),
        jit_target,
        (ArrayImpl, "to_device", _wrap_to_device),
        (jax, "make_array_from_process_local_data", _wrap_process_local),
        (_multihost_utils, "host_local_array_to_global_array", _wrap_host_local),
        (jax, "make_array_from_single_device_arrays", _wrap_single_device_arrays),
        (jax, "make_array_from_callback", _wrap_from_callback),
        # The simulated pod (_pod.py): what the user's code asks about processes and
        # addressability, answered as on process 0 of N.
        (jax, "process_index", _pod.wrap_process_index),
        (jax, "process_count", _pod.wrap_process_count),
        (jax, "local_devices", _pod.wrap_local_devices),
        (jax, "local_device_count", _pod.wrap_local_device_count),
        (jax.distributed, "initialize", _pod.wrap_distributed_initialize),
        (jax.Device, "process_index", _pod.wrap_device_process_index),
        (ArrayImpl, "is_fully_addressable", _pod.wrap_is_fully_addressable),
        (ArrayImpl, "addressable_shards", _pod.wrap_addressable_shards),
        (ArrayImpl, "addressable_data", _pod.wrap_addressable_data),
        # A simulated platform (_platform_patch.py): its ids, device lists and mesh orders.
        (jax.Device, "id", _platform_patch.wrap_device_id),
        (jax, "devices", _platform_patch.wrap_devices),
        (_mesh_utils, "create_device_mesh", _platform_patch.wrap_create_device_mesh),
        (_public_mesh_utils, "create_device_mesh", _platform_patch.wrap_create_device_mesh),
        # JAX's own "incompatible devices" error, as RSH203 at the user's line.
        (_stages, "_device_assignment_mismatch_error", _incompat.wrap_mismatch_error),
        # Reading a value process 0 cannot hold (RSH305, RSH306).
        (ArrayImpl, "_value", _fetch.wrap_value),
        # Device orders that differ between processes, and a mesh built from one (RSH101);
        # the global generators' seeds are followed by _seeds.py.
        (random, "shuffle", _draws.wrap_in_place("random", "random.shuffle")),
        (random, "sample", _draws.wrap_drawn("random", "random.sample")),
        (np.random, "shuffle", _draws.wrap_in_place("numpy", "np.random.shuffle")),
        (np.random, "permutation", _draws.wrap_drawn("numpy", "np.random.permutation")),
        (np.random, "choice", _draws.wrap_drawn("numpy", "np.random.choice")),
        (np.random, "default_rng", _draws.wrap_default_rng),
        (ArrayImpl, "devices", _draws.wrap_array_devices),
        (jax.sharding.NamedSharding, "device_set", _draws.wrap_device_set),
        (jax.sharding.Mesh, "__new__", _draws.wrap_mesh_new),
    ]


def install(config: _state.StrictConfig | None = None) -> None:
    """Wrap JAX's entry points once (later calls keep them), and settle numpy's conversion
    functions for ``config`` (``_numpy_reads``; None: suspended). Caller holds the settings
    lock."""
    if not _patches:
        _seeds.start()
        _checks.across = _across.finding
        _jit.across_jit = _across.jit_finding
        for owner, name, make in _targets():
            original = owner.__dict__[name] if isinstance(owner, type) else getattr(owner, name)
            wrapper = make(original)
            setattr(owner, name, wrapper)
            _patches.append((owner, name, original, wrapper))
    _numpy_reads.settle(config)


def uninstall() -> None:
    """Put back exactly the objects that were there. Caller holds the settings lock."""
    _numpy_reads.restore()
    while _patches:
        owner, name, original, wrapper = _patches.pop()
        present = owner.__dict__.get(name) if isinstance(owner, type) else getattr(owner, name, None)
        # Someone patched over us meanwhile: restoring would silently drop their patch, and
        # our wrapper underneath is pass-through once strict mode is off.
        if present is wrapper:
            setattr(owner, name, original)
    _seeds.stop()


def installed() -> bool:
    return bool(_patches)
