"""Programs whose placement step fails on another process than the one strict mode plays.

Shared by test_strict_every_process.py (strict mode, one process, playing process 0) and
test_grounding_every_process.py (the same programs under 2 real processes of 4 CPU
devices). ``strict``: the (code, line) strict mode stops at, or None when it must run;
``real``: per process, None for a clean run or a regex of the error JAX raises there.
"""

from __future__ import annotations

from dataclasses import dataclass

HEAD = """\
import jax
import numpy as np
from jax.sharding import NamedSharding, PartitionSpec as P

"""
_CROSS = r"Cross-host transfers are not supported by this backend"
_FETCH = r"Fetching value for `jax.Array` that spans non-addressable"
_SHARDS = r"Number of addressable output shards must match the number of single-shard arrays: 0 vs. 1"


@dataclass(frozen=True)
class Case:
    name: str
    body: str
    strict: tuple[str, int] | None
    real: tuple[str | None, str | None]  # process 0, process 1

    @property
    def code(self) -> str:
        return HEAD + self.body


CASES = (
    Case("host_data_on_global_device_read", """\
b = jax.device_put(np.arange(8.0), jax.devices()[0])
print(np.asarray(b))
""", ("RSH306", 6), (None, _FETCH)),
    Case("host_data_on_global_device_device_get", """\
first = jax.devices()[0]
b = jax.device_put(np.arange(8.0), first)
print(jax.device_get(b))
""", ("RSH306", 7), (None, _FETCH)),
    Case("own_array_to_global_device", """\
a = jax.device_put(np.arange(8.0), jax.local_devices()[0])
b = jax.device_put(a, jax.devices()[0])
""", ("RSH306", 6), (None, _CROSS)),
    Case("replicated_local_copy_to_global_device", """\
mesh = jax.make_mesh((8,), ("x",))
x = jax.device_put(np.arange(8.0), NamedSharding(mesh, P()))
b = jax.device_put(x.addressable_data(0), jax.devices()[0])
""", ("RSH306", 7), (None, _CROSS)),
    Case("own_array_to_global_cpu_list", """\
a = jax.device_put(np.arange(8.0), jax.local_devices()[0])
cpus = jax.devices("cpu")
b = jax.device_put(a, cpus[0])
""", ("RSH306", 7), (None, _CROSS)),
    Case("own_array_to_device_method", """\
a = jax.device_put(np.arange(8.0), jax.local_devices()[0])
b = a.to_device(jax.devices()[0])
""", ("RSH306", 6), (None, _CROSS)),
    Case("global_device_array_put_there_again", """\
a = jax.device_put(np.arange(8.0), jax.devices()[0])
b = jax.device_put(a, jax.devices()[0])
""", ("RSH306", 6), (None, _SHARDS)),
    Case("in_a_function", """\
def offload(tree):
    return jax.device_put(tree, jax.devices("cpu")[0])

params = {"w": jax.device_put(np.ones(4), jax.local_devices()[0])}
params = offload(params)
""", ("RSH306", 6), (None, _CROSS)),
    Case("under_a_branch_every_process_takes", """\
OFFLOAD = True
a = jax.device_put(np.arange(8.0), jax.local_devices()[0])
if OFFLOAD:
    a = jax.device_put(a, jax.devices("cpu")[0])
""", ("RSH306", 8), (None, _CROSS)),
    # Clean: every process runs these.
    Case("guarded_by_an_environment_rank", """\
import os
rank = int(os.environ.get("RANK", jax.process_index()))
if rank == 0:
    print(np.asarray(jax.device_put(np.arange(8.0), jax.devices()[0])))
""", None, (None, None)),
    Case("read_by_callbacks_only_the_owner_registered", """\
def report(v):
    print(np.asarray(v))

callbacks = [report] if jax.process_index() == 0 else []
b = jax.device_put(np.arange(8.0), jax.devices()[0])
for callback in callbacks:
    callback(b)
""", None, (None, None)),
    Case("after_an_assert_on_the_process", """\
def on_owner():
    assert jax.process_index() == 0
    print(np.asarray(jax.device_put(np.arange(8.0), jax.devices()[0])))

if jax.process_index() == 0:
    on_owner()
""", None, (None, None)),

    Case("jit_placed_on_global_device_read", """\
dev = jax.devices()[0]
kernel = jax.jit(lambda v: v * 2, out_shardings=jax.sharding.SingleDeviceSharding(dev))
out = kernel(np.arange(8.0))
print(np.asarray(out))
""", ("RSH306", 8), (None, _FETCH)),
    Case("jit_placed_on_local_device_read", """\
dev = jax.local_devices()[0]
kernel = jax.jit(lambda v: v * 2, out_shardings=jax.sharding.SingleDeviceSharding(dev))
print(np.asarray(kernel(np.arange(8.0))))
""", None, (None, None)),
    Case("jit_placed_on_global_device_not_read", """\
kernel = jax.jit(lambda v: v * 2, out_shardings=jax.sharding.SingleDeviceSharding(jax.devices()[0]))
out = kernel(np.arange(8.0))
print(out.shape)
""", None, (None, None)),

    Case("guarded_by_process_index", """\
if jax.process_index() == 0:
    b = jax.device_put(np.arange(8.0), jax.devices()[0])
    print(np.asarray(b))
""", None, (None, None)),
    Case("early_return_on_a_flag", """\
IS_MAIN = jax.process_index() == 0

def report():
    if not IS_MAIN:
        return
    b = jax.device_put(np.arange(8.0), jax.devices()[0])
    print(b.tolist())

report()
""", None, (None, None)),
    Case("global_device_array_moved_elsewhere_not_read", """\
a = jax.device_put(np.arange(8.0), jax.devices()[0])
b = jax.device_put(a, jax.devices()[1])
print(b.shape)
""", None, (None, None)),
    Case("host_data_on_global_device_not_read", """\
b = jax.device_put(np.arange(8.0), jax.devices()[0])
print(b.shape, b.dtype)
""", None, (None, None)),
    Case("local_devices_only", """\
a = jax.device_put(np.arange(8.0), jax.local_devices()[0])
b = jax.device_put(a, jax.local_devices()[1])
print(np.asarray(b))
""", None, (None, None)),
    Case("this_process_first_device_by_index", """\
a = jax.device_put(np.arange(8.0), jax.local_devices()[0])
mine = jax.devices()[jax.process_index() * jax.local_device_count()]
print(np.asarray(jax.device_put(a, mine)))
""", None, (None, None)),
    Case("read_only_on_owner", """\
b = jax.device_put(np.arange(8.0), jax.devices()[0])
rank = jax.process_index()
print(np.asarray(b) if rank == 0 else None)
""", None, (None, None)),
)
