"""reshard-lint coverage names what stopped the analysis at each unresolved site (the
culprit), per site and, per reason, the most frequent ones: as a real subprocess."""

from __future__ import annotations

import json
from pathlib import Path

from .conftest import run, write

# mypkg is a package of this project: data.load reads a pickle, which the analysis follows
# into load as far as pickle.load (another package, not modelled): its result is unknown.
DATA = """\
import pickle


def load(path):
    with open(path, "rb") as f:
        return pickle.load(f)
"""

TRAIN = """\
import jax
import numpy as np
from flax import nnx
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
import jax.experimental.foo as foo
from mypkg.data import load

mesh = Mesh(np.array(jax.devices()), ('x',))
s = NamedSharding(mesh, P('x'))

a = jax.device_put(nnx.state(object()), s)
b = jax.device_put(nnx.state(object()), s)
c = jax.device_put(load("params.pkl"), s)
d = jax.device_put(foo.bar(), s)


class Runner:
    def __init__(self, trainer):
        self.trainer = trainer

    def go(self):
        return jax.device_put(self.trainer.get_state(), s)


def train_step(params, cfg):
    jax.device_put(cfg.batch, s)
    return jax.device_put(params, s)
"""

# The culprit of each unresolved site, by line.
EXPECTED = {
    11: ("a result of a function from another module or package", "flax.nnx.state (flax, not modelled)"),
    12: ("a result of a function from another module or package", "flax.nnx.state (flax, not modelled)"),
    13: ("a result of a function from another module or package", "pickle.load (pickle, not modelled)"),
    14: ("a result of a JAX API the analysis does not model", "jax.experimental.foo.bar (jax, not modelled)"),
    22: ("an attribute or method of an object the analysis does not know", "self.trainer.get_state()"),
    26: ("an attribute or method of an object the analysis does not know", "cfg.batch"),
    27: ("a parameter no call site feeds", "parameter 'params' of train_step"),
}


def _project(root: Path) -> None:
    write(root, "mypkg/__init__.py", "")
    write(root, "mypkg/data.py", DATA)
    write(root, "train.py", TRAIN)


def test_each_unresolved_site_names_what_stopped_the_analysis(project: Path) -> None:
    _project(project)
    r = run("coverage", "--format", "json", "--sites", "train.py", cwd=project)
    assert r.returncode == 0, r.stderr
    sites = json.loads(r.stdout)["site_list"]
    assert {s["line"]: (s["detail"], s["culprit"]) for s in sites} == EXPECTED
    assert all(s["verdict"] == "unresolved" for s in sites)


def test_the_summary_lists_the_most_frequent_culprits_per_reason(project: Path) -> None:
    _project(project)
    r = run("coverage", "--format", "json", "train.py", cwd=project)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["unresolved_culprits"] == {
        # Most first, ties by name; listed in the order of unresolved_reasons.
        "a result of a function from another module or package": {
            "flax.nnx.state (flax, not modelled)": 2, "pickle.load (pickle, not modelled)": 1},
        "an attribute or method of an object the analysis does not know": {
            "cfg.batch": 1, "self.trainer.get_state()": 1},
        "a parameter no call site feeds": {"parameter 'params' of train_step": 1},
        "a result of a JAX API the analysis does not model": {"jax.experimental.foo.bar (jax, not modelled)": 1},
    }
    assert list(out["unresolved_culprits"]) == list(out["unresolved_reasons"])


def test_text_names_the_culprit_per_site_and_per_reason(project: Path) -> None:
    _project(project)
    r = run("coverage", "--sites", "train.py", cwd=project)
    assert r.returncode == 0, r.stderr
    assert "train.py:11:5: device_put: unresolved: a result of a function from another module or package: " \
           "flax.nnx.state (flax, not modelled)\n" in r.stdout
    assert "train.py:27:12: device_put: unresolved: a parameter no call site feeds: " \
           "parameter 'params' of train_step\n" in r.stdout
    assert ("        3  a result of a function from another module or package\n"
            "                 2  flax.nnx.state (flax, not modelled)\n"
            "                 1  pickle.load (pickle, not modelled)\n") in r.stdout


def test_the_top_culprits_are_five_per_reason(project: Path) -> None:
    calls = "".join(f"x{i} = jax.device_put(ext.f{i % 7}(), s)\n" for i in range(14))
    write(project, "many.py", "import jax\nimport numpy as np\nimport ext\n"
                              "from jax.sharding import Mesh, NamedSharding, PartitionSpec as P\n"
                              "s = NamedSharding(Mesh(np.array(jax.devices()), ('x',)), P())\n" + calls)
    out = json.loads(run("coverage", "--format", "json", "many.py", cwd=project).stdout)
    assert out["unresolved_reasons"] == {"a result of a function from another module or package": 14}
    # Seven culprits of two sites each: the first five by name.
    assert out["unresolved_culprits"] == {"a result of a function from another module or package": {
        f"ext.f{i} (ext, not modelled)": 2 for i in range(5)}}


def test_a_method_of_an_unnamed_object_is_written_with_its_object_elided(project: Path) -> None:
    write(project, "m.py", """\
import jax
from jax.sharding import NamedSharding, PartitionSpec as P


def put(path, mesh):
    return jax.device_put(open(path).read().astype(int), NamedSharding(mesh, P()))


put("a.npy", 2)
""")
    sites = json.loads(run("coverage", "--format", "json", "--sites", "m.py", cwd=project).stdout)["site_list"]
    # .astype(int) of a value the analysis does not know is unknown for that value's
    # reason: what stopped the analysis is read() of the file object.
    assert [(s["line"], s["detail"], s["culprit"]) for s in sites] == [
        (6, "an attribute or method of an object the analysis does not know", "(...).read()")]


def test_two_meshes_not_comparable_are_both_named(project: Path) -> None:
    # jax.devices() may be any platform's; jax.devices("cpu") is CPU's: one list or two.
    write(project, "platforms.py", """\
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

m1 = Mesh(np.array(jax.devices()), ("x",))
m2 = Mesh(np.array(jax.devices("cpu")), ("x",))
x = jax.device_put(np.zeros(8), NamedSharding(m1, P("x")))
y = jax.device_put(x, NamedSharding(m2, P("x")))
a = jax.device_put(np.zeros(8), jax.devices()[0])
b = jax.device_put(a, jax.devices("cpu")[0])
""")
    r = run("coverage", "--isolated", "--sites", "--format", "json", cwd=project)
    assert r.returncode == 0, r.stderr
    sites = {s["line"]: (s["detail"], s["culprit"]) for s in json.loads(r.stdout)["site_list"]}
    reason = "two meshes whose comparison is not certain on every topology"
    assert sites[8] == (reason, "'m1' (line 5, jax.devices()) vs 'm2' (line 6, jax.devices(\"cpu\"))")
    assert sites[10] == (reason, "device jax.devices()[0] (line 9) vs jax.devices(\"cpu\")[0] (line 10)")
