"""RSH201's examples of the analysis following an array and a mesh through Python itself:
comprehensions, loops, branches and handlers, classes and their attributes, lambdas,
containers, and names a program rebinds or changes in place. Each firing example moves
an array to another device set; each clean look-alike is such a program where Python's
semantics keep the move on one. They run with the rule's own under multi-controller JAX
(tests/multicontroller/test_grounding.py).
"""

from __future__ import annotations

from ..base import Example, Invalid, Valid

# What every RSH201 example starts from: an array on a mesh of every device.
HEAD = """\
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

mesh = Mesh(np.array(jax.devices()), ('x',))
x = jax.device_put(np.arange(8.0), NamedSharding(mesh, P('x')))
"""

FLOW_EXAMPLES: tuple[Example, ...] = (
    Invalid(HEAD + """
target = mesh
target = Mesh(np.array(jax.devices()[:4]), ('x',))
ys = [jax.device_put(x, NamedSharding(target, P('x'))) for _ in range(2)]  # RSH201:7
""", note="a list comprehension runs where it stands: a name bound twice before it has its current value"),
    Valid(HEAD + """
target = Mesh(np.array(jax.devices()[:4]), ('x',))
later = (jax.device_put(x, NamedSharding(target, P('x'))) for _ in range(2))
target = mesh
ys = list(later)
print(ys[0].sharding)
""", note="a generator runs when consumed, after the name is bound again: silent, as for a nested function"),
    Invalid(HEAD + """
half = Mesh(np.array(jax.devices()[:4]), ('x',))
for name, a in [('w', x), ('b', x * 2)]:
    moved = jax.device_put(a, NamedSharding(half, P('x')))  # RSH201:13
""", note="a loop's tuple target takes the position of every element where one value stands for all"),
    Valid(HEAD + """
half = Mesh(np.array(jax.devices()[:4]), ('x',))
for name, a in [('w', np.ones(8)), ('b', np.arange(8.0))]:
    moved = jax.device_put(a, NamedSharding(half, P('x')))
print(moved.sharding)
""", note="NumPy data in every element: host data, moved anywhere"),
    Invalid(HEAD + """
if len(jax.devices()) < 8:
    raise SystemExit('needs eight devices')
else:
    half = Mesh(np.array(jax.devices()[:4]), ('x',))
y = jax.device_put(x, NamedSharding(half, P('x')))  # RSH201:5
""", note="a branch that raises does not reach the code after it: only the other binding does"),
    Invalid(HEAD + """
try:
    half = Mesh(np.array(jax.devices()[:4]), ('x',))
except IndexError as exc:
    raise RuntimeError('too few devices') from exc
y = jax.device_put(x, NamedSharding(half, P('x')))  # RSH201:5
""", note="an except clause that raises again leaves the try body's binding"),
    Valid(HEAD + """
target = Mesh(np.array(jax.devices()[:4]), ('x',))
if len(jax.devices()) >= 8:
    target = mesh
    print('the whole mesh')
y = jax.device_put(x, NamedSharding(target, P('x')))
print(y.sharding)
""", note="a branch that goes on joins its binding: two meshes, not known which, silent"),
    Invalid(HEAD + """
@jax.jit
def update(p):
    return p * 0.9


half = Mesh(np.array(jax.devices()[:4]), ('x',))
params = x
for _ in range(3):
    params = update(params)
y = jax.device_put(params, NamedSharding(half, P('x')))  # RSH201:5
""", note="a name a loop rebinds keeps the mesh every iteration leaves it on (trained weights synced to a rollout mesh)"),
    Invalid(HEAD + """
@jax.jit
def update(p):
    return p * 0.9


half = Mesh(np.array(jax.devices()[:4]), ('x',))
params, step = x, 0
while True:
    params = update(params)
    step += 1
    if step % 2 == 0:
        synced = jax.device_put(params, NamedSharding(half, P('x')))  # RSH201:18
    if step >= 4:
        break
""", note="a break leaves the loop and feeds no iteration: inside the loop the weights are still on their mesh"),
    Invalid(HEAD + """
class Trainer:
    def __init__(self):
        self.params = jax.device_put(np.ones(8), NamedSharding(mesh, P('x')))


half = Mesh(np.array(jax.devices()[:4]), ('x',))
trainer = Trainer()
y = jax.device_put(trainer.params, NamedSharding(half, P('x')))  # RSH201:5
""", note="an __init__ that takes nothing but self runs where the class is constructed"),
    Valid(HEAD + """
class Trainer:
    def __init__(self, target):
        self.params = jax.device_put(np.ones(8), NamedSharding(target, P('x')))


half = Mesh(np.array(jax.devices()[:4]), ('x',))
trainer = Trainer(half)
y = jax.device_put(trainer.params, NamedSharding(half, P('x')))
print(y.sharding)
""", note="with parameters it runs once its calls are seen, after the module: unknown here, silent"),
    Valid(HEAD + """
half = Mesh(np.array(jax.devices()[:4]), ('x',))
params = x
for step in range(3):
    params = jax.device_put(np.ones(8) * step, NamedSharding(half, P('x')))
y = jax.device_put(params, NamedSharding(half, P('x')))
print(y.sharding)
""", note="an iteration moves it to another mesh: after the loop either, not known which, silent"),
    Invalid(HEAD + """
half = Mesh(np.array(jax.devices()[:4]), ('x',))
y = jax.device_put(x + x.shape[0], NamedSharding(half, P('x')))  # RSH201:5
""", note="an array's shape is Python ints: adding one keeps the array on its devices"),
    Valid(HEAD + """
import jax.numpy as jnp
half = Mesh(np.array(jax.devices()[:4]), ('x',))
sizes = jax.device_put(jnp.array([x.shape[0], x.ndim, len(x)]), NamedSharding(half, P()))
steps = [jax.device_put(jnp.int32(i), NamedSharding(half, P())) for i in range(len(x))]
print(sizes.sharding, steps[0].sharding)
""", note="shapes, lengths and the ints of a range are host data: moved anywhere"),
    Invalid(HEAD + """
half = Mesh(np.array(jax.devices()[:4]), ('x',))
to_half = lambda a: jax.device_put(a, NamedSharding(half, P('x')))  # RSH201:21
y = to_half(x)
""", note="a lambda bound to a name runs with what its calls pass, as a def does"),
    Valid(HEAD + """
half = Mesh(np.array(jax.devices()[:4]), ('x',))
to_half = lambda a, s=NamedSharding(half, P('x')): jax.device_put(a, s)
y = to_half(np.arange(8.0))
print(y.sharding)
""", note="host data moves anywhere; a default is evaluated where the lambda is written"),
    Invalid(HEAD + """
half = Mesh(np.array(jax.devices()[:4]), ('x',))
params = {'w': x, 'b': jax.device_put(np.zeros(8), NamedSharding(mesh, P()))}
synced = {k: jax.device_put(v, NamedSharding(half, P())) for k, v in params.items()}  # RSH201:14
""", note="a dict comprehension runs where it stands; arrays on one mesh stand for each element"),
    Valid(HEAD + """
half = Mesh(np.array(jax.devices()[:4]), ('x',))
params = {'w': x}
params['w'] = jax.device_put(np.ones(8), NamedSharding(half, P('x')))
synced = {k: jax.device_put(v, NamedSharding(half, P())) for k, v in params.items()}
print(synced['w'].sharding)
""", note="a dict changed after it was built: what it held before is not read as what it holds"),
    Invalid(HEAD + """
half = Mesh(np.array(jax.devices()[:4]), ('x',))
layers = [x, x * 2]
for i, w in enumerate(layers):
    jax.device_put(w, NamedSharding(half, P('x')))  # RSH201:5
""", note="enumerate, zip and map hand out the elements of a known list"),
    Valid(HEAD + """
half = Mesh(np.array(jax.devices()[:4]), ('x',))
moved = list(map(lambda a: jax.device_put(a, NamedSharding(half, P('x'))), [np.ones(8), np.zeros(8)]))
print(moved[0].sharding)
""", note="host data mapped onto any mesh"),
    Valid(HEAD + """
half = Mesh(np.array(jax.devices()[:4]), ('x',))
y = jax.device_put(np.ones(8), NamedSharding(half, P('x')))


def use_half():
    global mesh
    mesh = half


use_half()
z = jax.device_put(y, NamedSharding(mesh, P('x')))
print(z.sharding)
""", note="a function rebinds the module's mesh (global): the first binding is not what it holds"),
    Valid(HEAD + """
half = Mesh(np.array(jax.devices()[:4]), ('x',))


class Config:
    mesh = mesh


Config.mesh = half
y = jax.device_put(np.ones(8), NamedSharding(half, P('x')))
z = jax.device_put(y, NamedSharding(Config.mesh, P('x')))
print(z.sharding)
""", note="a class attribute assigned from outside the class"),
    Valid(HEAD + """
half = Mesh(np.array(jax.devices()[:4]), ('x',))


class Syncer:
    def __init__(self):
        self.mesh = mesh

    def put(self, a):
        return jax.device_put(a, NamedSharding(self.mesh, P('x')))


s = Syncer()
print(s.put(x).sharding)
s.mesh = half
""", note="an attribute the caller changes after the method ran: not what that call saw"),
    Valid(HEAD + """
half = Mesh(np.array(jax.devices()[:4]), ('x',))


class Config:
    mesh = mesh


setattr(Config, 'mesh', half)
y = jax.device_put(np.ones(8), NamedSharding(half, P('x')))
print(jax.device_put(y, NamedSharding(Config.mesh, P('x'))).sharding)
""", note="setattr assigns the attribute as 'Config.mesh = half' does"),
    Valid(HEAD + """
half = Mesh(np.array(jax.devices()[:4]), ('x',))


class Trainer:
    def __init__(self, **overrides):
        self.mesh = mesh
        for name, value in overrides.items():
            setattr(self, name, value)

    def put(self, a):
        return jax.device_put(a, NamedSharding(self.mesh, P('x')))


y = jax.device_put(np.ones(8), NamedSharding(half, P('x')))
print(Trainer(mesh=half).put(y).sharding)
""", note="setattr with a name the analysis cannot read may set any attribute"),
    Valid(HEAD + """
import dataclasses
half = Mesh(np.array(jax.devices()[:4]), ('x',))


@dataclasses.dataclass
class Config:
    target: Mesh

    def put(self, a):
        return jax.device_put(a, NamedSharding(self.target, P('x')))


config = Config(mesh)
config.target = half
y = jax.device_put(np.ones(8), NamedSharding(half, P('x')))
print(config.put(y).sharding)
""", note="a dataclass field assigned after construction: not what the constructor passed"),
    Invalid(HEAD + """
evens = Mesh(np.array([d for d in jax.devices() if d.id % 2 == 0]), ('x',))
y = jax.device_put(x, NamedSharding(evens, P('x')))  # RSH201:5
""", note="a filter by device id: half the devices on TPU and GPU, whose ids run 0 ... N-1; on CPU with one "
          "device per process every id is even (0, 2048, ...), so there the message says 'not certain'"),
    Valid(HEAD + """
everyone = Mesh(np.array([d for d in jax.devices() if d.id >= 0]), ('x',))
y = jax.device_put(x, NamedSharding(everyone, P('x')))
print(y.sharding)
""", note="a filter by id that keeps every device, on every platform"),
)
