"""What analysis/library.py assumes of objects of other packages, under real
multi-controller JAX (two processes of 4 CPU devices on loopback): an object that keeps a
parameter tree keeps the arrays it is given, placement and all, and a restore into a
target's shardings gives arrays on them, so that a read back through the object does what
the array itself does (RSH301, RSH305, RSH306; tests/fixtures/library_objects.py).

flax, orbax and transformers are not installed here: the objects are stand-ins with the
behaviour the table states (a transformers model's ``params`` setter stores the tree it is
given; ``nnx.update`` puts the state's arrays into the module, ``nnx.state`` gives them
back; flax's ``TrainState.replace`` is ``dataclasses.replace``; orbax restores each
process's pieces of the target's sharding, as ``jax.make_array_from_callback`` does). The
placement itself is JAX's, which these runs observe.
"""

from __future__ import annotations

import pytest

from .harness import SnippetResult, run_batch

pytestmark = [pytest.mark.multicontroller, pytest.mark.xdist_group("multicontroller-test_library_objects")]

HEAD = """
import dataclasses
import jax, numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

class Model:  # a transformers Flax model: params keeps what it is given
    def __init__(self):
        self._params = {'w': np.ones(8, np.float32)}
    @property
    def params(self):
        return self._params
    @params.setter
    def params(self, tree):
        self._params = tree

class Module:  # an nnx module: update puts a state in, state gives it back
    def __init__(self):
        self.leaves = {'kernel': np.ones(8, np.float32)}

def state(module):
    return dict(module.leaves)

def update(module, new):
    module.leaves.update(new)

@dataclasses.dataclass(frozen=True)
class TrainState:  # flax's: a frozen dataclass, replaced
    params: object

def restore(target):  # orbax: each process reads its pieces of the target's sharding
    data = np.arange(8, dtype=np.float32)
    return jax.tree.map(lambda a: jax.make_array_from_callback(a.shape, a.sharding, lambda i: data[i]), target)

mesh = Mesh(np.array(jax.devices()), ('x',))
local_mesh = Mesh(np.array(jax.local_devices()), ('x',))
"""

CASES = {
    "params": """
model = Model()
model.params = jax.device_put(model.params, NamedSharding(mesh, P()))
print('kept', model.params['w'].sharding.mesh is mesh, model.params['w'].is_fully_addressable)
jax.device_put(model.params, jax.local_devices()[0])
""",
    "params_cpu": """
model = Model()
model.params = jax.device_put(model.params, NamedSharding(mesh, P()))
jax.device_put(model.params, jax.devices('cpu')[0])
""",
    "nnx_state": """
module = Module()
update(module, jax.device_put(state(module), NamedSharding(mesh, P())))
print('kept', state(module)['kernel'].is_fully_addressable)
jax.device_put(state(module), jax.local_devices()[0])
""",
    "train_state": """
ts = TrainState(params={'w': np.ones(8, np.float32)})
ts = dataclasses.replace(ts, params=jax.device_put(ts.params, NamedSharding(mesh, P('x'))))
jax.device_put(ts.params, jax.local_devices()[0])
""",
    "restore_put": """
abstract = {'w': jax.ShapeDtypeStruct((8,), np.float32, sharding=NamedSharding(mesh, P('x')))}
restored = restore(abstract)
print('placed', restored['w'].sharding == abstract['w'].sharding, restored['w'].is_fully_addressable)
jax.device_put(restored, jax.local_devices()[0])
""",
    "restore_read": """
abstract = {'w': jax.ShapeDtypeStruct((8,), np.float32, sharding=NamedSharding(mesh, P('x')))}
print(np.asarray(restore(abstract)['w']))
""",
    # RSH306: this process's own array, kept by the object, put on process 0's device
    "owned": """
model = Model()
model.params = jax.device_put(np.ones(8), jax.local_devices()[0])
y = jax.device_put(model.params, jax.devices()[0])
print('put', y.is_fully_addressable)
""",
    # the look-alikes the analysis leaves alone
    "local_mesh": """
model = Model()
model.params = jax.device_put(model.params, NamedSharding(local_mesh, P()))
abstract = {'w': jax.ShapeDtypeStruct((8,), np.float32, sharding=NamedSharding(local_mesh, P('x')))}
print('ok', jax.device_put(model.params, jax.local_devices()[0])['w'].is_fully_addressable,
      np.asarray(restore(abstract)['w']).tolist())
""",
    "guarded": """
model = Model()
model.params = jax.device_put(np.ones(8), jax.local_devices()[0])
if jax.process_index() == 0:
    print('ok', np.asarray(jax.device_put(model.params, jax.devices()[0])).tolist())
""",
}

NOT_ADDRESSABLE = "first argument must be a fully addressable array"


@pytest.fixture(scope="module")
def results() -> dict[str, SnippetResult]:
    names = list(CASES)
    outs = run_batch([HEAD + CASES[n] for n in names], processes=2, devices=4, timeout=90)
    return dict(zip(names, outs))


@pytest.mark.parametrize("case", ["params", "params_cpu", "nnx_state", "train_state", "restore_put"])
def test_a_global_tree_read_back_through_the_object_raises_on_every_process(
        results: dict[str, SnippetResult], case: str) -> None:
    res = results[case]
    for pid in (0, 1):
        p = res.process(pid)
        assert p.status == "error" and NOT_ADDRESSABLE in p.error_text, res.details()


@pytest.mark.parametrize("case,seen", [("params", "kept True False"), ("nnx_state", "kept False"),
                                       ("restore_put", "placed True False")])
def test_the_object_keeps_the_placement_it_was_given(results: dict[str, SnippetResult], case: str,
                                                     seen: str) -> None:
    res = results[case]
    for pid in (0, 1):
        assert seen in res.process(pid).stdout, res.details()


def test_a_restored_split_array_cannot_be_read(results: dict[str, SnippetResult]) -> None:
    res = results["restore_read"]
    for pid in (0, 1):
        p = res.process(pid)
        assert p.status == "error" and "Fetching value for `jax.Array` that spans non-addressable" in p.error_text, \
            res.details()


def test_a_kept_process_local_array_raises_on_the_other_process(results: dict[str, SnippetResult]) -> None:
    res = results["owned"]
    assert res.process(0).status == "ok" and "put True" in res.process(0).stdout, res.details()
    p1 = res.process(1)
    assert p1.status == "error" and "Cross-host transfers are not supported by this backend" in p1.error_text, \
        res.details()


@pytest.mark.parametrize("case", ["local_mesh", "guarded"])
def test_the_look_alikes_run(results: dict[str, SnippetResult], case: str) -> None:
    assert results[case].all_ok(), results[case].details()


def test_in_one_process_every_case_runs() -> None:
    # One process holding all 8 devices: every array is fully addressable (the one-process
    # look-alike, tests/fixtures/library_objects_one_process.py).
    names = list(CASES)
    outs = run_batch([HEAD + CASES[n] for n in names], mode="single", processes=2, devices=4, timeout=90)
    for name, res in zip(names, outs):
        assert res.all_ok(), (name, res.details())
