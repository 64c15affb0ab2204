"""A seeded generator of multi-module JAX projects, composed from idioms of real code.

Each project is a package (config, meshes, trainer, evaluator, sync, jitted helpers)
and a ``main.py`` that wires it up. The idioms: mesh factories with ``devices=None``
defaults and ``is None`` checks, config modules and frozen dataclasses holding device
ranges, counts and shapes, trainer and evaluator classes in separate modules,
properties, registries filled by decorators, tuple and dict returns, ``**kwargs``,
``jax.tree.map`` syncs, jitted helpers with ``out_shardings`` in another module,
``set_mesh`` helpers, role splits by ranges, ids used as positions, star re-exports.
Every choice that makes a move cross (another range, a reversed list) has a clean
look-alike (the same range spelled another way, the trainer's own mesh, the array's
own sharding), picked by the seed.

Every project runs on 8 CPU devices in one process: the moves between device sets it
makes raise only under multi-controller JAX, and the oracle reads those from the
placements. Nothing here says what the analysis should answer: the runs do.

Seeds: DEV_START.. is the development range; HELDOUT_START.. is held out (not looked at
while developing the analysis or this oracle; reported separately).
"""

from __future__ import annotations

import random
from pathlib import Path
from textwrap import dedent

DEV_START = 0
HELDOUT_START = 1_000_000
PKG_NAMES = ("app", "lab", "fleet", "rl", "core", "stack")


class Spec:
    """The random choices for one project."""

    def __init__(self, seed: int) -> None:
        r = self.r = random.Random(seed)
        self.seed = seed
        self.pkg = r.choice(PKG_NAMES)
        self.config_style = r.choice(["dataclass", "constants", "counts", "literal", "literal"])
        self.mesh_style = r.choice(["factory", "registry", "tuple", "dict"])
        self.sync_style = r.choice(["tree_map", "pytree", "kwargs", "own_mesh", "loop", "to_device"])
        self.star = r.random() < 0.4
        self.context = r.random() < 0.35
        self.jitted = r.random() < 0.6
        self.ids = r.random() < 0.3  # devices picked by ids used as positions
        self.property = r.random() < 0.6
        self.returns = r.choice(["dict", "tuple"])
        self.evaluator_from_trainer = r.random() < 0.15  # the clean look-alike: one mesh object
        self.axis = r.choice(["x", "data", "batch"])
        self.spec_sharded = r.random() < 0.6
        size = r.choice([2, 4, 8])
        start = r.choice(range(0, 8, size))
        self.train = (start, start + size) if r.random() < 0.5 else (0, 8)
        rel = r.choice(["same", "same", "other", "overlap", "reversed", "sub"])
        self.relation = rel
        t0, t1 = self.train
        n = t1 - t0
        if rel == "same":
            self.rollout = self.train
        elif rel == "reversed":
            self.rollout = self.train
        elif rel == "sub" and n > 1:
            self.rollout = (t0, t0 + n // 2)
        elif rel == "overlap" and n < 8:
            self.rollout = ((t0 + n // 2) % 8, (t0 + n // 2) % 8 + n) if (t0 + n // 2) + n <= 8 else (0, n)
        else:
            m = r.choice([2, 4]) if n == 8 else n
            starts = [s for s in range(0, 8, m) if (s, s + m) != (t0, t1)]
            s = r.choice(starts)
            self.rollout = (s, s + m)
        self.reverse = rel == "reversed"
        self.builder = r.choice(["Mesh", "Mesh", "make_mesh", "mesh_utils"])
        self.direct = r.random() < 0.6  # moves written in main.py on module-level meshes
        self.constants = r.random() < 0.6  # TRAIN / ROLLOUT built once in meshes.py
        self.constants_style = r.choice(["call", "inline", "inline"])
        self.constants_import = r.choice(["attr", "from", "star"])
        self.direct_target = r.choice(["rollout", "rollout", "own_sharding", "own_mesh", "train_alias"])
        self.to_device = r.random() < 0.3
        self.default_mesh = r.random() < 0.4  # place(x, mesh=None) -> the train mesh
        self.jit_host = r.random() < 0.4  # a jitted helper with out_shardings called with host data
        self.constrain = r.random() < 0.3  # a jitted constraint on the trainer's own mesh
        # idioms written in main.py on the two meshes: each crossing (True) or its clean
        # look-alike (False)
        names = sorted(IDIOMS)
        self.idioms = [(k, r.random() < 0.5) for k in r.sample(names, r.choice([0, 1, 2, 3, 4]))]
        # device-list transforms written in main.py: identities in disguise, reorderings
        # and subsets of jax.devices()
        self.transforms = r.sample(TRANSFORMS, r.choice([0, 0, 1, 2, 3]))
        # values computed from an array on the train mesh, moved on (committed or not:
        # the run says)
        self.derived = [(e, r.random() < 0.5) for e in r.sample(DERIVED, r.choice([0, 1, 2, 3]))]


def _config(s: Spec) -> str:
    (t0, t1), (r0, r1) = s.train, s.rollout
    if s.config_style == "dataclass":
        return dedent(f'''\
            import dataclasses


            @dataclasses.dataclass(frozen=True)
            class MeshConfig:
                train_start: int = {t0}
                train_stop: int = {t1}
                rollout_start: int = {r0}
                rollout_stop: int = {r1}
                axis: str = {s.axis!r}
                reverse_rollout: bool = {s.reverse}
                shape: tuple = (8, 2)


            CONFIG = MeshConfig()
            ''')
    if s.config_style == "literal":
        return dedent(f'''\
            AXIS = {s.axis!r}
            REVERSE_ROLLOUT = {s.reverse}
            SHAPE = (8, 2)
            ''')
    if s.config_style == "constants":
        return dedent(f'''\
            TRAIN_DEVICES = range({t0}, {t1})
            ROLLOUT_DEVICES = range({r0}, {r1})
            AXIS = {s.axis!r}
            REVERSE_ROLLOUT = {s.reverse}
            SHAPE = (8, 2)
            ''')
    return dedent(f'''\
        NUM_TRAIN = {t1 - t0}
        TRAIN_OFFSET = {t0}
        NUM_ROLLOUT = {r1 - r0}
        ROLLOUT_OFFSET = {r0}
        AXIS = {s.axis!r}
        REVERSE_ROLLOUT = {s.reverse}
        SHAPE = (8, 2)
        ''')


def _ranges(s: Spec) -> tuple[str, str, str, str, str]:
    """Expressions (in meshes.py) for the train range, the rollout range, the axis, the
    reverse flag, and the import line."""
    if s.config_style == "dataclass":
        return ("(CONFIG.train_start, CONFIG.train_stop)", "(CONFIG.rollout_start, CONFIG.rollout_stop)",
                "CONFIG.axis", "CONFIG.reverse_rollout", "from .config import CONFIG")
    if s.config_style == "literal":
        (t0, t1), (r0, r1) = s.train, s.rollout
        return (f"({t0}, {t1})", f"({r0}, {r1})", "AXIS", "REVERSE_ROLLOUT",
                "from .config import AXIS, REVERSE_ROLLOUT")
    if s.config_style == "constants":
        return ("(TRAIN_DEVICES.start, TRAIN_DEVICES.stop)", "(ROLLOUT_DEVICES.start, ROLLOUT_DEVICES.stop)",
                "AXIS", "REVERSE_ROLLOUT", "from .config import AXIS, REVERSE_ROLLOUT, ROLLOUT_DEVICES, TRAIN_DEVICES")
    return ("(TRAIN_OFFSET, TRAIN_OFFSET + NUM_TRAIN)", "(ROLLOUT_OFFSET, ROLLOUT_OFFSET + NUM_ROLLOUT)",
            "AXIS", "REVERSE_ROLLOUT",
            "from .config import AXIS, NUM_ROLLOUT, NUM_TRAIN, REVERSE_ROLLOUT, ROLLOUT_OFFSET, TRAIN_OFFSET")


def _meshes(s: Spec) -> str:
    train, rollout, axis, rev, imp = _ranges(s)
    if s.ids:
        pick = dedent('''\
            def devices_in(bounds):
                ids = list(range(*bounds))
                everything = jax.devices()
                return [everything[i] for i in ids]
            ''')
    else:
        pick = dedent('''\
            def devices_in(bounds):
                start, stop = bounds
                return jax.devices()[start:stop]
            ''')
    head = dedent(f'''\
        import contextlib

        import jax
        import numpy as np
        from jax.sharding import Mesh

        {imp}

        __all__ = ["new_mesh", "train_mesh", "rollout_mesh", "using", "MESHES", "build_meshes"]


        def new_mesh(devices=None, axes=None):
            if devices is None:
                devices = jax.devices()
            if axes is None:
                axes = ({axis},)
            return {{BUILD}}


        ''') + pick + dedent(f'''\


        def rollout_devices():
            devices = devices_in({rollout})
            if {rev}:
                devices = devices[::-1]
            return devices


        @contextlib.contextmanager
        def using(mesh):
            with jax.set_mesh(mesh):
                yield mesh


        MESHES = {{}}


        def register(name):
            def decorate(fn):
                MESHES[name] = fn
                return fn
            return decorate


        ''')
    if s.mesh_style in ("factory", "registry"):
        body = dedent(f'''\
            @register("train")
            def train_mesh():
                return new_mesh(devices_in({train}))


            @register("rollout")
            def rollout_mesh():
                return new_mesh(rollout_devices())


            def build_meshes():
                return train_mesh(), rollout_mesh()
            ''')
    elif s.mesh_style == "tuple":
        body = dedent(f'''\
            def build_meshes(train_bounds={train}):
                train = new_mesh(devices_in(train_bounds))
                rollout = new_mesh(rollout_devices())
                return train, rollout


            def train_mesh():
                return build_meshes()[0]


            def rollout_mesh():
                return build_meshes()[1]
            ''')
    else:
        body = dedent(f'''\
            def build_meshes(**overrides):
                meshes = {{"train": new_mesh(devices_in({train})), "rollout": new_mesh(rollout_devices())}}
                meshes.update(overrides)
                return meshes


            def train_mesh():
                return build_meshes()["train"]


            def rollout_mesh():
                return build_meshes()["rollout"]
            ''')
    build = {"Mesh": "Mesh(np.array(devices), axes)",
             "make_mesh": "jax.make_mesh((len(devices),), axes, devices=devices)",
             "mesh_utils": "Mesh(mesh_utils.create_device_mesh((len(devices),), devices=devices), axes)"}[s.builder]
    head = head.replace("{BUILD}", build)
    if s.builder == "mesh_utils":
        head = head.replace("import numpy as np\n", "import numpy as np\nfrom jax.experimental import mesh_utils\n", 1)
    tail = ""
    if s.constants and s.constants_style == "call":
        tail = dedent('''\


            TRAIN = train_mesh()
            ROLLOUT = rollout_mesh()
            ''')
    elif s.constants:
        tsl, rsl = (x.strip("()").replace(", ", ":", 1) for x in (train, rollout))
        order = "[::-1]" if s.reverse else ""
        tail = dedent(f'''\


            TRAIN = Mesh(np.array(jax.devices()[{tsl}]), ({axis},))
            ROLLOUT = Mesh(np.array(jax.devices()[{rsl}]{order}), ({axis},))
            ''')
    if s.constants:
        head = head.replace('"build_meshes"]', '"build_meshes", "TRAIN", "ROLLOUT"]')
    if s.default_mesh:
        tail += dedent('''\


            def place(value, mesh=None, spec=None):
                if mesh is None:
                    mesh = train_mesh()
                from jax.sharding import NamedSharding, PartitionSpec
                return jax.device_put(value, NamedSharding(mesh, spec if spec is not None else PartitionSpec()))
            ''')
        head = head.replace('"build_meshes"', '"build_meshes", "place"', 1)
    return head + body + tail


def _trainer(s: Spec) -> str:
    sharding = dedent('''\
        @property
        def sharding(self):
            return NamedSharding(self.mesh, P(self.axis))
        ''') if s.property else dedent('''\
        def sharding_for(self, axis=None):
            return NamedSharding(self.mesh, P(axis or self.axis))
        ''')
    get = "self.sharding" if s.property else "self.sharding_for()"
    ret = ('return {"w": w, "b": b}' if s.returns == "dict" else "return w, b")
    step = ""
    if s.jitted:
        step = dedent('''\

            def step(self, params):
                fn = make_step(self.mesh, self.axis)
                return fn(params)
            ''')
    return dedent(f'''\
        import jax
        import numpy as np
        from jax.sharding import NamedSharding, PartitionSpec as P

        from .jitted import make_step


        class Trainer:
            def __init__(self, mesh, axis="{s.axis}"):
                self.mesh = mesh
                self.axis = axis

        ''') + _indent(sharding) + "\n" + _indent(dedent(f'''\
        def init_params(self):
            w = jax.device_put(np.arange(16.0).reshape(8, 2), {get})
            b = jax.device_put(np.zeros(8), {get})
            {ret}
        ''')) + _indent(step)


def _indent(text: str) -> str:
    return "".join("    " + line if line.strip() else line for line in text.splitlines(True))


def _jitted(s: Spec) -> str:
    return dedent('''\
        import jax
        from jax.sharding import NamedSharding, PartitionSpec as P


        def make_step(mesh, axis):
            return jax.jit(lambda tree: jax.tree.map(lambda a: a * 2.0, tree),
                           out_shardings=NamedSharding(mesh, P(axis)))


        def make_constrained(mesh):
            @jax.jit
            def constrained(a):
                return jax.lax.with_sharding_constraint(a + 1.0, NamedSharding(mesh, P()))
            return constrained
        ''')


def _evaluator(s: Spec) -> str:
    spec = f"P({s.axis!r})" if s.spec_sharded else "P()"
    return dedent(f'''\
        from jax.sharding import NamedSharding, PartitionSpec as P


        class Evaluator:
            def __init__(self, mesh):
                self.mesh = mesh

            def target(self, spec=None):
                if spec is None:
                    spec = {spec}
                return NamedSharding(self.mesh, spec)
        ''')


def _sync(s: Spec) -> str:
    style = s.sync_style
    if style == "tree_map":
        body = '''\
def sync(params, target):
    return jax.tree.map(lambda a: jax.device_put(a, target), params)
'''
    elif style == "pytree":
        body = '''\
def sync(params, target):
    return jax.device_put(params, target)
'''
    elif style == "kwargs":
        body = '''\
def place(value, **kwargs):
    return jax.device_put(value, kwargs["sharding"])


def sync(params, target):
    if isinstance(params, dict):
        return {k: place(v, sharding=target) for k, v in params.items()}
    return tuple(place(v, sharding=target) for v in params)
'''
    elif style == "to_device":
        body = '''\
def sync(params, target):
    return jax.tree.map(lambda a: a.to_device(target), params)
'''
    elif style == "own_mesh":
        body = '''\
def sync(params, target):
    # the clean look-alike: each leaf stays on its own mesh, with the target's spec
    return jax.tree.map(lambda a: jax.device_put(a, NamedSharding(a.sharding.mesh, target.spec)), params)
'''
    else:
        body = '''\
def sync(params, target):
    out = {} if isinstance(params, dict) else []
    items = params.items() if isinstance(params, dict) else enumerate(params)
    for key, value in items:
        moved = jax.device_put(value, target)
        if isinstance(out, dict):
            out[key] = moved
        else:
            out.append(moved)
    return out
'''
    return "import jax\nfrom jax.sharding import NamedSharding\n\n\n" + body


def _init(s: Spec) -> str:
    if s.star:
        return "from .meshes import *\n"
    return "from .meshes import build_meshes, new_mesh, rollout_mesh, train_mesh\n"


def _idiom(kind: str, cross: bool, i: int, ax: str, tr: str = "train", ro: str = "rollout") -> list[str]:
    """One idiom on the meshes named ``tr`` and ``ro`` (``cross``: the move goes to ``ro``)."""
    other = ro if cross else tr
    a = f"a{i} = jax.device_put(np.arange(16.0).reshape(8, 2), NamedSharding({tr}, P({ax})))"
    if kind == "class_attr":
        return [f"class Roles{i}:", f"    source = {tr}", f"    target = {other}", "",
                f"a{i} = jax.device_put(np.ones((8, 2)), NamedSharding(Roles{i}.source, P({ax})))",
                f"b{i} = jax.device_put(a{i}, NamedSharding(Roles{i}.target, P({ax})))"]
    if kind == "partial":
        return ["import functools", f"put{i} = functools.partial(jax.device_put, device=NamedSharding({other}, P()))",
                a, f"b{i} = put{i}(a{i})"]
    if kind == "branch":
        return [f"colocated{i} = {not cross}", f"if colocated{i}:", f"    target{i} = {tr}", "else:",
                f"    target{i} = {ro}", a, f"b{i} = jax.device_put(a{i}, NamedSharding(target{i}, P({ax})))"]
    if kind == "loop_dict":
        return [f"meshes{i} = {{}}", f'for role, m in (("train", {tr}), ("rollout", {ro})):',
                f"    meshes{i}[role] = m", a,
                f"b{i} = jax.device_put(a{i}, NamedSharding(meshes{i}[{('rollout' if cross else 'train')!r}], P({ax})))"]
    if kind == "mesh_devices":
        devs = f"{tr}.devices[::-1]" if cross else f"{tr}.devices"
        return [f"again{i} = Mesh({devs}, {tr}.axis_names)", a,
                f"b{i} = jax.device_put(a{i}, NamedSharding(again{i}, P({ax})))"]
    if kind == "tree_targets":
        return [f"tree{i} = {{'w': jax.device_put(np.ones((8, 2)), NamedSharding({tr}, P({ax}))), "
                f"'b': jax.device_put(np.zeros(8), NamedSharding({tr}, P()))}}",
                f"targets{i} = {{'w': NamedSharding({other}, P({ax})), 'b': NamedSharding({other}, P())}}",
                f"out{i} = jax.tree.map(lambda a, s: jax.device_put(a, s), tree{i}, targets{i})"]
    if kind == "pytree_targets":
        return [f"tree{i} = {{'w': jax.device_put(np.ones((8, 2)), NamedSharding({tr}, P({ax}))), "
                f"'b': jax.device_put(np.zeros(8), NamedSharding({tr}, P()))}}",
                f"targets{i} = {{'w': NamedSharding({other}, P({ax})), 'b': NamedSharding({tr}, P())}}",
                f"out{i} = jax.device_put(tree{i}, targets{i})"]
    if kind == "own_mesh":
        target = f"NamedSharding({ro}, P({ax}))" if cross else f"NamedSharding(a{i}.sharding.mesh, P())"
        return [a, f"b{i} = jax.device_put(a{i}, {target})"]
    if kind == "default_param":
        return [f"def to_role{i}(x, mesh={other}):", "    return jax.device_put(x, NamedSharding(mesh, P()))", "",
                a, f"b{i} = to_role{i}(a{i})"]
    if kind == "loop_rebind":
        return [f"cur{i} = jax.device_put(np.ones(8), NamedSharding({tr}, P({ax})))",
                f"for m{i} in ({tr}, {other}):",
                f"    cur{i} = jax.device_put(cur{i}, NamedSharding(m{i}, P({ax})))"]
    raise ValueError(kind)


TRANSFORMS = (
    # the same list
    "d[::-1][::-1]", "list(reversed(list(reversed(d))))", "d[:4] + d[4:]", "list(np.roll(np.array(d), 8))",
    "list(np.array(d).reshape(2, 4).T.T.reshape(-1))", "sorted(d, key=lambda dev: dev.id)", "[dev for dev in d]",
    "list(np.flip(np.flip(np.array(d))))", "d[0:8]", "list(tuple(d))", "list(np.array(d).reshape(4, 2).ravel())",
    # another order
    "d[::-1]", "d[4:] + d[:4]", "list(np.roll(np.array(d), 3))", "list(np.array(d).reshape(2, 4).T.reshape(-1))",
    "sorted(d, key=lambda dev: -dev.id)", "list(np.flip(np.array(d)))",
    "[d[i] for i in np.random.RandomState(0).permutation(8)]",
    # another set
    "d[:4]", "d[::2]", "[dev for dev in d if dev.id % 2 == 0]", "d[2:6]",
)


# (a[::2] and jax.grad raise on a jax.make_mesh mesh, whose axes are Explicit, outside
# jax.set_mesh: not in the list, so that every project runs)
DERIVED = (
    "jnp.zeros_like(a)", "a.copy()", "jnp.array(a)", "jnp.asarray(a)", "a.astype(jnp.float16)", "jax.nn.relu(a)",
    "a.T", "a[:, 0]", "jnp.concatenate([a, a])", "jax.device_put(a)", "jnp.ones_like(a)",
    "jax.random.normal(jax.random.key(0), a.shape)", "jnp.full_like(a, 1.0)", "jax.lax.stop_gradient(a)",
    "jnp.asarray(np.asarray(a))", "jax.tree.map(lambda v: v * 2, a)", "jax.jit(lambda v: v + 1)(a)",
    "jax.vmap(lambda v: v * 2)(a)", "a + np.ones((8, 2))",
    "jnp.where(np.ones((8, 2)) > 0, a, 0.0)", "a.reshape(16)", "jnp.sum(a, axis=0)", "a @ np.ones((2, 2))",
    "jnp.zeros((8, 2)) + 1", "jnp.arange(16.0).reshape(8, 2) * a", "jax.numpy.linalg.norm(a)",
)


def _derived(expr: str, cross: bool, i: int, ax: str, tr: str, ro: str) -> list[str]:
    return [f"a = jax.device_put(np.arange(16.0).reshape(8, 2), NamedSharding({tr}, P({ax})))",
            f"v_d{i} = {expr}",
            f"b_d{i} = jax.device_put(v_d{i}, NamedSharding({ro if cross else tr}, P()))"]


def _transform(expr: str, i: int, ax: str) -> list[str]:
    return [f"d = jax.devices()",
            f"devs_t{i} = {expr}",
            f"mesh_t{i} = Mesh(np.array(devs_t{i}), ({ax},))",
            f"src_t{i} = jax.device_put(np.arange(8.0), NamedSharding(Mesh(np.array(jax.devices()), ({ax},)), P({ax})))",
            f"dst_t{i} = jax.device_put(src_t{i}, NamedSharding(mesh_t{i}, P({ax})))"]


IDIOMS = ("class_attr", "partial", "branch", "loop_dict", "mesh_devices", "tree_targets", "pytree_targets",
          "own_mesh", "default_param", "loop_rebind")


def _main(s: Spec) -> str:
    pkg = s.pkg
    if s.mesh_style == "registry":
        get = f"from {pkg}.meshes import MESHES\ntrain = MESHES['train']()\nrollout = MESHES['rollout']()\n"
    elif s.mesh_style == "tuple":
        get = f"from {pkg}.meshes import build_meshes\ntrain, rollout = build_meshes()\n"
    elif s.mesh_style == "dict":
        get = f"from {pkg}.meshes import build_meshes\nmeshes = build_meshes()\ntrain, rollout = meshes['train'], meshes['rollout']\n"
    elif s.star:
        get = f"from {pkg} import rollout_mesh, train_mesh\ntrain = train_mesh()\nrollout = rollout_mesh()\n"
    else:
        get = f"from {pkg}.meshes import rollout_mesh, train_mesh\ntrain = train_mesh()\nrollout = rollout_mesh()\n"
    lines = [
        "import jax",
        "import numpy as np",
        "from jax.sharding import PartitionSpec as P",
        "",
        f"from {pkg}.evaluator import Evaluator",
        f"from {pkg}.meshes import using",
        f"from {pkg}.sync import sync",
        f"from {pkg}.trainer import Trainer",
        get,
        "trainer = Trainer(train)",
        "params = trainer.init_params()",
    ]
    if s.jitted:
        lines.append("params = trainer.step(params)")
    lines.append("evaluator = Evaluator(trainer.mesh)" if s.evaluator_from_trainer else "evaluator = Evaluator(rollout)")
    lines.append("synced = sync(params, evaluator.target())")
    first = "params['b']" if s.returns == "dict" else "params[1]"
    if s.context:
        lines += ["with using(evaluator.mesh):",
                  f"    bias = jax.device_put({first}, P())"]
    axis = repr(s.axis)
    if s.direct:
        tr, ro = ("train", "rollout")
        if s.constants and s.constants_import == "attr":
            tr, ro = (f"{pkg}.meshes.TRAIN", f"{pkg}.meshes.ROLLOUT")
            lines.insert(0, f"import {pkg}.meshes")
        elif s.constants and s.constants_import == "star" and s.star:
            tr, ro = "TRAIN", "ROLLOUT"
            lines.insert(0, f"from {pkg} import *")
        elif s.constants:
            tr, ro = "TRAIN", "ROLLOUT"
            lines.insert(0, f"from {pkg}.meshes import ROLLOUT, TRAIN")
        lines.insert(2, "from jax.sharding import NamedSharding")
        spec = f"P({axis})" if s.spec_sharded else "P()"
        lines += [f"w = jax.device_put(np.ones((8, 2)), NamedSharding({tr}, P({axis})))"]
        target = {"rollout": f"NamedSharding({ro}, {spec})",
                  "own_sharding": "w.sharding",
                  "own_mesh": f"NamedSharding(w.sharding.mesh, {spec})",
                  "train_alias": f"NamedSharding(trainer.mesh, {spec})"}[s.direct_target]
        lines += [f"moved = jax.device_put(w, {target})"]
    if s.default_mesh:
        lines += [f"from {pkg}.meshes import place",
                  "placed = place(np.arange(8.0))",
                  f"again = place(placed, rollout)" if s.relation != "same" else "again = place(placed)"]
    if s.jit_host:
        lines += [f"from {pkg}.jitted import make_step",
                  f"fresh = make_step(rollout, {axis})(np.ones(8))"]
    if s.constrain:
        lines += [f"from {pkg}.jitted import make_constrained",
                  "tight = make_constrained(trainer.mesh)(" + first + ")"]
    if s.idioms:
        lines.insert(2, "from jax.sharding import Mesh, NamedSharding")
        for i, (kind, cross) in enumerate(s.idioms):
            names = (tr, ro) if s.direct else ("train", "rollout")
            lines += [""] + _idiom(kind, cross, i, axis, *names) + [""]
    if s.derived:
        lines.insert(2, "import jax.numpy as jnp")
        lines.insert(2, "from jax.sharding import NamedSharding")
        names = (tr, ro) if s.direct else ("train", "rollout")
        for i, (expr, cross) in enumerate(s.derived):
            lines += [""] + _derived(expr, cross, i, axis, *names)
    if s.transforms:
        if not s.idioms:
            lines.insert(2, "from jax.sharding import Mesh, NamedSharding")
        for i, expr in enumerate(s.transforms):
            lines += [""] + _transform(expr, i, axis)
    lines += ["leaves = jax.tree.leaves(synced)",
              "print(sum(float(np.asarray(a).sum()) for a in leaves))"]
    return "\n".join(lines) + "\n"


def generate(seed: int) -> dict[str, str]:
    """{relative path: text} of the project for ``seed``."""
    s = Spec(seed)
    p = s.pkg
    return {
        "pyproject.toml": f"[project]\nname = 'gen{seed}'\nversion = '0'\n",
        f"{p}/__init__.py": _init(s),
        f"{p}/config.py": _config(s),
        f"{p}/meshes.py": _meshes(s),
        f"{p}/trainer.py": _trainer(s),
        f"{p}/jitted.py": _jitted(s),
        f"{p}/evaluator.py": _evaluator(s),
        f"{p}/sync.py": _sync(s),
        "main.py": _main(s),
    }


def write(seed: int, root: Path) -> Path:
    d = root / str(seed)
    for rel, text in generate(seed).items():
        f = d / rel
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(text)
    return d


def corpus(root: Path, seeds: range):
    """The oracle corpus of the projects of ``seeds`` (each run through its main.py)."""
    from .oracle import Corpus
    from .run import Program, with_platforms

    c = Corpus(f"generated[{seeds.start}:{seeds.stop}]")
    root.mkdir(parents=True, exist_ok=True)
    for seed in seeds:
        d = write(seed, root)
        c.programs += with_platforms([Program(f"generated/{seed}/main.py", str(d), "main.py")], d)
    # the static side reads the parent once: each project is found by its pyproject.toml
    c.roots.append(str(root))
    return c
