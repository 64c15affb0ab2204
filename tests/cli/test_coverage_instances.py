"""reshard-lint coverage on instances of a class of the file itself: a construction's
instance holds what its own __init__ assigned (analysis/instances.py), where nothing else
can change it. Each program's verdicts were checked under JAX on 8 CPU devices (the
moves the comments call crossing move an array to another device set)."""

from __future__ import annotations

import json
from pathlib import Path

from .conftest import run, write

HEAD = """\
import sys

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

train = Mesh(np.array(jax.devices()), ("x",))
rollout = Mesh(np.array(jax.devices()[:4]), ("x",))
flag = len(sys.argv) > 5


class Trainer:
    def __init__(self, mesh):
        self.mesh = mesh

    def init(self):
        return jax.device_put(np.zeros(8), NamedSharding(self.mesh, P("x")))
"""

# What each file leaves unknown, or knows, at its last transfer: the attribute is changed
# after the construction, the construction is one of two paths', or the class is another's
# subclass. In every one of them the move crosses in a run (in the loop, on its second
# iteration).
PROGRAMS = {
    "outside.py": HEAD + """\


t = Trainer(train)
t.mesh = rollout
w = t.init()
jax.device_put(w, NamedSharding(train, P()))
""",
    "helper.py": HEAD + """\


def retarget(obj):
    obj.mesh = rollout


t = Trainer(train)
retarget(t)
w = t.init()
jax.device_put(w, NamedSharding(train, P()))
""",
    "setattr.py": HEAD + """\


t = Trainer(train)
setattr(t, "mesh", rollout)
w = t.init()
jax.device_put(w, NamedSharding(train, P()))
""",
    "vars.py": HEAD + """\


t = Trainer(train)
vars(t)["mesh"] = rollout
w = t.init()
jax.device_put(w, NamedSharding(train, P()))
""",
    # Only words: a comment and a string name setattr and __dict__; no code changes t.mesh.
    "words.py": HEAD + """

t = Trainer(train)  # no setattr(t, ...) or t.__dict__ here
note = "vars(t) is not called"
w = t.init()
jax.device_put(w, NamedSharding(rollout, P()))
""",
    "branch.py": HEAD + """\


if flag:
    t = Trainer(train)
else:
    t = Trainer(rollout)
w = t.init()
jax.device_put(w, NamedSharding(train, P()))
""",
    "loop.py": HEAD + """\


for m in (train, rollout):
    t = Trainer(m)
    w = t.init()
    jax.device_put(w, NamedSharding(train, P()))
""",
    "passed.py": HEAD + """\


def move(tr, a):
    return jax.device_put(a, NamedSharding(tr.mesh, P()))


t = Trainer(train)
move(t, jax.device_put(np.ones(8), NamedSharding(rollout, P("x"))))
""",
    "subclass.py": """\
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

train = Mesh(np.array(jax.devices()), ("x",))
rollout = Mesh(np.array(jax.devices()[:4]), ("x",))


class Base:
    def __init__(self, mesh):
        self.mesh = mesh

    def retarget(self):
        self.other = rollout


class Sub(Base):
    def __init__(self, mesh):
        super().__init__(mesh)

    def init(self):
        return jax.device_put(np.zeros(8), NamedSharding(self.mesh, P("x")))


s = Sub(rollout)
w = s.init()
jax.device_put(w, NamedSharding(train, P()))
b = Base(train)
jax.device_put(w, NamedSharding(b.mesh, P()))
""",
    "method.py": """\
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

train = Mesh(np.array(jax.devices()), ("x",))
rollout = Mesh(np.array(jax.devices()[:4]), ("x",))


class Trainer:
    def __init__(self, mesh):
        self.mesh = mesh

    def switch(self, mesh):
        self.mesh = mesh

    def init(self):
        return jax.device_put(np.zeros(8), NamedSharding(self.mesh, P("x")))


class Node:
    def __init__(self, mesh, depth):
        self.mesh = mesh
        self.child = Node(rollout, depth - 1) if depth else None
        self.w = jax.device_put(np.zeros(8), NamedSharding(self.mesh, P("x")))


t = Trainer(train)
t.switch(rollout)
w = t.init()
jax.device_put(w, NamedSharding(train, P()))
n = Node(train, 2)
jax.device_put(n.w, NamedSharding(train, P()))
jax.device_put(n.w, NamedSharding(rollout, P()))
""",
}

MORE_THAN_ONE = "an attribute assigned in more than one place"
LATER = "an attribute read before the method that assigns it ran"


def _sites(project: Path) -> dict[tuple[str, int], tuple[str, str]]:
    for name, text in PROGRAMS.items():
        write(project, name, text)
    r = run("coverage", "--format", "json", "--sites", ".", cwd=project)
    assert r.returncode == 0, r.stderr
    return {(s["path"], s["line"]): (s["verdict"], s["detail"]) for s in json.loads(r.stdout)["site_list"]}


def test_only_what_nothing_else_changes_is_the_instance_s_own(project: Path) -> None:
    sites = _sites(project)
    # t.mesh = rollout, a helper's obj.mesh = rollout, setattr: the class's abstract
    # instance, which has more than one value or none yet.
    assert sites[("outside.py", 23)] == ("unresolved", MORE_THAN_ONE)
    assert sites[("helper.py", 27)] == ("unresolved", LATER)
    assert sites[("setattr.py", 23)] == ("unresolved", MORE_THAN_ONE)
    # vars(t) hands out every attribute: none is the instance's own.
    assert sites[("vars.py", 23)][0] == "unresolved"
    # Words in a comment or a string change nothing: the construction's own train mesh.
    verdict, detail = sites[("words.py", 23)]
    assert verdict == "crossing" and detail.startswith("RSH201 jax.device_put moves 'w' from mesh 'train'")
    # Either branch's instance: the abstract one.
    assert sites[("branch.py", 25)] == ("unresolved", LATER)
    # The loop the analysis unrolls builds an instance per iteration: the second one's
    # array crosses (the first one's stays on its devices).
    verdict, detail = sites[("loop.py", 23)]
    assert verdict == "crossing" and detail.startswith("RSH201 jax.device_put moves 'w' from mesh 'rollout'")
    # Assigned by a base class's __init__ through super(): not this class's own.
    assert sites[("subclass.py", 27)] == ("unresolved", "an attribute the class's own methods do not assign")
    # A method assigns it too: not the instance's own.
    assert sites[("method.py", 30)] == ("unresolved", MORE_THAN_ONE)


def test_an_instance_passed_on_and_one_built_recursively_keep_their_attributes(project: Path) -> None:
    sites = _sites(project)
    # move(t, a): the function's own run reads the attribute of the one instance passed.
    verdict, detail = sites[("passed.py", 21)]
    assert verdict == "crossing" and detail.startswith("RSH201 jax.device_put moves 'a' from mesh 'rollout'")
    # An __init__ that constructs its own class again (recursion is bounded): the outer
    # instance's array is on the mesh its own call passed.
    assert sites[("method.py", 32)][0] == "same_devices"
    verdict, detail = sites[("method.py", 33)]
    assert verdict == "crossing" and detail.startswith("RSH201 jax.device_put moves 'n.w' from mesh 'train'")


def test_more_constructions_than_a_method_has_contexts_still_resolve(project: Path) -> None:
    # Each test builds its own Trainer on one mesh and moves the step's result to another:
    # twelve instances that assigned the same mesh are one context of `step`, so no test
    # runs out of the contexts a function is evaluated in (8). Each move crosses in a run.
    tests = "".join(f"""

def test_{i}():
    t = Trainer(train)
    out = t.step(w)
    jax.device_put(out, NamedSharding(rollout, P()))
""" for i in range(12))
    write(project, "many.py", """\
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

train = Mesh(np.array(jax.devices()), ("x",))
rollout = Mesh(np.array(jax.devices()[:4]), ("x",))
w = jax.device_put(np.ones(8), NamedSharding(train, P("x")))


class Trainer:
    def __init__(self, mesh):
        self.mesh = mesh

    def step(self, a):
        return jax.device_put(a, NamedSharding(self.mesh, P()))
""" + tests)
    r = run("coverage", "--format", "json", "--sites", "many.py", cwd=project)
    assert r.returncode == 0, r.stderr
    verdicts = {s["line"]: s["verdict"] for s in json.loads(r.stdout)["site_list"]}
    assert verdicts == {7: "host_data", 15: "same_devices", **{21 + 6 * i: "crossing" for i in range(12)}}
