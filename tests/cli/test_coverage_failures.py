"""reshard-lint coverage never loses a site silently (issue 54): a failure of the analysis
in one function is a finding-shaped record in every format, the exit status is 2, and the
file's other sites are still listed. Run as a real subprocess."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from .conftest import ROOT, run, write

# A factory in another module returning a jitted lambda: the lambda is that module's
# code, so a call of it here is relayed to the call (it once raised KeyError on the
# lambda's `x @ w` when coverage placed it among this file's sites, and the file's two
# puts vanished from the output).
FACTORY = """\
import jax
from jax.sharding import NamedSharding, PartitionSpec as P


def make_step(mesh):
    return jax.jit(lambda x, w: x @ w, out_shardings=NamedSharding(mesh, P("x")))
"""
CALLER = """\
import jax
import numpy as np
from jax.sharding import NamedSharding, PartitionSpec as P

from pkg.factory import make_step

mesh = jax.make_mesh((8,), ("x",))
x = jax.device_put(np.ones((8, 8)), NamedSharding(mesh, P("x")))
w = jax.device_put(np.ones((8, 8)), NamedSharding(mesh, P()))
step = make_step(mesh)
y = step(x, w)
"""


def _factory_project(project: Path) -> None:
    write(project, "pkg/__init__.py", "")
    write(project, "pkg/factory.py", FACTORY)
    write(project, "pkg/main.py", CALLER)


def test_a_jitted_lambda_from_another_modules_factory_keeps_every_site(project: Path) -> None:
    _factory_project(project)
    r = run("coverage", "--format", "json", "--sites", "--isolated", cwd=project)
    assert r.returncode == 0, r.stdout + r.stderr
    out = json.loads(r.stdout)
    assert out["failures"] == []
    assert [(s["path"], s["line"], s["col"], s["kind"], s["verdict"]) for s in out["site_list"]] == [
        ("pkg/main.py", 8, 5, "device_put", "host_data"),
        ("pkg/main.py", 9, 5, "device_put", "host_data"),
        ("pkg/main.py", 11, 5, "jit_out", "same_devices"),
    ]
    assert out["site_list"][2]["detail"] == (
        "'x' is on mesh 'mesh' (line 7, jax.make_mesh((8,), (\"x\",))) and the target on 'mesh' "
        "(line 7, jax.make_mesh((8,), (\"x\",))): the same devices in the same order")


def test_the_lambdas_crossing_is_reported_at_the_call_that_runs_it(project: Path) -> None:
    _factory_project(project)
    write(project, "pkg/main.py", CALLER.replace(
        'w = jax.device_put(np.ones((8, 8)), NamedSharding(mesh, P()))',
        'other = jax.make_mesh((4,), ("x",))\nw = jax.device_put(np.ones((8, 8)), NamedSharding(other, P()))'))
    r = run("check", "--isolated", "--format", "json", cwd=project)
    assert r.returncode == 1, r.stdout + r.stderr
    found = [(d["filename"], d["location"]["row"], d["location"]["column"], d["code"]) for d in json.loads(r.stdout)]
    assert found == [("pkg/main.py", 12, 5, "RSH203")]
    cov = run("coverage", "--isolated", "--sites", cwd=project)
    assert cov.returncode == 0, cov.stdout + cov.stderr
    assert cov.stdout.splitlines()[2].startswith("pkg/main.py:12:5: jit_out: crossing: RSH203 'step(x, w)' combines")


# Makes the analysis itself fail wherever a name 'explode' is read: a stand-in for a bug of
# the tool, put in the real command's process by a sitecustomize module.
_INJECT = """\
from reshard_lint.analysis.interpreter import Analyzer

_eval_name = Analyzer.eval_Name


def eval_Name(self, node, scope):
    if node.id == "explode":
        raise KeyError("injected")
    return _eval_name(self, node, scope)


Analyzer.eval_Name = eval_Name
"""
BROKEN = """\
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

mesh = Mesh(np.array(jax.devices()), ('x',))
x = jax.device_put(np.arange(8.0), NamedSharding(mesh, P('x')))


def bad(a):
    y = jax.device_put(a, NamedSharding(mesh, P()))
    explode(y)
    return jax.device_put(y, NamedSharding(mesh, P('x')))


def good():
    return jax.device_put(np.ones(8), NamedSharding(mesh, P()))


def main():
    bad(x)
    explode()


z = jax.device_put(x, NamedSharding(mesh, P()))
"""


def _failing(project: Path, inject: Path, *args: str):
    write(inject, "sitecustomize.py", _INJECT)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(inject), str(ROOT), *filter(None, [env.get("PYTHONPATH")])])
    return run("coverage", "--isolated", *args, cwd=project, env=env, python_flags=("-X", "utf8"))


FAILURES = [
    {"path": "train.py", "line": 9, "col": 1, "code": "RSH002",
     "message": "internal error while analysing 'bad': KeyError: 'injected'"},
    {"path": "train.py", "line": 19, "col": 1, "code": "RSH002",
     "message": "internal error while analysing 'main': KeyError: 'injected'"},
]


def test_a_failure_in_one_function_is_a_record_and_the_other_sites_stay_json(
        project: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    write(project, "train.py", BROKEN)
    r = _failing(project, tmp_path_factory.mktemp("inject"), "--format", "json", "--sites")
    assert r.returncode == 2, r.stdout + r.stderr
    out = json.loads(r.stdout)
    assert out["failures"] == FAILURES
    assert [(s["line"], s["col"], s["verdict"], s["detail"]) for s in out["site_list"]] == [
        (6, 5, "host_data", "'np.arange(8.0)' is host data or uncommitted: np.arange(8.0) (line 6)"),
        # Judged whole before the failure: it stands.
        (10, 9, "same_devices", "'a' is on mesh 'mesh' (line 5, jax.devices()) and the target on 'mesh' "
                                "(line 5, jax.devices()): the same devices in the same order"),
        (12, 12, "unresolved", "a call the analysis did not run because it failed before it (an internal error)"),
        (16, 12, "host_data", "'np.ones(8)' is host data or uncommitted: np.ones(8) (line 16)"),
        (24, 5, "same_devices", "'x' is on mesh 'mesh' (line 5, jax.devices()) and the target on 'mesh' "
                                "(line 5, jax.devices()): the same devices in the same order"),
    ]
    assert out["sites"] == 5 and out["verdicts"]["unresolved"] == 1


def test_a_failure_in_one_function_is_a_record_and_the_other_sites_stay_text(
        project: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    write(project, "train.py", BROKEN)
    r = _failing(project, tmp_path_factory.mktemp("inject"))
    assert r.returncode == 2, r.stdout + r.stderr
    assert r.stdout.endswith(
        "not analysed, in whole or in part:\n"
        "train.py:9:1: RSH002 internal error while analysing 'bad': KeyError: 'injected'\n"
        "train.py:19:1: RSH002 internal error while analysing 'main': KeyError: 'injected'\n")
    assert r.stdout.startswith("5 transfer sites in 1 files\n")


def test_a_failure_at_module_level_stops_the_module_body_there(
        project: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    write(project, "train.py", BROKEN.replace("\n\ndef main():\n    bad(x)\n    explode()\n", "\nexplode()\n"))
    r = _failing(project, tmp_path_factory.mktemp("inject"), "--format", "json", "--sites")
    assert r.returncode == 2, r.stdout + r.stderr
    out = json.loads(r.stdout)
    assert out["failures"] == [FAILURES[0], {
        "path": "train.py", "line": 18, "col": 1, "code": "RSH002",
        "message": "internal error while analysing this statement: KeyError: 'injected'"}]
    # What follows it is not run: its sites are listed, unresolved for that reason.
    assert [(s["line"], s["verdict"], s["detail"]) for s in out["site_list"]][-1] == (
        21, "unresolved", "a call the analysis did not run because it failed before it (an internal error)")
    assert out["sites"] == 5


def test_a_file_that_does_not_parse_is_a_record_and_exits_0(project: Path) -> None:
    write(project, "train.py", BROKEN)
    write(project, "broken.py", "import jax\nx = jax.device_put(1,\n")
    r = run("coverage", "--isolated", "--format", "json", cwd=project)
    assert r.returncode == 0, r.stdout + r.stderr
    out = json.loads(r.stdout)
    assert [(f["path"], f["code"], f["message"]) for f in out["failures"]] == [
        ("broken.py", "RSH001", "could not parse the file: SyntaxError")]
    assert out["sites"] == 5
