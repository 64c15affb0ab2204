"""The platforms strict mode can simulate: ``rt.enable(platform="tpu-v5e-16")``. Pure Python.

Each entry lays out chips (or GPUs, or CPU devices of several processes) as JAX numbers and
enumerates them on that hardware: TPU chips get ids from their physical coordinates (x
fastest), each host owns a block of chips, and ``jax.devices()`` lists host by host; GPUs
are enumerated process by process, with ids by process or by a global topology numbering;
multi-process CPU numbers process p's devices from ``p * 2048``. These are the layouts the
linter's platform model is checked against with JAX's own mesh builders
(tests/platforms/topologies.py, docs/platforms.md), and strict mode runs those builders
(``jax.make_mesh``, ``mesh_utils.create_device_mesh``) on these descriptions, then maps the
result onto the CPU devices of this process: the k-th CPU device plays the k-th device in
the platform's ``jax.devices()`` order.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SimDevice:
    """A device as JAX's mesh builders read it (the attributes JAX's own mesh_utils tests give)."""

    id: int
    process_index: int
    platform: str
    device_kind: str
    coords: tuple[int, int, int] = (0, 0, 0)
    core_on_chip: int = 0
    slice_index: int = 0

    def __repr__(self) -> str:
        return f"{self.platform}:{self.id}"


@dataclass(frozen=True)
class Platform:
    name: str
    description: str
    devices: tuple[SimDevice, ...]  # in jax.devices() order

    @property
    def size(self) -> int:
        return len(self.devices)

    @property
    def hosts(self) -> int:
        return len({d.process_index for d in self.devices})


def _tpu(name: str, kind: str, dims: tuple[int, int, int], host: tuple[int, int, int],
         note: str) -> Platform:
    X, Y, Z = dims
    bx, by, bz = host
    hx, hy = X // bx, Y // by
    chips = [SimDevice(x + X * y + X * Y * z, (z // bz) * hx * hy + (y // by) * hx + x // bx,
                       "tpu", kind, (x, y, z))
             for z in range(Z) for y in range(Y) for x in range(X)]
    ordered = tuple(sorted(chips, key=lambda d: (d.process_index, d.id)))
    hosts = len({d.process_index for d in chips})
    return Platform(name, f"{kind} {X}x{Y}x{Z}, {hosts} host{'s' * (hosts > 1)} of "
                          f"{len(chips) // hosts} chips{note}", ordered)


def _gpu(name: str, processes: int, per_process: int, by_topology: bool) -> Platform:
    devices = tuple(
        SimDevice(local * processes + p if by_topology else p * per_process + local, p, "gpu",
                  "NVIDIA H100 80GB HBM3")
        for p in range(processes) for local in range(per_process))
    ids = "ids by a global topology numbering (multi-slice)" if by_topology else "ids by process"
    return Platform(name, f"GPU, {processes} processes of {per_process}, {ids}", devices)


def _cpu(name: str, processes: int, per_process: int) -> Platform:
    devices = tuple(SimDevice(p * 2048 + i, p, "cpu", "cpu")
                    for p in range(processes) for i in range(per_process))
    return Platform(name, f"CPU, {processes} processes of {per_process} (ids from p * 2048)", devices)


CATALOGUE: dict[str, Platform] = {p.name: p for p in (
    _tpu("tpu-v4-8", "TPU v4", (2, 2, 1), (2, 2, 1), ""),
    _tpu("tpu-v4-16", "TPU v4", (2, 2, 2), (2, 2, 1), ""),
    _tpu("tpu-v4-32", "TPU v4", (2, 2, 4), (2, 2, 1), ""),
    _tpu("tpu-v5e-8", "TPU v5 lite", (2, 4, 1), (2, 2, 1), ""),
    _tpu("tpu-v5e-16", "TPU v5 lite", (4, 4, 1), (2, 2, 1),
         "; jax.devices() ids 0, 1, 4, 5, 2, 3, 6, 7, ..."),
    _tpu("tpu-v5e-64", "TPU v5 lite", (8, 8, 1), (2, 2, 1), ""),
    _gpu("gpu-2x4", 2, 4, False),
    _gpu("gpu-2x8", 2, 8, False),
    _gpu("gpu-4x4", 4, 4, False),
    _gpu("gpu-2x4-topology-ids", 2, 4, True),
    _cpu("cpu-2x4", 2, 4),
    _cpu("cpu-4x4", 4, 4),
)}


def platform(name: str) -> Platform:
    """The catalogue entry; StrictConfigError naming the choices for an unknown name."""
    try:
        return CATALOGUE[name]
    except KeyError:
        from .errors import StrictConfigError

        raise StrictConfigError(f"unknown platform {name!r}; strict mode simulates "
                                f"{', '.join(CATALOGUE)}") from None
