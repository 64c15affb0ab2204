"""A placement step judged as every simulated process would run it. Imports jax.

The run plays one process (``StrictConfig.process``), but every process runs the same
line, and the device list ``jax.devices()`` is the same object list on every process: only
who owns each device differs. So a step whose inputs are the same on every process (a
device picked from the global list by a constant index, host data) and whose line is not
under a process-dependent branch (``_sites``) can be judged for the other processes
without running them. What they do, observed under 2 real processes of 4 CPU devices
(jax 0.10.2, tests/runtime/test_grounding_multicontroller.py):

- host data put on ``jax.devices()[0]``: every process makes an array on device 0; on
  process 1 it is not addressable, and reading it raises "Fetching value for jax.Array that
  spans non-addressable (non process local) devices is not possible";
- a process's own array (``x.addressable_data(0)``, a put on ``jax.local_devices()[0]``)
  put on ``jax.devices()[0]`` (also ``Array.to_device``, and ``jax.devices("cpu")[0]``):
  process 1 raises "UNIMPLEMENTED: Cross-host transfers are not supported by this backend";
- an array already put on ``jax.devices()[0]`` put there again: process 1 raises
  "INVALID_ARGUMENT: Number of addressable output shards must match the number of
  single-shard arrays: 0 vs. 1" (put on ``jax.devices()[1]`` instead, it runs everywhere).

Which arrays are "a process's own" and which "on a global pick" strict mode remembers as
it makes them (``kinds``, by id, dropped when the array is collected); an array it did not
see made is unknown, and an unknown is never judged for other processes.
"""

from __future__ import annotations

import ast
from types import FrameType
from typing import Any

import jax

from . import _kinds, _numpy_reads, _sites, _state
from ._kinds import GLOBAL, LOCAL, kind_of
from ._checks import topology
from .errors import ReshardError

_Device = jax.Device
DEVICE_TYPES: set[type] = set()
OTHER_TYPES: set[type] = set()


def learn(target: Any) -> bool:
    """Whether ``target`` is a Device (its type remembered either way)."""
    is_device = isinstance(target, _Device)
    (DEVICE_TYPES if is_device else OTHER_TYPES).add(type(target))
    return is_device


def forget() -> None:
    _kinds.forget()
    _sites.forget()
    _site_picks.clear()


def _resolve(func: ast.expr, frame: FrameType) -> str | None:
    """``jax.devices`` -> global, ``jax.local_devices`` -> local, evaluated in the frame."""
    parts: list[str] = []
    node: ast.expr = func
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    value = frame.f_locals.get(node.id, frame.f_globals.get(node.id))
    for attr in reversed(parts):
        value = getattr(value, attr, None)
    if not (getattr(value, "__module__", "") or "").startswith("jax"):
        return None
    name = getattr(value, "__name__", None)
    return GLOBAL if name == "devices" else LOCAL if name == "local_devices" else None


_picks = _sites.Picks(_resolve)
# (code, lasti) -> the pick at that call site, or None
_site_picks: dict[tuple[Any, ...], tuple[str, str] | None] = {}


def _pick(frame: FrameType, index: int) -> tuple[str, str] | None:
    key = (frame.f_code, frame.f_lasti)
    if key in _site_picks:
        return _site_picks[key]
    found: tuple[str, str] | None = None
    located = _sites.call_at(frame)
    if located is not None:
        info, call = located
        expr = _sites.argument(call, index, "device")
        if expr is not None:
            found = _picks.device(info, expr, _sites.scope_of(info, call), frame)
    if len(_site_picks) > 4096:
        _site_picks.clear()
    _site_picks[key] = found
    return found


def _user_frame(frame: FrameType | None) -> FrameType | None:
    return next(_sites.user_frames(frame), None)


def judge_put(config: _state.StrictConfig, x: Any, device: Any, call: str,
              frame: FrameType | None) -> tuple[str, Any, str] | None:
    """Before ``jax.device_put(x, device)`` / ``x.to_device(device)`` (``device`` a Device):
    raise when another simulated process fails on this line; return what the result will
    be on every process (to remember), or None when unknown."""
    __tracebackhide__ = True
    user = _user_frame(frame)
    if user is None:
        return None
    pick = _pick(user, 0 if call == "Array.to_device" else 1)
    if pick is None:
        return None
    kind, spelled = pick
    if kind == LOCAL:
        return (LOCAL, None, spelled)
    topo = topology(config.split, device.platform)
    if not topo.simulated or topo.processes < 2:
        return None
    owner = topo.process_of.get(device)
    if owner is None or not _sites.runs_on_every_process(user):
        return None
    leaves = [x] if isinstance(x, jax.Array) else jax.tree_util.tree_leaves(x)
    for leaf in leaves:
        if isinstance(leaf, jax.Array) and getattr(leaf, "_committed", False):
            _judge_leaf(call, leaf, device, topo, owner, spelled)
    return (GLOBAL, device, spelled)


def _judge_leaf(call: str, x: Any, device: Any, topo: Any, owner: int, spelled: str) -> None:
    """Raise when a committed ``x`` put on ``device`` fails on a process that does not own it."""
    __tracebackhide__ = True
    other = next(q for q in range(topo.processes) if q != owner)
    where = f"on process {other} of {topo.processes}: {spelled} belongs to process {owner}"
    known = kind_of(x)
    if known is None:
        return  # an array strict mode did not see made: unknown on other processes
    held = topo.process_of.get(known[1]) if known[0] == GLOBAL else None
    if known[0] == LOCAL or (held is not None and held != owner):
        # On some process x is its own array (its piece, or on its device) and the
        # device is another's.
        if known[0] == GLOBAL:
            other = held  # type: ignore[assignment]
            where = f"on process {other} of {topo.processes}: {spelled} belongs to process {owner}"
        _raise("RSH306", call, x, device, where, owner,
               f"x ({known[2]}) is that process's own array there, and multi-controller JAX "
               f"cannot copy between hosts: it raises \"UNIMPLEMENTED: Cross-host transfers are "
               f"not supported by this backend\" (TPU: \"Cannot copy array to non-addressable "
               f"device\")")
    if known[1] is device:
        _raise("RSH306", call, x, device, where, owner,
               f"x (put on {known[2]}) is not addressable there either, and multi-controller JAX "
               f"raises \"ValueError: INVALID_ARGUMENT: Number of addressable output shards must "
               f"match the number of single-shard arrays: 0 vs. 1\"")


def _raise(code: str, call: str, x: Any, device: Any, where: str, owner: int, why: str) -> None:
    __tracebackhide__ = True
    source = tuple(sorted(int(d.id) for d in x.sharding.device_set))
    message = (f"{code} {call} puts an array on device {device.id}, which fails {where}: {why}; "
               f"take the device from this process's own list: jax.local_devices(backend=...)[k] "
               f"(or guard the line with `if jax.process_index() == {owner}:`)")
    raise ReshardError(message, code=code, call=call, source=source, target=(int(device.id),))


def after_put(config: _state.StrictConfig, result: Any, verdict: tuple[str, Any, str]) -> None:
    """Remember what ``judge_put`` found the result to be on every process."""
    kind, device, spelled = verdict
    for leaf in jax.tree_util.tree_leaves(result):
        if isinstance(leaf, jax.Array):
            _kinds.remember(leaf, kind, device, spelled)
    if kind == GLOBAL:
        # numpy reads an array on one CPU device without JAX's Python: check its functions
        _numpy_reads.arm(config)


def after_jit(config: _state.StrictConfig, out: Any, frame: FrameType | None) -> None:
    """After a jitted call placed by ``out_shardings=SingleDeviceSharding(d)``, ``d`` picked
    from the global list: every process runs the computation onto ``d``, and on a process
    that does not own it the results cannot be read (2 processes of 4 CPU devices, jax
    0.10.2: tests/runtime/test_grounding_every_process.py). The results are remembered as
    a put on that pick's are, so that a read of them is judged as every process makes it
    (_fetch). Only a call strict mode sees (JAX's Python path: a new argument sharding)."""
    user = _user_frame(frame)
    leaves = [leaf for leaf in jax.tree_util.tree_leaves(out) if isinstance(leaf, jax.Array)]
    if user is None or not leaves:
        return
    try:
        devices = {d for leaf in leaves for d in leaf.sharding.device_set}
    except Exception:  # noqa: BLE001 - a sharding strict mode cannot read: unknown
        return
    if len(devices) != 1:
        return
    device = next(iter(devices))
    key = (user.f_code, user.f_lasti, "jit")
    if key in _site_picks:
        pick = _site_picks[key]
    else:
        pick = None
        located = _sites.call_at(user)
        if located is not None:
            info, call = located
            pick = _picks.single_device_out(info, call.func, _sites.scope_of(info, call), user)
        if len(_site_picks) > 4096:
            _site_picks.clear()
        _site_picks[key] = pick
    if pick is None or pick[0] != GLOBAL:
        return
    topo = topology(config.split, device.platform)
    if not topo.simulated or topo.processes < 2 or topo.process_of.get(device) is None \
            or not _sites.runs_on_every_process(user):
        return
    for leaf in leaves:
        _kinds.remember(leaf, GLOBAL, device, f"SingleDeviceSharding({pick[1]})")
    _numpy_reads.arm(config)
