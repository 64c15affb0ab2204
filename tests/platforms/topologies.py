"""Mock TPU, GPU and CPU devices that JAX's own mesh builders run on.

JAX's mesh_utils tests build devices as plain objects with the attributes the builders
read (``id``, ``process_index``, ``platform``, ``device_kind``, ``coords``,
``core_on_chip``, ``slice_index``); so do we, to check on this CPU machine the orders
the linter's platform model claims (reshard_lint/analysis/devices.py, docs/platforms.md).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from reshard_lint.runtime.platforms import SimDevice


# The device JAX's mesh builders read: the same class strict mode's simulated platforms
# build (reshard_lint/runtime/platforms.py; importing it imports no jax).
MockDevice = SimDevice


@dataclass(frozen=True)
class Topology:
    name: str  # 'TPU v4 4x4x1, 4 hosts'
    devices: tuple[MockDevice, ...]  # in jax.devices() order

    @property
    def n(self) -> int:
        return len(self.devices)

    @property
    def hosts(self) -> int:
        return len({d.process_index for d in self.devices})

    @property
    def enumeration(self) -> tuple[int, ...]:
        return tuple(d.id for d in self.devices)


def tpu(kind: str, dims: tuple[int, int, int], host: tuple[int, int, int] = (2, 2, 1)) -> Topology:
    """Chips at every coordinate of ``dims``; ids follow coordinates (x fastest), each host
    owns a ``host`` block, and jax.devices() lists host by host, as on a TPU pod slice."""
    X, Y, Z = dims
    bx, by, bz = host
    hx, hy = X // bx, Y // by
    devs = [MockDevice(x + X * y + X * Y * z, (z // bz) * hx * hy + (y // by) * hx + x // bx,
                       "tpu", kind, (x, y, z))
            for z in range(Z) for y in range(Y) for x in range(X)]
    hosts = len({d.process_index for d in devs})
    label = "v4" if kind == "TPU v4" else "v5e" if kind == "TPU v5 lite" else kind
    return Topology(f"TPU {label} {X}x{Y}x{Z}, {hosts} host{'s' * (hosts > 1)}",
                    tuple(sorted(devs, key=lambda d: (d.process_index, d.id))))


def gpu(processes: int, per_process: int, scattered: bool) -> Topology:
    """GPUs enumerated process by process; ``scattered`` ids follow a global topology
    numbering (multi-slice) instead of the processes."""
    devs = []
    for p in range(processes):
        for local in range(per_process):
            i = local * processes + p if scattered else p * per_process + local
            devs.append(MockDevice(i, p, "gpu", "NVIDIA H100 80GB HBM3"))
    ids = "by topology" if scattered else "by process"
    return Topology(f"GPU {processes}x{per_process}, ids {ids}", tuple(devs))


def cpu(processes: int, per_process: int) -> Topology:
    # Multi-process CPU numbers process p's devices from p * 2048 (RUNTIME-FACTS.md).
    devs = [MockDevice(p * 2048 + i, p, "cpu", "cpu") for p in range(processes) for i in range(per_process)]
    return Topology(f"CPU {processes}x{per_process}", tuple(devs))


TPUS = (
    tpu("TPU v4", (2, 2, 1)),
    tpu("TPU v4", (2, 2, 2)),
    tpu("TPU v4", (4, 2, 1)),
    tpu("TPU v4", (4, 4, 1)),
    tpu("TPU v4", (2, 2, 4)),
    tpu("TPU v4", (4, 4, 4)),
    tpu("TPU v5 lite", (2, 4, 1)),
    tpu("TPU v5 lite", (4, 4, 1)),
    tpu("TPU v5 lite", (8, 8, 1)),
)
GPUS = (gpu(2, 4, False), gpu(2, 4, True), gpu(4, 4, False), gpu(4, 4, True))
CPUS = (cpu(2, 4), cpu(4, 4))


def ids(arr: Any) -> tuple[int, ...]:
    return tuple(int(d.id) for d in np.asarray(arr).flat)


def create_device_mesh(shape: Sequence[int], devices: Sequence[MockDevice]) -> tuple[int, ...] | None:
    """The flattened ids of JAX's create_device_mesh, None where JAX refuses the shape."""
    from jax.experimental import mesh_utils

    try:
        return ids(mesh_utils.create_device_mesh(tuple(shape), list(devices)))
    except (ValueError, NotImplementedError, AssertionError):
        return None


def make_mesh(shape: Sequence[int], devices: Sequence[MockDevice]) -> tuple[int, ...] | None:
    """The flattened ids of jax.make_mesh(shape, names, devices=devices)."""
    import jax

    names = tuple(f"a{i}" for i in range(len(shape)))
    try:
        return ids(jax.make_mesh(tuple(shape), names, devices=list(devices)).devices)
    except (ValueError, NotImplementedError, AssertionError):
        return None


def shapes(n: int, max_axes: int = 3) -> list[tuple[int, ...]]:
    """Every mesh shape of n devices with up to ``max_axes`` axes (size-1 axes included)."""
    divisors = [d for d in range(1, n + 1) if n % d == 0]
    return [s for k in range(1, max_axes + 1) for s in itertools.product(divisors, repeat=k)
            if math.prod(s) == n]


def key(shape: Sequence[int]) -> tuple[int, ...]:
    return tuple(d for d in shape if d != 1)
