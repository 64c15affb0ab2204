"""reshard-lint coverage over a project: a site that only other files' calls reach takes
the join of the verdicts those calls give it (frontends/coverage_relay.py), and keeps its
own module's verdict wherever a run may reach it another way. As a real subprocess."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from .conftest import run, write

RELAYED = Path(__file__).resolve().parents[1] / "fixtures" / "projects" / "relayed"
# Where another file names the function: its calls there are not followed.
CALLED_ELSEWHERE = "a parameter of a function other modules may call, whose calls the analysis does not follow"
SAME_PIECES = ("'the value' is on mesh 'TRAIN' (relay/meshes.py:6, jax.devices()) and the target on 'ROLLOUT' "
               "(relay/meshes.py:7, jax.devices()[::-1]): the same devices in another order, in which every "
               "device holds or gets the piece the same spec on the array's own mesh gives it")


def _sites(root: Path, path: str) -> list[tuple[int, str, str, str]]:
    r = run("coverage", "--isolated", "--sites", "--format", "json", cwd=root)
    assert r.returncode == 0, r.stderr
    return [(s["line"], s["verdict"], s["detail"], s["culprit"]) for s in json.loads(r.stdout)["site_list"]
            if s["path"] == path]


def _check(root: Path) -> list[tuple[str, int, int, str]]:
    r = run("check", "--isolated", "--no-cache", "--exit-zero", "--format", "json", ".", cwd=root)
    return sorted((d["filename"], d["location"]["row"], d["location"]["column"], d["code"])
                  for d in json.loads(r.stdout))


def _copy(root: Path, main: str | None = None) -> Path:
    shutil.copytree(RELAYED, root / "relayed")
    if main is not None:
        write(root / "relayed", "relay/main.py", main)
    return root / "relayed"


def test_every_call_from_elsewhere_decides_the_site() -> None:
    # tests/fixtures/projects/relayed: no module calls place, sync or put but relay/main.py.
    # place's put moves host data in the first call and replicates an array of TRAIN on
    # ROLLOUT (the same devices reversed: every device keeps the whole array) in the
    # second: the same pieces. sync replicates each array of a dict on ROLLOUT in its
    # loop; put keeps the dict on its own mesh.
    assert _sites(RELAYED, "relay/meshes.py") == [(14, "same_pieces", (
        "called from relay/main.py (2 runs; host data in the others): 'placed' is on mesh 'TRAIN' "
        "(relay/meshes.py:6, jax.devices()) and the target on 'ROLLOUT' (relay/meshes.py:7, jax.devices()[::-1]): "
        "the same devices in another order, in which every device holds or gets the piece the same spec on the "
        "array's own mesh gives it"), "")]
    # sync's parameters are what main.py's one call passes (analysis/foreign.py): its own
    # run decides its sites, as each call's relayed run does.
    assert _sites(RELAYED, "relay/sync.py") == [
        (8, "same_pieces", SAME_PIECES.replace("'the value'", "'value'"), ""),
        (17, "same_devices", "'params' is on mesh 'TRAIN' (relay/meshes.py:6, "
                             "jax.devices()) and the target on 'TRAIN' (relay/meshes.py:6, jax.devices()): the same "
                             "devices in the same order", ""),
        # main.py hands put_later on as a value too: called where the analysis does not see.
        (22, "unresolved", CALLED_ELSEWHERE, "parameter 'params' of put_later"),
    ]
    # No call moves a piece: nothing but the reversed mesh itself is reported.
    assert _check(RELAYED) == [("relay/meshes.py", 7, 11, "RSH102")]


def test_a_call_that_moves_pieces_makes_the_site_a_crossing(project: Path) -> None:
    # The look-alike: sync's target split over ROLLOUT, where device i receives the
    # piece device 7 - i holds.
    root = _copy(project, (RELAYED / "relay" / "main.py").read_text(encoding="utf-8").replace(
        'synced = sync(params, NamedSharding(ROLLOUT, P()))', 'synced = sync(params, NamedSharding(ROLLOUT, P("x")))'))
    [(line, verdict, detail, _)] = [s for s in _sites(root, "relay/sync.py") if s[0] == 8]
    assert (line, verdict) == (8, "crossing")
    assert detail.startswith("called from relay/main.py: RSH202 sync(params, NamedSharding(ROLLOUT, P..., through "
                             "its jax.device_put at relay/sync.py:8, moves 'value' from mesh 'TRAIN'"), detail
    assert _check(root) == [("relay/main.py", 16, 10, "RSH202"), ("relay/meshes.py", 7, 11, "RSH102")]


def test_an_unresolved_call_names_its_culprit_and_where_it_is(project: Path) -> None:
    root = _copy(project, (RELAYED / "relay" / "main.py").read_text(encoding="utf-8").replace(
        "again = place(placed, ROLLOUT)", "from store import restore\nagain = place(restore('w'), ROLLOUT)"))
    [(line, verdict, detail, culprit)] = _sites(root, "relay/meshes.py")
    assert (line, verdict, detail, culprit) == (14, "unresolved", "a result of a function from another module or "
                                                "package", "store.restore (store, not modelled), called from relay/main.py")


MAIN_HEAD = """\
import numpy as np

from relay.meshes import ROLLOUT, TRAIN, place
from relay.sync import put

placed = place(np.arange(8.0))
"""


def test_calls_the_analysis_may_not_see_leave_the_site_as_its_module_judges_it(project: Path) -> None:
    unseen = {
        # place is a value here: whoever gets it may call it with anything.
        "a function passed as a value": MAIN_HEAD + "CALLBACKS = [place]\n",
        # a lambda handed to a function the analysis does not follow
        "a call in a lambda": MAIN_HEAD + "import functools\nf = functools.reduce(lambda a, b: place(b, ROLLOUT), "
                                          "[np.zeros(8)], None)\n",
        # called in a function of main.py that another file imports and calls
        "a function another file calls": MAIN_HEAD + "\n\ndef again(x):\n    return place(x, ROLLOUT)\n",
        # the name bound again under another name
        "an import under another name": MAIN_HEAD + "from relay.meshes import place as put_on\n"
                                                    "y = put_on(placed, ROLLOUT)\n",
    }
    for why, main in unseen.items():
        root = project / why.replace(" ", "_")
        root.mkdir()
        copy = _copy(root, main)
        if why == "a function another file calls":
            write(copy, "relay/other.py", "from relay.main import again, placed\n\nz = again(placed)\n")
        [(line, verdict, detail, culprit)] = _sites(copy, "relay/meshes.py")
        # The calls main.py spells are its parameter's call sites (analysis/foreign.py):
        # main.py's two calls with different values (np.arange(8.0) at module level, and
        # again's parameter, which other.py feeds, or the placed array under another name),
        # a call in a lambda nothing runs; a function passed as a value has calls unseen.
        disagree = ("a parameter whose call sites pass different values", "parameter 'value' of place")
        reason = {"a function another file calls": disagree, "an import under another name": disagree,
                  "a call in a lambda": ("a value another module passes that the analysis does not follow",
                                         "place() at relay/main.py:8")}.get(why, (CALLED_ELSEWHERE, "parameter 'value' of place"))
        assert (line, verdict, detail, culprit) == (14, "unresolved", *reason), why


def test_its_own_module_naming_the_function_leaves_the_site_unresolved(project: Path) -> None:
    root = _copy(project, MAIN_HEAD)
    meshes = root / "relay" / "meshes.py"
    meshes.write_text(meshes.read_text(encoding="utf-8") + "\n\nDEFAULT_PLACE = place\n", encoding="utf-8")
    assert _sites(root, "relay/meshes.py") == [(14, "unresolved", "a parameter of a function passed where the "
                                                 "analysis cannot follow its calls", "parameter 'value' of place")]
    # Without it, the one call decides: host data.
    meshes.write_text(meshes.read_text(encoding="utf-8").replace("\n\nDEFAULT_PLACE = place\n", ""), encoding="utf-8")
    assert [s[:2] for s in _sites(root, "relay/meshes.py")] == [(14, "host_data")]


def test_a_package_that_re_exports_the_function_does_not_call_it(project: Path) -> None:
    # The package binds place for its importers and lists it in __all__: no call.
    root = _copy(project, MAIN_HEAD.replace("from relay.meshes import ROLLOUT, TRAIN, place",
                                            "from relay import ROLLOUT, TRAIN, place"))
    write(root, "relay/__init__.py", 'from .meshes import ROLLOUT, TRAIN, place\n\n__all__ = ["place", "ROLLOUT", "TRAIN"]\n')
    assert [s[:2] for s in _sites(root, "relay/meshes.py")] == [(14, "host_data")]


def test_another_modules_own_function_of_the_same_name_is_not_a_use(project: Path) -> None:
    # other.py calls its own place: not relay.meshes's. Bound to meshes.place by an
    # import, the same call is one the analysis did not run with its arguments.
    root = _copy(project, MAIN_HEAD)
    write(root, "relay/other.py", "def place(x):\n    return x\n\n\ny = place(3)\n")
    assert [s[:2] for s in _sites(root, "relay/meshes.py")] == [(14, "host_data")]
    write(root, "relay/other.py", "from relay.meshes import place\n\n\ndef later(x):\n    return place(x)\n")
    assert [s[:2] for s in _sites(root, "relay/meshes.py")] == [(14, "unresolved")]


def test_a_call_in_a_function_only_its_file_calls_is_judged_with_that_functions_run(project: Path) -> None:
    # warm runs for its one call, which passes nothing: its run of place is every run.
    warm = MAIN_HEAD + "\n\ndef warm():\n    return place(np.zeros(8))\n\n\nw = warm()\n"
    root = _copy(project, warm)
    assert [s[:2] for s in _sites(root, "relay/meshes.py")] == [(14, "host_data")]
    # Decorated, it may run where its own run does not show; whoever runs it, the call
    # passes host data (np.zeros(8)), as main.py's other call does (analysis/foreign.py).
    write(root, "relay/main.py", "import functools\n" + warm.replace("def warm", "@functools.lru_cache\ndef warm"))
    assert [s[:2] for s in _sites(root, "relay/meshes.py")] == [(14, "host_data")]


MOVES = """\
import jax
from jax.sharding import NamedSharding, PartitionSpec as P


def relay(x, mesh):
    return jax.device_put(x, NamedSharding(mesh, P()))
"""
MAIN = """\
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
from {imp}

train = Mesh(np.array(jax.devices()), ("x",))
serve = Mesh(np.array(jax.devices()[:4]), ("x",))
x = jax.device_put(np.zeros(8), NamedSharding(train, P("x")))
y = {call}(x, serve)
"""


def test_a_package_without_a_project_marker_resolves_its_own_imports(tmp_path: Path) -> None:
    # A checkout with no pyproject.toml, setup.cfg, setup.py or .git: pkg's modules are
    # named from the directory above the package, as `python -m pkg.main` runs them, so the
    # other module's function is followed and its put across device sets found.
    for imp, call in (("pkg.moves import relay", "relay"), (". import moves", "moves.relay")):
        root = tmp_path / call
        write(root, "pkg/__init__.py", "")
        write(root, "pkg/moves.py", MOVES)
        write(root, "pkg/main.py", MAIN.format(imp=imp, call=call))
        if any((p / m).exists() for p in root.parents for m in (".git", "pyproject.toml", "setup.cfg", "setup.py")):
            return  # the machine's temporary directory sits in a project: its marker decides
        assert _check(root) == [("pkg/main.py", 9, 5, "RSH201")]
        r = run("check", "--isolated", "--no-cache", "--exit-zero", "--format", "json", "pkg/main.py", cwd=root)
        assert [(d["location"]["row"], d["code"]) for d in json.loads(r.stdout)] == [(9, "RSH201")]
        flake8 = subprocess.run([sys.executable, "-m", "flake8", "--isolated", "--select", "RSH",
                                 "pkg/main.py"], cwd=root, capture_output=True, text=True)
        assert flake8.stdout.splitlines() == [flake8.stdout.splitlines()[0]] and \
            flake8.stdout.startswith("pkg/main.py:9:5: RSH201 "), flake8.stdout + flake8.stderr
