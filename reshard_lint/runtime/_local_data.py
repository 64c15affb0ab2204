"""Process-local data on the simulated pod: build the global array a pod would build.

On a pod, ``jax.make_array_from_process_local_data(s, data, global_shape)`` and
``multihost_utils.host_local_array_to_global_array(x, mesh, spec)`` take *this process's*
rows, and ``jax.make_array_from_single_device_arrays`` this process's per-device arrays.
Code written for the pod passes exactly that (its shapes come from the simulated
``local_device_count()``), which one-process JAX rejects as the wrong global shape. Here
the global array is assembled as the pod would, with JAX's own mapping of local slices to
devices (``jax/_src/array.py``, ``_array_from_process_local_data``) run on the simulated
split; the other processes' pieces are stand-ins copied from this process's data (their
real data lives on other hosts). Data of a shape the pod rejects raises RSH304 with the
pod's error instead.
"""

from __future__ import annotations

from typing import Any, Sequence

import jax
import numpy as np
from jax.sharding import Sharding

from ._checks import Topology, ordered_devices, resolve_target, topology
from ._state import Split, StrictConfig
from ._format import fmt_ids
from .errors import ReshardError


def _starts(sharding: Sharding, shape: tuple[int, ...], topo: Topology,
            process: int | None) -> list[list[int]]:
    """Per dimension, the sorted distinct slice starts that ``process``'s devices hold
    (all devices when ``process`` is None)."""
    out: list[set[int]] = [set() for _ in shape]
    for device, index in sharding.devices_indices_map(shape).items():
        if process is not None and topo.process_of.get(device) != process:
            continue
        for i, slc in enumerate(index):
            out[i].add(slc.start or 0)
    return [sorted(s) for s in out]


def _global_shape(sharding: Sharding, local_shape: tuple[int, ...], topo: Topology) -> tuple[int, ...]:
    """JAX's local_to_global_shape on the simulated split: each dimension grows by how many
    of the distinct slices this process's devices do not hold."""
    probe = tuple(max(1, n) * len(sharding.device_set) for n in local_shape)  # divisible by any split
    every, mine = _starts(sharding, probe, topo, None), _starts(sharding, probe, topo, topo.me)
    return tuple(n * len(a) // max(1, len(m)) for n, a, m in zip(local_shape, every, mine))


def _invalid(sharding: Sharding, dim: int, have: int, process_slice: int, global_shape: tuple[int, ...],
             call: str, me: int) -> ReshardError:
    devices = tuple(int(d.id) for d in sorted(sharding.device_set, key=lambda d: d.id))
    return ReshardError(
        f"RSH304 {call} gets process-local data with {have} elements in dimension {dim}, but "
        f"simulated process {me} addresses {process_slice} elements of the global "
        f"shape {global_shape} on devices {fmt_ids(devices)}: multi-controller JAX raises "
        f"\"ValueError: Invalid host data, each dimension should match either global or "
        f"process shape\"; pass this process's rows (jax.local_device_count() devices' worth), "
        f"or the whole global array",
        code="RSH304", call=call, target=devices)


def global_from_local(sharding: Sharding, local_data: Any, global_shape: Sequence[int] | None,
                      topo: Topology, call: str) -> Any:
    """The global array a pod assembles from every process's ``local_data`` (here: this
    process's, standing in for all of them)."""
    data = np.asarray(local_data)
    local_shape = tuple(data.shape)
    shape = tuple(global_shape) if global_shape is not None else _global_shape(sharding, local_shape, topo)
    if len(shape) != len(local_shape):
        return None  # JAX says what is wrong with it
    me = topo.me
    full = [have == want for have, want in zip(local_shape, shape)]
    try:
        mine = _starts(sharding, shape, topo, me)
        shard_shape = sharding.shard_shape(shape)
    except Exception:
        return None  # an indivisible shape: JAX raises its own error
    for i, (have, want) in enumerate(zip(local_shape, shape)):
        if not full[i] and len(mine[i]) * shard_shape[i] != have:
            raise _invalid(sharding, i, have, len(mine[i]) * shard_shape[i], shape, call, me)
    # Each process maps its devices' slices onto its own local data in start order.
    starts_of = {p: _starts(sharding, shape, topo, p) for p in set(topo.process_of.values())}

    def piece(index: tuple[slice, ...], device: Any) -> Any:
        starts = starts_of[topo.process_of.get(device, me)]
        local = []
        for i, slc in enumerate(index):
            if full[i]:
                local.append(slc)
            else:
                k = starts[i].index(slc.start or 0) * shard_shape[i]
                local.append(slice(k, k + shard_shape[i]))
        return data[tuple(local)]

    indices = sharding.devices_indices_map(shape)
    arrays = [jax.device_put(piece(indices[d], d), d) for d in sharding._device_assignment]
    return jax.make_array_from_single_device_arrays(shape, sharding, arrays)


def fill_single_device_arrays(shape: Sequence[int], sharding: Sharding, arrays: Sequence[Any],
                              topo: Topology) -> list[Any] | None:
    """This process's per-device arrays, completed with stand-ins for the other processes'
    devices (the k-th array of this process copied to the k-th device of each other one);
    None when ``arrays`` is not exactly this process's share."""
    me = topo.me
    assignment = list(sharding._device_assignment)
    mine = [d for d in assignment if topo.process_of.get(d) == me]
    if len(arrays) != len(mine) or len(arrays) == len(assignment):
        return None
    by_device = {}
    for a in arrays:
        devices = getattr(a, "devices", None)
        if devices is None:
            return None
        (d,) = tuple(devices())
        by_device[d] = a
    if set(by_device) != set(mine):
        return None
    ordered_mine = [by_device[d] for d in mine]
    count: dict[int, int] = {}
    out = []
    for d in assignment:
        p = topo.process_of.get(d, me)
        if p == me:
            out.append(by_device[d])
            continue
        k = count.get(p, 0)
        count[p] = k + 1
        out.append(jax.device_put(ordered_mine[k % len(ordered_mine)], d))
    return out


def from_callback(shape: Sequence[int], sharding: Sharding, data_callback: Any,
                  topo: Topology) -> Any:
    """``jax.make_array_from_callback`` as the pod's process 0 runs it: the callback is asked
    only for this process's devices' indices (on a pod it never sees another process's,
    and code that reads process-local data relies on that); the other processes' devices get
    stand-ins, copies of this process's pieces of the same shape. None when this process
    holds none of the array (nothing to copy from: JAX runs the call as it is)."""
    me = topo.me
    shape = tuple(shape)
    indices = sharding.devices_indices_map(shape)
    assignment = list(sharding._device_assignment)
    mine = [d for d in assignment if topo.process_of.get(d) == me]
    if not mine or len(mine) == len(assignment):
        return None
    pieces = {d: data_callback(indices[d]) for d in mine}
    by_shape: dict[tuple[int, ...], list[Any]] = {}
    for d in mine:
        by_shape.setdefault(tuple(np.shape(pieces[d])), []).append(pieces[d])
    arrays, used = [], {k: 0 for k in by_shape}
    for d in assignment:
        if d in pieces:
            arrays.append(jax.device_put(pieces[d], d))
            continue
        want = tuple(len(range(*s.indices(n))) for s, n in zip(indices[d], shape))
        same = by_shape.get(want)
        if not same:
            return None  # uneven pieces: no stand-in of this shape
        arrays.append(jax.device_put(same[used[want] % len(same)], d))
        used[want] += 1
    return jax.make_array_from_single_device_arrays(shape, sharding, arrays)


# --------------------------------------------------------------------------- RSH304

def _local_mesh_finding(devices: Sequence[Any], call: str, subject: str, requested: Split) -> None:
    __tracebackhide__ = True  # pytest shows the user's call, not these frames
    topo = topology(requested, devices[0].platform)
    if topo.processes < 2:
        return
    procs = topo.processes_of(devices)
    if procs is None or len(procs) != 1:
        return
    (p,) = procs
    dev_ids = tuple(int(d.id) for d in devices)
    word = topo.word
    message = (
        f"RSH304 {call} builds {subject} on devices {fmt_ids(dev_ids)}, all on {word} {p} (a "
        f"process-local mesh) while there are {topo.processes} {word}es: multi-controller JAX "
        f"raises \"ValueError: Invalid host data, each dimension should match either global or "
        f"process shape\"; build the mesh from jax.devices() (all processes' devices), not "
        f"jax.local_devices()")
    raise ReshardError(message, code="RSH304", call=call, source=(), target=dev_ids)


def check_process_local_data(config: StrictConfig, sharding: Any, local_data: Any,
                             global_shape: Any) -> None:
    """RSH304 for ``jax.make_array_from_process_local_data(sharding, data, global_shape)``.

    Only calls that pass ``global_shape`` are checked: that is what says "these are this
    process's rows of a bigger array". Without it the call builds a process-local array,
    which is fine on a process-local mesh.
    """
    __tracebackhide__ = True  # pytest shows the user's call, not these frames
    if global_shape is None:
        return
    call = "make_array_from_process_local_data"
    try:
        from jax._src.tree_util import broadcast_prefix

        shardings = broadcast_prefix(sharding, local_data)
        shapes = broadcast_prefix(global_shape, local_data,
                                  is_leaf=lambda v: v is None or isinstance(v, tuple))
    except Exception:
        return
    for s, shape in zip(shardings, shapes):
        if shape is None:
            continue
        target = resolve_target(s, call)
        if not isinstance(target, Sharding):
            continue
        _local_mesh_finding(ordered_devices(target), call,
                            f"a global array of shape {tuple(shape)}", config.split)


def check_host_local_to_global(config: StrictConfig, global_mesh: Any) -> None:
    """RSH304 for ``multihost_utils.host_local_array_to_global_array(x, mesh, spec)``."""
    __tracebackhide__ = True  # pytest shows the user's call, not these frames
    mesh_devices = getattr(global_mesh, "devices", None)
    if mesh_devices is None or not hasattr(mesh_devices, "flat"):
        return
    _local_mesh_finding(tuple(mesh_devices.flat), "host_local_array_to_global_array",
                        "a global array", config.split)
