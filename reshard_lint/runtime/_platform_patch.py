"""A simulated platform on the CPU devices: ids, device lists and mesh builders as there.

With ``platform="tpu-v5e-16"`` the k-th CPU device plays the k-th device of that platform's
``jax.devices()`` (runtime/platforms.py). The user's code then reads the platform's
``Device.id`` (so ``sorted(devs, key=lambda d: d.id)`` and id-to-device lookups behave
as there), and ``jax.make_mesh`` / ``mesh_utils.create_device_mesh`` order the devices as
JAX's own builders do on that hardware: the builders run on the platform's device
descriptions and the result is mapped back onto the CPU devices. Two builders that agree on
CPU and disagree on TPU then give two meshes in two orders here too, and strict mode's
RSH202/RSH203/RSH204 checks see it. JAX's own code keeps the CPU ids.
"""

from __future__ import annotations

import functools
import sys
from typing import Any, Callable, Sequence

import numpy as np
from jax._src import xla_bridge as _xb

from . import _across, _state
from ._checks import Topology, topology
from ._where import from_library
from .errors import ReshardError

_V5E_KINDS = ("TPU v5 lite", "TPU v5e")


def _platform_topology(device_platform: str) -> Topology | None:
    config = _state.current
    if config is None or config.platform is None:
        return None
    topo = topology(config.split, device_platform)
    return topo if topo.plays is not None else None


def wrap_device_id(prop: property) -> property:
    fget = prop.fget
    assert fget is not None

    def id(self: Any) -> int:  # noqa: A001 - the attribute's own name
        config = _state.current
        if config is not None and config.platform is not None and not from_library(sys._getframe(1)):
            topo = _platform_topology(self.platform)
            if topo is not None and self in topo.plays:  # type: ignore[operator]
                return int(topo.plays[self].id)  # type: ignore[index]
        return fget(self)

    return property(id, doc=prop.__doc__)


class DeviceList(list):
    """``jax.devices()`` as the user's code gets it on a simulated platform: a list, whose
    indexing by a device id that is not a position (multi-process CPU: ids 2048 ...) raises
    RSH104 where the pod raises IndexError."""

    _sim_ids: frozenset[int] = frozenset()

    def __getitem__(self, index: Any) -> Any:
        __tracebackhide__ = True
        try:
            return super().__getitem__(index)
        except IndexError:
            if isinstance(index, int) and index in self._sim_ids:
                raise ReshardError(
                    f"RSH104 jax.devices()[{index}] indexes the device list by a device id: the "
                    f"simulated platform's ids ({_state.current and _state.current.platform}) are "
                    f"not positions, and a pod raises \"IndexError: list index out of range\" "
                    f"(multi-process CPU), or picks another device (multi-host TPU); look devices "
                    f"up by id: {{d.id: d for d in jax.devices()}}[i]",
                    code="RSH104", call="jax.devices()") from None
            raise


def _as_user_list(devices: list[Any], topo: Topology) -> list[Any]:
    out = DeviceList(devices)
    out._sim_ids = frozenset(int(s.id) for s in topo.plays.values())  # type: ignore[union-attr]
    return out


def wrap_devices(original: Callable[..., list[Any]]) -> Callable[..., list[Any]]:
    @functools.wraps(original)
    def devices(backend: Any = None) -> list[Any]:
        found = original(backend)
        if _state.current is not None and _state.current.platform is not None and found \
                and not from_library(sys._getframe(1)):
            topo = _platform_topology(found[0].platform)
            if topo is not None:
                return _as_user_list(found, topo)
        return found

    return devices


def user_list(found: list[Any]) -> list[Any]:
    """A device list for the user's code: a DeviceList on a simulated platform."""
    if found and _state.current is not None and _state.current.platform is not None:
        topo = _platform_topology(found[0].platform)
        if topo is not None:
            return _as_user_list(found, topo)
    return found


def wrap_create_device_mesh(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def create_device_mesh(mesh_shape: Sequence[int], devices: Sequence[Any] | None = None,
                           **kwargs: Any) -> Any:
        built = _simulated(original, mesh_shape, devices, kwargs)
        config = _state.current
        if config is not None and config.platforms:
            # where its devices sit on every target platform (_across)
            _across.note_builder(mesh_shape, devices, kwargs, built, sys._getframe(1))
        return built

    return create_device_mesh


def _simulated(original: Callable[..., Any], mesh_shape: Sequence[int],
               devices: Sequence[Any] | None, kwargs: dict[str, Any]) -> Any:
    """JAX's builder, run on the simulated platform's devices when there is one."""
    real = list(devices) if devices is not None else None
    some = real[0] if real else None
    topo = _platform_topology(some.platform if some is not None else _xb.get_backend().platform) \
        if _state.current is not None and _state.current.platform is not None else None
    if topo is None or topo.plays is None:
        return original(mesh_shape, devices, **kwargs)
    real = real if real is not None else list(_xb.devices())
    if not all(d in topo.plays for d in real):
        return original(mesh_shape, devices, **kwargs)
    sims = [topo.plays[d] for d in real]
    caller = sys._getframe(2)
    if caller.f_code.co_name == "make_mesh" and from_library(caller) and sims[-1].device_kind in _V5E_KINDS:
        # jax.make_mesh asks v5e for split physical axes; it read the CPU device's kind.
        kwargs = {**kwargs, "allow_split_physical_axes": True}
    built = original(mesh_shape, sims, **kwargs)
    back = {s: d for d, s in topo.plays.items()}
    flat = [back[s] for s in np.asarray(built).flat]
    out = np.empty(len(flat), dtype=object)
    out[:] = flat
    return out.reshape(np.asarray(built).shape)
