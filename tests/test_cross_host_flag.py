"""RSH201 and JAX's experimental cross-host transfer: with the transfer socket set, JAX moves
the same layout between two process groups over the network (jax 0.10.2 dispatch.py
``_is_supported_cross_host_transfer``), so a file that sets it gets no claim of a failure;
without it, the CPU backend raises "does not support cross-host device transfers" on every
process (tests/multicontroller/test_global_device.py)."""

from __future__ import annotations

from reshard_lint.engine.engine import Engine

SOURCE = """\
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

{flag}jax.distributed.initialize()
n = jax.device_count() // 2
trainer = Mesh(np.array(jax.devices()[:n]), ("x",))
rollout = Mesh(np.array(jax.devices()[n:]), ("x",))
weights = jax.device_put(np.arange(8.0), NamedSharding(trainer, P()))
synced = jax.device_put(weights, NamedSharding(rollout, P()))
"""
FLAG = 'jax.config.update("jax_cross_host_transfer_socket_address", "10.0.0.1:8476")\n'


def _codes(source: str) -> list[tuple[int, str]]:
    return [(d.line, d.code) for d in Engine().lint_source(source, "sync.py").diagnostics]


def test_a_same_layout_move_between_process_groups_is_rsh201() -> None:
    assert _codes(SOURCE.format(flag="")) == [(10, "RSH201")]


def test_the_transfer_socket_flag_silences_it() -> None:
    assert _codes(SOURCE.format(flag=FLAG)) == []
