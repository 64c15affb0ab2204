"""Canonical names for the JAX, numpy and stdlib functions the analysis understands.

Imports bind names to qualified names as the analysis walks the file (``import
jax.sharding as shd``, ``from jax import device_put as dp``), so aliases resolve
without a whole-file scope analysis; this table folds the several public
spellings of one function into one key.
"""

from __future__ import annotations

_ALIASES: dict[str, str] = {
    # device sources
    "jax.devices": "jax.devices",
    "jax.local_devices": "jax.local_devices",
    "jax.device_count": "jax.device_count",
    "jax.local_device_count": "jax.local_device_count",
    "jax.process_index": "jax.process_index",
    "jax.process_count": "jax.process_count",
    "jax.extend.backend.get_backend": "jax.get_backend",
    # meshes
    "jax.sharding.Mesh": "jax.sharding.Mesh",
    "jax.Mesh": "jax.sharding.Mesh",
    "jax._src.mesh.Mesh": "jax.sharding.Mesh",
    "jax.interpreters.pxla.Mesh": "jax.sharding.Mesh",
    "jax.experimental.maps.Mesh": "jax.sharding.Mesh",
    "jax.make_mesh": "jax.make_mesh",
    "jax.sharding.make_mesh": "jax.make_mesh",
    "jax._src.sharding_impls.make_mesh": "jax.make_mesh",
    # jax's own test helper (``from jax._src import test_util as jtu``), models/meshes.py
    "jax._src.test_util.create_mesh": "jax._src.test_util.create_mesh",
    "jax._src.test_util.with_explicit_mesh": "jax._src.test_util.with_explicit_mesh",
    "jax.experimental.mesh_utils.create_device_mesh": "create_device_mesh",
    "jax._src.mesh_utils.create_device_mesh": "create_device_mesh",
    "jax.experimental.mesh_utils.create_hybrid_device_mesh": "create_hybrid_device_mesh",
    "jax._src.mesh_utils.create_hybrid_device_mesh": "create_hybrid_device_mesh",
    # shardings
    "jax.sharding.NamedSharding": "jax.sharding.NamedSharding",
    "jax.NamedSharding": "jax.sharding.NamedSharding",
    "jax._src.sharding_impls.NamedSharding": "jax.sharding.NamedSharding",
    "jax.sharding.PartitionSpec": "jax.sharding.PartitionSpec",
    "jax.P": "jax.sharding.PartitionSpec",
    "jax.sharding.P": "jax.sharding.PartitionSpec",
    "jax._src.partition_spec.PartitionSpec": "jax.sharding.PartitionSpec",
    "jax.sharding.SingleDeviceSharding": "jax.sharding.SingleDeviceSharding",
    "jax._src.sharding_impls.SingleDeviceSharding": "jax.sharding.SingleDeviceSharding",
    # the same constructor with memory_kind= keyword-only (jax/_src/sharding_impls.py)
    "jax._src.sharding_impls.make_single_device_sharding": "jax.sharding.SingleDeviceSharding",
    "jax.set_mesh": "jax.set_mesh",
    "jax.sharding.set_mesh": "jax.set_mesh",
    "jax.sharding.use_mesh": "jax.set_mesh",
    "jax.experimental.use_mesh": "jax.set_mesh",
    # arrays
    "jax.device_put": "jax.device_put",
    "jax.device_get": "jax.device_get",
    "jax.api.device_put": "jax.device_put",
    "jax._src.api.device_put": "jax.device_put",
    "jax.make_array_from_callback": "jax.make_array_from_callback",
    "jax.make_array_from_single_device_arrays": "jax.make_array_from_single_device_arrays",
    "jax.make_array_from_process_local_data": "jax.make_array_from_process_local_data",
    "jax.experimental.multihost_utils.process_allgather": "jax.experimental.multihost_utils.process_allgather",
    "jax.experimental.multihost_utils.broadcast_one_to_all":
        "jax.experimental.multihost_utils.broadcast_one_to_all",
    "jax.experimental.multihost_utils.host_local_array_to_global_array":
        "host_local_array_to_global_array",
    "jax.jit": "jax.jit",
    "jax.experimental.pjit.pjit": "jax.jit",
    "jax.shard_map": "jax.shard_map",
    "jax.experimental.shard_map.shard_map": "jax.shard_map",
    "jax._src.shard_map.shard_map": "jax.shard_map",
    "jax.lax.with_sharding_constraint": "jax.lax.with_sharding_constraint",
    "jax.sharding.reshard": "jax.sharding.reshard",
    "jax.reshard": "jax.sharding.reshard",
    "jax.tree.map": "jax.tree.map",
    "jax.grad": "jax.grad",
    "jax.value_and_grad": "jax.value_and_grad",
    "jax.vmap": "jax.vmap",
    "jax.checkpoint": "jax.checkpoint",
    "jax.remat": "jax.checkpoint",
    "jax.tree_util.tree_map": "jax.tree.map",
    "jax.tree_map": "jax.tree.map",
    "functools.partial": "functools.partial",
    # numpy on device arrays
    "numpy.array": "np.array",
    "numpy.asarray": "np.array",
    "numpy.copy": "np.array",
    "numpy.flip": "np.flip",
    "numpy.fliplr": "np.fliplr",
    "numpy.flipud": "np.flipud",
    "numpy.roll": "np.roll",
    "numpy.transpose": "np.transpose",
    "numpy.swapaxes": "np.swapaxes",
    "numpy.moveaxis": "np.moveaxis",
    "numpy.reshape": "np.reshape",
    "numpy.ravel": "np.ravel",
    "numpy.concatenate": "np.concatenate",
    "numpy.random.permutation": "np.random.permutation",
    "numpy.random.shuffle": "np.random.shuffle",
    "numpy.random.default_rng": "np.random.default_rng",
    "numpy.random.RandomState": "np.random.default_rng",
    "numpy.random.Generator": "np.random.default_rng",
    "numpy.random.seed": "np.random.seed",
    # stdlib
    "random.shuffle": "random.shuffle",
    "random.sample": "random.sample",
    "random.Random": "random.Random",
    "random.SystemRandom": "random.SystemRandom",
    "random.seed": "random.seed",
    "builtins.list": "list",
    "builtins.tuple": "tuple",
    "builtins.reversed": "reversed",
    "builtins.sorted": "sorted",
    "builtins.len": "len",
    "builtins.set": "set",
    "builtins.frozenset": "set",
    "builtins.int": "int",
    "builtins.range": "range",
    "builtins.enumerate": "enumerate",
    "builtins.zip": "zip",
    "builtins.map": "map",
    "builtins.setattr": "setattr",
    "builtins.delattr": "delattr",
}

# Methods of list and dict (and NumPy arrays: sort) that change the object in place
# (analysis/mutation.py; slicing.py keeps the statements that call them).
MUTATING_METHODS = frozenset({
    "append", "extend", "insert", "pop", "remove", "clear", "update", "setdefault", "popitem", "sort",
    "reverse", "__setitem__", "__delitem__", "__iadd__", "__ior__",
})

BUILTINS = frozenset({"list", "tuple", "reversed", "sorted", "len", "set", "frozenset", "int", "range",
                      "enumerate", "zip", "map", "setattr", "delattr"})

# jax.numpy functions that take ``device=``; asarray/array also move an existing array.
JNP_PREFIX = "jax.numpy."


def canonical(qual: str) -> str | None:
    hit = _ALIASES.get(qual)
    if hit is not None:
        return hit
    if qual.startswith(JNP_PREFIX):
        return "jnp." + qual[len(JNP_PREFIX):]
    if qual.startswith("numpy."):
        return "np." + qual[len("numpy."):]
    if qual.startswith("jax.random."):
        return qual
    return None
