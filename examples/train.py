"""A small multi-host data-parallel training script, with the mistakes reshard-lint finds.

On one host it runs fine; on several (one process per host) `reshard-lint check` finds four bugs:
two lines that fail (RSH201, RSH301), a reversed mesh (RSH102) and the full reshuffle onto it (RSH202).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import optax  # noqa: F401  (the real script uses it for the optimizer)
from jax.experimental import multihost_utils
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

jax.distributed.initialize()

# The training mesh: data parallel over every device of every host.
mesh = Mesh(np.array(jax.devices()).reshape(-1), ("data",))

# An "evaluation mesh" someone built by reversing the device list to spread load.
eval_mesh = Mesh(np.array(jax.devices()[::-1]), ("data",))

# A mesh for the embedding server: the first four devices only.
embed_mesh = Mesh(np.array(jax.devices()[:4]), ("data",))

DATA = NamedSharding(mesh, P("data"))
REPLICATED = NamedSharding(mesh, P())


def init_params(key: jax.Array) -> dict[str, jax.Array]:
    w = jax.random.normal(key, (1024, 1024))
    b = jnp.zeros((1024,))
    return {"w": jax.device_put(w, REPLICATED), "b": jax.device_put(b, REPLICATED)}


def load_batch(step: int) -> jax.Array:
    per_host = np.random.default_rng(step).normal(size=(8, 1024)).astype(np.float32)
    return jax.make_array_from_process_local_data(DATA, per_host)


@jax.jit
def train_step(params: dict[str, jax.Array], batch: jax.Array) -> dict[str, jax.Array]:
    def loss(p: dict[str, jax.Array]) -> jax.Array:
        return jnp.mean((batch @ p["w"] + p["b"]) ** 2)

    grads = jax.grad(loss)(params)
    return jax.tree.map(lambda p, g: p - 1e-3 * g, params, grads)


def main() -> None:
    params = init_params(jax.random.key(0))
    for step in range(10):
        params = train_step(params, load_batch(step))

    # Evaluate on the evaluation mesh: same devices, another order (a full reshuffle).
    batch = load_batch(0)
    eval_batch = jax.device_put(batch, NamedSharding(eval_mesh, P("data")))

    # Ship the embedding table to the embedding server's devices: a different device set.
    embeddings = jax.device_put(np.zeros((1024, 64), np.float32), REPLICATED)
    table = jax.device_put(embeddings, NamedSharding(embed_mesh, P()))

    # Checkpoint from process 0: copies a global array to one device.
    host_copy = jax.device_put(embeddings, jax.devices()[0])
    if jax.process_index() == 0:
        print(eval_batch.shape, table.shape, host_copy.shape)
    print(multihost_utils.process_allgather(params["b"], tiled=True).shape)


if __name__ == "__main__":
    main()
