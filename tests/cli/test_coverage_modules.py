"""reshard-lint coverage over a project: a function that other modules call is judged with
their calls too (frontends/coverage_modules.py), as a real subprocess."""

from __future__ import annotations

import json
from pathlib import Path

from .conftest import run, write

MESHES = """\
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

TRAIN = Mesh(np.array(jax.devices()), ("x",))
ROLLOUT = Mesh(np.array(jax.devices()[::-1]), ("x",))


def place(value, mesh):
    return jax.device_put(value, NamedSharding(mesh, P("x")))


warm = place(np.zeros(8), TRAIN)
"""
SITE = ("pkg/meshes.py", 10)  # the device_put inside place


def _layout(root: Path, main: str, init: str = "", meshes: str = MESHES, main_path: str = "main.py") -> None:
    write(root, "pkg/__init__.py", init)
    write(root, "pkg/meshes.py", meshes)
    write(root, main_path, main)


ELSEWHERE = "a parameter of a function other modules call too"


def _site(root: Path) -> tuple[str, str, str]:
    r = run("coverage", "--isolated", "--sites", "--format", "json", cwd=root)
    assert r.returncode == 0, r.stderr
    found = [(s["verdict"], s["detail"], s["culprit"]) for s in json.loads(r.stdout)["site_list"]
             if (s["path"], s["line"]) == SITE]
    assert len(found) == 1, found
    return found[0]


def test_alone_the_module_judges_its_own_calls(project: Path) -> None:
    write(project, "pkg/__init__.py", "")
    write(project, "pkg/meshes.py", MESHES)
    assert _site(project)[0] == "host_data"  # its one call passes numpy data


def test_a_call_from_another_module_that_crosses_makes_the_site_a_crossing(project: Path) -> None:
    write(project, "pkg/__init__.py", "")
    write(project, "pkg/meshes.py", MESHES)
    # No device word here: the move comes through the imported function.
    write(project, "main.py", "import numpy as np\nfrom pkg.meshes import place, TRAIN, ROLLOUT\n\n"
                              "x = place(np.zeros(8), TRAIN)\ny = place(x, ROLLOUT)\n")
    verdict, detail, _ = _site(project)
    assert verdict == "crossing"
    assert detail.startswith("called from main.py: RSH202 place(x, ROLLOUT), through its jax.device_put at "
                             "pkg/meshes.py:10, moves 'x' from mesh 'TRAIN'"), detail


def test_a_harmless_verdict_stands_when_every_call_from_elsewhere_ran_through_it(project: Path) -> None:
    # main.py reads place once, in a call the analysis runs (through jax.tree.map's
    # callback, with numpy data), re-exported by the package: host data there too.
    _layout(project, "import jax\nimport numpy as np\nfrom pkg import place, TRAIN\n\n"
                     "x = jax.tree.map(lambda a: place(a, TRAIN), [np.zeros(8)])\n",
            init="from .meshes import place, TRAIN\n")
    assert _site(project)[0] == "host_data"


def test_a_harmless_verdict_does_not_stand_for_calls_it_did_not_join(project: Path) -> None:
    # main.py hands place on (a use that is no call): its calls are not all seen.
    _layout(project, "import numpy as np\nfrom pkg import place, TRAIN\n\n"
                     "HANDLERS = {'place': place}\nx = place(np.zeros(8), TRAIN)\n",
            init="from .meshes import place, TRAIN\n")
    assert _site(project) == ("unresolved", ELSEWHERE, "place, imported by main.py")


def test_a_function_reached_from_an_imported_one_is_judged_with_its_calls(project: Path) -> None:
    # _put's site runs for place's calls, which main.py makes with its own arguments.
    inner = MESHES.replace('def place(value, mesh):\n    return jax.device_put(value, NamedSharding(mesh, P("x")))\n',
                           'def _put(value, mesh):\n    return jax.device_put(value, NamedSharding(mesh, P("x")))\n'
                           '\n\ndef place(value, mesh):\n    return _put(value, mesh)\n')
    _layout(project, "import numpy as np\nfrom pkg.meshes import place, TRAIN\n\nx = place(np.zeros(8), TRAIN)\n",
            meshes=inner)
    assert _site(project) == ("unresolved", ELSEWHERE, "_put (through place), imported by main.py")


def test_a_module_imported_whole_counts_too(project: Path) -> None:
    write(project, "pkg/__init__.py", "")
    write(project, "pkg/meshes.py", MESHES)
    write(project, "tools/export.py", "import pkg.meshes\n\nCALLBACK = pkg.meshes.place\n")
    assert _site(project) == ("unresolved", "a parameter of a function other modules call too",
                              "place, imported by tools/export.py")


def test_a_method_of_an_imported_class_is_judged_with_the_importers_instances(project: Path) -> None:
    # The importer's one use of Placer is a constructor call; its method call on the
    # instance passes other values, which no use of the name counts.
    write(project, "pkg/__init__.py", "")
    write(project, "pkg/meshes.py", MESHES.replace(
        'def place(value, mesh):\n    return jax.device_put(value, NamedSharding(mesh, P("x")))\n',
        'class Placer:\n    def put(self, value, mesh):\n        return jax.device_put(value, NamedSharding(mesh, P("x")))\n'
    ).replace("warm = place(np.zeros(8), TRAIN)", "warm = Placer().put(np.zeros(8), TRAIN)"))
    write(project, "main.py", "import numpy as np\nfrom pkg.meshes import Placer, TRAIN\n\n"
                              "x = Placer().put(np.zeros(8), TRAIN)\n")
    r = run("coverage", "--isolated", "--sites", "--format", "json", cwd=project)
    found = [(s["verdict"], s["detail"], s["culprit"]) for s in json.loads(r.stdout)["site_list"]
             if s["path"] == "pkg/meshes.py"]
    assert found == [("unresolved", "a parameter of a function other modules call too",
                      "Placer, imported by main.py")], found


def test_host_data_built_in_the_function_is_host_data_whoever_calls_it(project: Path) -> None:
    write(project, "pkg/__init__.py", "")
    write(project, "pkg/meshes.py", MESHES.replace("jax.device_put(value, ", "jax.device_put(np.zeros(8), "))
    write(project, "main.py", "from pkg.meshes import place, TRAIN\n\nHANDLERS = {'place': place}\n")
    assert _site(project)[0] == "host_data"


def test_a_target_built_from_the_arrays_own_sharding_is_the_same_devices_whoever_calls(project: Path) -> None:
    meshes = MESHES.replace("jax.device_put(value, NamedSharding(mesh, P(\"x\")))", "jax.device_put(value, value.sharding)")
    meshes = meshes.replace("warm = place(np.zeros(8), TRAIN)",
                            "warm = place(jax.device_put(np.zeros(8), NamedSharding(TRAIN, P('x'))), TRAIN)")
    _layout(project, "from pkg.meshes import place\n\nHANDLERS = {'place': place}\n", meshes=meshes)
    assert _site(project)[0] == "same_devices"


CONTAINERS = Path(__file__).resolve().parents[1] / "fixtures" / "projects" / "containers"
CONTAINER_REASON = "an element of a container the analysis does not know"


def _sites(root: Path, path: str) -> list[tuple[int, str, str, str]]:
    r = run("coverage", "--isolated", "--sites", "--format", "json", cwd=root)
    assert r.returncode == 0, r.stderr
    return [(s["line"], s["verdict"], s["detail"], s["culprit"]) for s in json.loads(r.stdout)["site_list"]
            if s["path"] == path]


def test_containers_of_imported_instances_flow_through_helpers_of_helpers() -> None:
    # tests/fixtures/projects/containers: team/train.py hands sync the dict a Trainer's
    # methods return (arrays on its @property sharding, through a jitted step) and a
    # target an Evaluator's method builds; sync decides isinstance(params, dict) on it
    # and calls place(v, sharding=target) for each item, whose **kwargs hold the target.
    [(line, verdict, detail, _)] = _sites(CONTAINERS, "team/sync.py")
    assert (line, verdict) == (5, "crossing")
    assert detail.startswith("called from team/train.py: RSH201 sync(params, Evaluator(rollout_mesh()..., "
                             "through its jax.device_put at team/sync.py:5, moves 'v' from mesh 'TRAIN' "
                             "(train_mesh(), line 6, built at team/meshes.py:8, jax.devices()) to 'ROLLOUT'"), detail
    # The fix it names is the helper's, on the array as place() names it there.
    assert "build the target on the array's own mesh: NamedSharding(value.sharding.mesh, P()) at team/sync.py:5, " \
        in detail, detail
    # A bare spec under the helper's @contextlib.contextmanager around jax.set_mesh.
    assert [s[:2] for s in _sites(CONTAINERS, "team/context.py")] == [(10, "crossing")]
    assert [s[:2] for s in _sites(CONTAINERS, "team/same.py")] == [(18, "same_devices")]


def _containers_copy(root: Path, callers: dict[str, str]) -> None:
    for name in ("__init__.py", "meshes.py", "trainer.py", "evaluator.py", "sync.py"):
        write(root, f"team/{name}", (CONTAINERS / "team" / name).read_text(encoding="utf-8"))
    write(root, "pyproject.toml", "[project]\nname = 'copy'\nversion = '0'\n")
    for path, text in callers.items():
        write(root, path, text)


SAME_CALLS = """\
from team.evaluator import Evaluator
from team.meshes import TRAIN
from team.sync import sync
from team.trainer import Trainer

trainer = Trainer(TRAIN)
params = trainer.init_params()
synced = sync(params, Evaluator(trainer.mesh).target())
pair = sync((params["w"], params["b"]), Evaluator(TRAIN).target())
"""


def test_helpers_called_with_the_same_devices_are_not_a_crossing(project: Path) -> None:
    # Every call is on the trainer's own devices: no crossing. main.py's two calls are
    # the only ones, each run through (the dict's items one by one, the tuple's in the
    # generator tuple() consumes): the site is what they find (coverage_relay.py).
    _containers_copy(project, {"main.py": SAME_CALLS})
    assert _sites(project, "team/sync.py") == [(5, "same_devices", (
        "called from main.py (4 runs): 'the value' is on mesh 'TRAIN' (Trainer(TRAIN), line 6, built at "
        "team/meshes.py:8, jax.devices()) and the target on 'TRAIN' (Trainer(TRAIN), line 6, built at "
        "team/meshes.py:8, jax.devices()): the same devices in the same order"), "")]
    r = run("check", "--isolated", "--no-cache", ".", cwd=project)
    assert r.returncode == 0, r.stdout


def test_a_call_through_a_branch_the_call_does_not_decide_is_not_a_crossing(project: Path) -> None:
    # sync_on_one_host tests jax.process_count(): the move past it runs on a single
    # process only, where it works. Followed, it would be a crossing of this call.
    _containers_copy(project, {"main.py": """\
from team.evaluator import Evaluator
from team.meshes import ROLLOUT, TRAIN
from team.sync import sync_on_one_host
from team.trainer import Trainer

params = Trainer(TRAIN).init_params()
maybe = sync_on_one_host(params, Evaluator(ROLLOUT).target())
"""})
    # (main.py's call feeds sync_on_one_host's own run, since it calls place, which moves:
    # place's value is then each item of the dict, and the items differ.)
    assert _sites(project, "team/sync.py") == [
        (5, "unresolved", "a parameter whose call sites pass different values", "parameter 'value' of place")]
    r = run("check", "--isolated", "--no-cache", ".", cwd=project)
    assert r.returncode == 0, r.stdout


_DEAD_AND_LOOPS = '''import jax


def put_each(xs, target):
    for x in xs:
        jax.device_put(x, target)


def put_unless_dict(p, target):
    if isinstance(p, dict):
        return dict(p)
    return jax.device_put(p, target)
'''

_DEAD_AND_LOOPS_MAIN = '''import sys

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

from pkg.helpers import put_each, put_unless_dict

TRAIN = Mesh(np.array(jax.devices()[:4]), ("x",))
ROLLOUT = Mesh(np.array(jax.devices()[4:]), ("x",))
w = jax.device_put(np.zeros(8), NamedSharding(TRAIN, P()))
kept = put_unless_dict({"w": w}, NamedSharding(ROLLOUT, P()))
put_each([w for _ in sys.argv[9:]], NamedSharding(ROLLOUT, P()))
'''


def test_a_transfer_the_call_may_not_reach_is_no_crossing_of_it(project: Path) -> None:
    # put_unless_dict returns before its put when given a dict (the put after the decided
    # return does not run for this call), and put_each's loop runs for as many arrays as
    # the command line gives, maybe none: neither call crosses for sure, and the sites
    # stay as their own module judges them.
    write(project, "pkg/__init__.py", "")
    write(project, "pkg/helpers.py", _DEAD_AND_LOOPS)
    write(project, "pkg/main.py", _DEAD_AND_LOOPS_MAIN)
    sites = {line: (verdict, detail) for line, verdict, detail, _ in _sites(project, "pkg/helpers.py")}
    assert sites[6] == ("unresolved", "a name bound differently on different paths (branches, loops, handlers)")
    # Its parameters are what pkg/main.py passes (analysis/foreign.py): a dict, for which
    # it returns before the put; the put runs for no call the project makes.
    assert sites[12] == ("unresolved", "a call the analysis did not run (a callback it does not follow, "
                                       "an expected-error block)")
    r = run("check", "--isolated", "--no-cache", ".", cwd=project)
    assert "RSH201" not in r.stdout, r.stdout
