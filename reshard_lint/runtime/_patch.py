"""Installs and removes the wrappers around JAX's entry points. Imports jax.

The wrappers are thin: one read of ``_state.current``, and when strict mode is off they call
straight through. That keeps a wrapper that escaped removal (``from jax import device_put``
run while strict mode was on) harmless afterwards.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

import jax
import jax.experimental.multihost_utils as _multihost_utils
from jax._src.array import ArrayImpl

from . import _checks, _state

# (owner, attribute, original, wrapper), in installation order.
_patches: list[tuple[Any, str, Any, Any]] = []


def _wrap_device_put(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def device_put(x: Any, device: Any = None, **kwargs: Any) -> Any:
        __tracebackhide__ = True  # pytest: show the user's line, not this frame
        config = _state.current
        if config is not None:
            _checks.check_device_put(config, x, device, "device_put", stacklevel=2)
        return original(x, device, **kwargs)

    return device_put


def _wrap_to_device(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def to_device(self: Any, device: Any, **kwargs: Any) -> Any:
        __tracebackhide__ = True
        config = _state.current
        if config is not None:
            _checks.check_device_put(config, self, device, "Array.to_device", stacklevel=2)
        return original(self, device, **kwargs)

    return to_device


def _wrap_process_local(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def make_array_from_process_local_data(sharding: Any, local_data: Any,
                                           global_shape: Any = None) -> Any:
        __tracebackhide__ = True
        config = _state.current
        if config is not None:
            _checks.check_process_local_data(config, sharding, local_data, global_shape)
        return original(sharding, local_data, global_shape)

    return make_array_from_process_local_data


def _wrap_host_local(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def host_local_array_to_global_array(local_inputs: Any, global_mesh: Any, pspecs: Any) -> Any:
        __tracebackhide__ = True
        config = _state.current
        if config is not None:
            _checks.check_host_local_to_global(config, global_mesh)
        return original(local_inputs, global_mesh, pspecs)

    return host_local_array_to_global_array


def _targets() -> list[tuple[Any, str, Callable[[Callable[..., Any]], Callable[..., Any]]]]:
    return [
        (jax, "device_put", _wrap_device_put),
        (ArrayImpl, "to_device", _wrap_to_device),
        (jax, "make_array_from_process_local_data", _wrap_process_local),
        (_multihost_utils, "host_local_array_to_global_array", _wrap_host_local),
    ]


def install() -> None:
    """Wrap JAX's entry points once; later calls do nothing. Caller holds ``_state._lock``."""
    if _patches:
        return
    for owner, name, make in _targets():
        original = owner.__dict__[name] if isinstance(owner, type) else getattr(owner, name)
        wrapper = make(original)
        setattr(owner, name, wrapper)
        _patches.append((owner, name, original, wrapper))


def uninstall() -> None:
    """Put back exactly the objects that were there. Caller holds ``_state._lock``."""
    while _patches:
        owner, name, original, wrapper = _patches.pop()
        present = owner.__dict__.get(name) if isinstance(owner, type) else getattr(owner, name, None)
        # Someone patched over us meanwhile: restoring would silently drop their patch, and
        # our wrapper underneath is pass-through once strict mode is off.
        if present is wrapper:
            setattr(owner, name, original)


def installed() -> bool:
    return bool(_patches)
