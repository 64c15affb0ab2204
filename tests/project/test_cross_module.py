"""Meshes built in one module of a project and used in another: the fixture projects
under tests/fixtures/projects/ state their diagnostics inline, and every front end finds
exactly those, naming the file and line where each mesh was built."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from reshard_lint.engine.engine import Engine
from reshard_lint.rules import expected_markers

from ..conftest import FIXTURES, tool

PROJECTS = FIXTURES / "projects"
FILES = sorted(PROJECTS.rglob("*.py"))


def _expected(path: Path) -> list[tuple[int, int, str]]:
    return expected_markers(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(PROJECTS)))
def test_engine_finds_exactly_the_markers(path: Path) -> None:
    result = Engine().lint_source(path.read_text(encoding="utf-8"), str(path))
    assert result.error is None
    assert sorted((d.line, d.col + 1, d.code) for d in result.diagnostics) == _expected(path)


def test_message_and_related_locations_name_the_other_file() -> None:
    path = PROJECTS / "crossing" / "scripts" / "train.py"  # through mypkg/__init__.py's re-export
    result = Engine().lint_source(path.read_text(encoding="utf-8"), str(path))
    [d] = result.diagnostics
    assert "mesh 'TRAIN' (mypkg/mesh.py:6, jax.devices()) to 'ROLLOUT' (mypkg/mesh.py:7, jax.devices()[:2])" \
        in d.message
    mesh = str(PROJECTS / "crossing" / "mypkg" / "mesh.py")
    assert [(r.path, r.line, r.col, r.message) for r in d.related] == [
        (mesh, 6, 8, "mesh 'TRAIN' is built here"), (mesh, 7, 10, "mesh 'ROLLOUT' is built here")]
    # The result holds while the files it read are unchanged.
    assert sorted(Path(p).name for p in result.deps) == ["__init__.py", "mesh.py"]


def test_a_mesh_made_by_another_modules_function_is_named_by_its_call() -> None:
    # Both meshes come from one line of lab/meshes.py: the message says which call made
    # each, and where the factory built it.
    root = PROJECTS / "factories" / "lab"
    messages = {}
    for name in ("train.py", "serve.py"):
        path = root / name
        [d] = Engine().lint_source(path.read_text(encoding="utf-8"), str(path)).diagnostics
        messages[name] = d.message
    assert ("from mesh 'train' (make_mesh(), line 7, built at lab/meshes.py:12, jax.devices()[:n]) "
            "to 'rollout' (make_mesh(2), line 8, built at lab/meshes.py:12, jax.devices()[:n])") in messages["train.py"]
    assert ("from mesh make_mesh() (line 8, built at lab/meshes.py:12, jax.devices()[:n]) "
            "to make_mesh(2) (line 9, built at lab/meshes.py:12, jax.devices()[:n])") in messages["serve.py"]


def test_flake8_prints_exactly_the_markers() -> None:
    for root in sorted(p for p in PROJECTS.iterdir() if p.is_dir()):
        proc = subprocess.run([sys.executable, "-m", "flake8", "--isolated", "--select=RSH", "."],
                              capture_output=True, text=True, cwd=root, timeout=300)
        assert proc.returncode in (0, 1), proc.stderr
        got: dict[Path, list[tuple[int, int, str]]] = {}
        for line in proc.stdout.splitlines():
            m = re.match(r"(.+?):(\d+):(\d+): (RSH\d{3}) ", line)
            assert m, line
            got.setdefault((root / m.group(1)).resolve(), []).append((int(m.group(2)), int(m.group(3)), m.group(4)))
        for path in sorted(root.rglob("*.py")):
            assert sorted(got.get(path.resolve(), [])) == _expected(path), path


def _check(root: Path, *args: str) -> tuple[int, list[dict[str, object]]]:
    proc = subprocess.run([tool("reshard-lint"), "check", "--format", "json", *args, "."],
                          capture_output=True, text=True, cwd=root, timeout=300)
    assert proc.returncode in (0, 1), proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def test_check_reports_the_markers_with_related_locations_in_the_other_file() -> None:
    for root in sorted(p for p in PROJECTS.iterdir() if p.is_dir()):
        _, found = _check(root, "--no-cache")
        got = sorted((str(f["filename"]), f["location"]["row"], f["location"]["column"], f["code"])  # type: ignore[index]
                     for f in found)
        want = sorted((str(p.relative_to(root)), line, col, code)
                      for p in root.rglob("*.py") for line, col, code in _expected(p))
        assert got == want, root.name
        meshes = {"crossing": "mypkg/mesh.py", "factories": "lab/meshes.py", "classes": "fleet/models.py",
                  "movers": "ops/meshes.py", "guarded": "hosts/meshes.py",
                  "tables": "tablepkg/mesh.py", "reexports": "meshpkg/meshes.py",
                  "containers": "team/meshes.py", "loops": "steppkg/meshes.py"}.get(root.name)
        if root.name in ("configs", "jitted", "ranges", "relayed", "handed", "callers", "slices",
                         "feeds"):
            # configs: the meshes are built in the importing file, sized by config.py's
            # values; jitted: in either module (test_jitted_functions_of_another_module_*);
            # ranges: one built in the importing file too (test_ranges_of_a_configuration_*);
            # relayed: its one finding is a reordered mesh's (RSH102), with no other place;
            # handed: constructions at the calls that hand them a wrong part
            # (test_a_construction_a_call_hands_a_wrong_part_is_reported_at_the_call);
            # callers: reorderings in functions only other modules call, with what they pass;
            # slices: meshes built in the importing file over the configuration's slices;
            # feeds: a local mesh and the assembly onto it in one module, fed by a generator's
            # caller in another.
            continue
        # The transfer inside another module's function that a call runs with its arguments.
        helpers = {"movers": "ops/placing.py", "containers": "team/sync.py",
                   "loops": "steppkg/publish.py"}.get(root.name)
        for f in found:  # both meshes built in the other module: a factory's body, or its module level
            related = [r.get("filename") for r in f["related"]]  # type: ignore[union-attr]
            assert related[:2] == [meshes, meshes]
            if ", through its " in str(f["message"]):
                # The calls inside the helper's module that lead to the transfer, then it.
                assert related[2:] and set(related[2:]) == {helpers}
                assert f["related"][-1]["message"] == "the transfer this call runs"  # type: ignore[index]
            else:
                assert related == [meshes, meshes]


def test_a_construction_a_call_hands_a_wrong_part_is_reported_at_the_call() -> None:
    # A factory that builds a mesh from the list it is given, and a helper whose default
    # "mesh" is a device list, are silent on their own (their callers decide); a call that
    # hands the factory a reversed list, or leaves the default in, is where the bug is.
    root = PROJECTS / "handed"
    path = root / "main.py"
    result = Engine().lint_source(path.read_text(encoding="utf-8"), str(path))
    flipped, grid, sharding = result.diagnostics
    assert "(kit/meshes.py:10, jax.devices()[::-1]) is built from a reordered device list" in flipped.message
    assert [(Path(r.path or "").name, r.line, r.message) for r in flipped.related] == \
        [("meshes.py", 10, "the construction this call runs")]
    # The reordering is written in this file: undoing it is this file's edit.
    assert flipped.fix is not None and [(e.line, e.col, e.replacement) for e in flipped.fix.edits] == \
        [(12, 32, "jax.devices()")]
    assert (grid.line, grid.fix is not None) == (13, True)
    assert sharding.message.startswith('replicate({"mean": np.zeros((16,), np... builds a NamedSharding at '
                                       "kit/place.py:9: NamedSharding gets a device list (jax.devices())")
    assert sharding.fix is None  # the default to change is in kit/place.py
    # The unsafe fix runs: the call then builds a natural-order mesh (checked by the rule's
    # examples under JAX); applied, the file has no RSH102 left.
    work = Path(tempfile.mkdtemp()) / "handed"
    shutil.copytree(root, work)
    subprocess.run([tool("reshard-lint"), "check", "--no-cache", "--unsafe-fixes", "--fix", "--select", "RSH102",
                    "main.py"], cwd=work, capture_output=True, text=True)
    fixed = (work / "main.py").read_text(encoding="utf-8")
    assert "make_mesh(devices=jax.devices())  # RSH102:15" in fixed
    again = subprocess.run([tool("reshard-lint"), "check", "--no-cache", "--select", "RSH102", "main.py"],
                           cwd=work, capture_output=True, text=True)
    assert again.returncode == 0, again.stdout


@pytest.mark.parametrize("name", ["handed", "callers"])
def test_flake8_finds_what_other_modules_hand_in(name: str) -> None:
    # handed: the gate passes kit/stages.py, whose own text names no device or reordering;
    # callers: lab/meshes.py and lab/engine.py take their parameters from main.py's calls.
    root = PROJECTS / name
    proc = subprocess.run([sys.executable, "-m", "flake8", "--select", "RSH", "--format",
                           "%(path)s:%(row)d:%(col)d:%(code)s", "."], cwd=root, capture_output=True, text=True)
    got = sorted(tuple(line.split(":")) for line in proc.stdout.split())
    want = sorted((f"./{p.relative_to(root)}", str(line), str(col), code)
                  for p in root.rglob("*.py") for line, col, code in _expected(p))
    assert got == want, proc.stderr


def test_a_function_only_other_modules_call_takes_the_literals_they_pass() -> None:
    # build_meshes() through the package's re-export and Engine(mesh) leave n_data and the
    # seed at their defaults; sized(int(sys.argv[1])) passes a value main.py computes and
    # handed_on escapes into a list: those stay unknown, and nothing is claimed there.
    root = PROJECTS / "callers"
    meshes = root / "lab" / "meshes.py"
    result = Engine().lint_source(meshes.read_text(encoding="utf-8"), str(meshes))
    [mirror] = result.diagnostics
    assert (mirror.code, mirror.line) == ("RSH102", 10)
    # main.py is a dependency of the result: an edit there can change it.
    assert "main.py" in {Path(p).name for p in result.deps}
    proc = subprocess.run([tool("reshard-lint"), "check", "--no-cache", "--format", "concise", "."], cwd=root,
                          capture_output=True, text=True)
    assert sorted(line.split(" ")[0] for line in proc.stdout.splitlines() if " RSH" in line) == \
        ["lab/engine.py:13:28:", "lab/meshes.py:10:14:"]


def test_a_transfer_run_for_a_call_is_reported_there_and_counted_once() -> None:
    root = PROJECTS / "movers"
    [d] = Engine().lint_source((root / "ops" / "sync.py").read_text(encoding="utf-8"),
                               str(root / "ops" / "sync.py")).diagnostics
    assert d.message.startswith("replicate(weights, ROLLOUT), through its jax.device_put at ops/placing.py:7, "
                                "moves 'weights' from mesh 'TRAIN' (ops/meshes.py:6, jax.devices())")
    assert d.fix is None  # the code to change may be in either file
    assert [(Path(r.path or "").name, r.line, r.message) for r in d.related][-1] == \
        ("placing.py", 7, "the transfer this call runs")
    # coverage: the transfer is a site of ops/placing.py, not a second one at the call.
    proc = subprocess.run([tool("reshard-lint"), "coverage", "--sites", "--format", "json", "."],
                          capture_output=True, text=True, cwd=root, timeout=300)
    sites = sorted((s["path"], s["line"]) for s in json.loads(proc.stdout)["site_list"])
    assert sites == [("ops/jitted.py", 8), ("ops/placing.py", 7), ("ops/placing.py", 14), ("ops/placing.py", 18),
                     ("ops/placing.py", 22), ("ops/same.py", 9), ("ops/sync.py", 8), ("ops/tree.py", 8)]


def test_sarif_gives_the_call_path_of_a_transfer_run_for_a_call_as_a_code_flow() -> None:
    # A code scanning UI steps from the call reported in ops/sync.py to the put it runs.
    root = PROJECTS / "movers"
    proc = subprocess.run([tool("reshard-lint"), "check", "--no-cache", "--format", "sarif", "ops/sync.py"],
                          capture_output=True, text=True, cwd=root, timeout=300)
    [result] = json.loads(proc.stdout)["runs"][0]["results"]
    [flow] = result["codeFlows"]
    steps = [(s["location"]["physicalLocation"]["artifactLocation"]["uri"].rsplit("/", 1)[-1],
              s["location"]["physicalLocation"]["region"]["startLine"], s["location"]["message"]["text"])
             for s in flow["threadFlows"][0]["locations"]]
    assert steps == [("sync.py", 9, "the call"), ("placing.py", 7, "the transfer this call runs")]
    # Two calls deep: sync() calls place(), whose put moves the leaf.
    root = PROJECTS / "containers"
    proc = subprocess.run([tool("reshard-lint"), "check", "--no-cache", "--format", "sarif", "team/train.py"],
                          capture_output=True, text=True, cwd=root, timeout=300)
    [result] = json.loads(proc.stdout)["runs"][0]["results"]
    steps = [(s["location"]["physicalLocation"]["artifactLocation"]["uri"].rsplit("/", 1)[-1],
              s["location"]["physicalLocation"]["region"]["startLine"], s["location"]["message"]["text"])
             for s in result["codeFlows"][0]["threadFlows"][0]["locations"]]
    assert steps == [("train.py", 9, "the call"), ("sync.py", 10, "the call that leads there"),
                     ("sync.py", 5, "the transfer this call runs")]


def test_jitted_functions_of_another_module_place_their_results_and_trace_the_calls_arguments() -> None:
    # tests/fixtures/projects/jitted: the result of steps.step is on its out_shardings'
    # mesh, built in steps.py; the constraint inside steps.to_rollout meets the argument
    # the call passes, reported at the call and pointing at the constraint.
    root = PROJECTS / "jitted"
    _, found = _check(root, "--no-cache")
    related = {(str(f["filename"]), f["code"]): [(r.get("filename"), r["location"]["row"])  # type: ignore[index]
                                                 for r in f["related"]]  # type: ignore[attr-defined]
               for f in found}
    assert related[("jitpkg/train_step.py", "RSH201")] == [("jitpkg/steps.py", 7), ("jitpkg/steps.py", 8)]
    assert related[("jitpkg/constrain.py", "RSH203")][-1] == ("jitpkg/steps.py", 40)
    # coverage: the constraint is a site of steps.py; the calls of jitted functions with
    # out_shardings are sites of their own, resolved where the call passes an array.
    proc = subprocess.run([tool("reshard-lint"), "coverage", "--sites", "--format", "json", "."],
                          capture_output=True, text=True, cwd=root, timeout=300)
    sites = {(s["path"], s["line"], s["kind"]): s["verdict"] for s in json.loads(proc.stdout)["site_list"]}
    assert sites[("jitpkg/train_step.py", 9, "device_put")] == sites[("jitpkg/reordered.py", 10, "device_put")] \
        == "crossing"
    assert sites[("jitpkg/same.py", 9, "device_put")] == "same_devices"
    # The jitted call inside it is a site too: host data in, placed on its out_shardings.
    assert sites[("jitpkg/same.py", 9, "jit_out")] == "host_data"


def test_ranges_of_a_configuration_module_decide_the_meshes_built_on_them() -> None:
    # tests/fixtures/projects/ranges: meshes over range(0, 8), range(0, 2) and another
    # range(0, 8) of config.py, read through .start/.stop and list(range(*bounds)) by
    # helpers four calls deep, the role functions under a registering decorator,
    # re-exported by the package's `from .meshes import *` with __all__ and by name.
    root = PROJECTS / "ranges"
    proc = subprocess.run([tool("reshard-lint"), "coverage", "--sites", "--format", "json", "."],
                          capture_output=True, text=True, cwd=root, timeout=300)
    sites = {(s["path"], s["line"]): s["verdict"] for s in json.loads(proc.stdout)["site_list"]}
    roles = {line: verdict for (path, line), verdict in sites.items() if path == "rangepkg/roles.py"}
    assert roles == {9: "host_data", 10: "crossing", 11: "crossing", 13: "same_devices", 14: "same_devices",
                     15: "same_devices", 17: "crossing", 18: "crossing"}


CACHE_EDITS = [
    # Rollouts on every device too: the same devices, nothing to report, and the cached
    # results computed against the old mesh.py must not be served.
    ("crossing", "mypkg/mesh.py",
     ["mypkg/sync.py:8", "mypkg/sync_alias.py:8", "mypkg/sync_star.py:8", "scripts/train.py:9"], []),
    # Rollouts on every device, whatever the trainer's constructor is given: the cached
    # results read the old __init__.
    ("classes", "fleet/models.py", ["fleet/instances.py:12", "fleet/instances.py:18", "fleet/train.py:9"],
     ["fleet/instances.py:18"]),
    # The rollout mesh, bound inside an if block, on every device: the gate reads that
    # line too (a module's interface hashes it).
    ("guarded", "hosts/meshes.py", ["hosts/sync.py:9"], []),
]


@pytest.mark.parametrize("project,module,before,after", CACHE_EDITS, ids=[c[0] for c in CACHE_EDITS])
def test_check_cache_follows_edits_of_the_imported_module(tmp_path: Path, project: str, module: str,
                                                          before: list[str], after: list[str]) -> None:
    root = tmp_path / project
    shutil.copytree(PROJECTS / project, root)
    cache = ["--cache-dir", str(tmp_path / "cache")]
    edited = root / module
    original = edited.read_text(encoding="utf-8")

    def findings() -> list[str]:
        return sorted(f"{f['filename']}:{f['location']['row']}" for f in _check(root, *cache)[1])

    assert findings() == before
    assert findings() == before  # warm: from the cache
    edited.write_text(re.sub(r"jax\.devices\(\)\[:\w+\]", "jax.devices()", original), encoding="utf-8")
    assert findings() == after
    edited.write_text(original, encoding="utf-8")
    assert findings() == before


MESH_WITH_HELPERS = """import jax
import numpy as np
from jax.sharding import Mesh


def rollout_devices(n):
    return jax.devices()[:n]


def unused_helper(x):
    return x + 1


# Training on every device, rollouts on the first two: two device sets.
TRAIN = Mesh(np.array(jax.devices()), ("x",))
ROLLOUT = Mesh(np.array(jax.devices()[:2]), ("x",))


def trailing_helper(x):
    return x
"""


def _cached_check(root: Path, mesh: Path, edit: str | None, *args: str) -> tuple[list[str], str]:
    """(findings as file:row of the target mesh:code, what -v says of the cache) of a real
    `check` in ``root``, after writing ``edit`` to ``mesh`` when given."""
    if edit is not None:
        mesh.write_text(edit, encoding="utf-8")
    proc = subprocess.run([tool("reshard-lint"), "check", "-v", "--format", "json", *args, "."],
                          capture_output=True, text=True, cwd=root, timeout=300)
    assert proc.returncode in (0, 1), proc.stderr
    found = sorted(f"{f['filename']}:{f['related'][1]['location']['row']}:{f['code']}"
                   for f in json.loads(proc.stdout))
    [counts] = [line for line in proc.stderr.splitlines() if line.startswith("reshard-lint: ")]
    return found, counts.removeprefix("reshard-lint: ")


def test_check_cache_reanalyses_importers_only_when_the_interface_changes(tmp_path: Path) -> None:
    # mypy's interface hash: an edit that no importer can see re-analyses the edited module
    # alone; one that changes a mesh, a function module-level code calls, or the line a
    # mesh is built on re-analyses its importers too (their messages name that line).
    root = tmp_path / "crossing"
    shutil.copytree(PROJECTS / "crossing", root)
    cache = ["--cache-dir", str(tmp_path / "cache")]
    mesh = root / "mypkg" / "mesh.py"
    text = MESH_WITH_HELPERS
    mesh.write_text(text, encoding="utf-8")

    def run(edit: str | None = None) -> tuple[list[str], str]:
        return _cached_check(root, mesh, edit, *cache)

    def crossing(row: int) -> list[str]:
        return [f"{name}:{row}:RSH201" for name in
                ("mypkg/sync.py", "mypkg/sync_alias.py", "mypkg/sync_star.py", "scripts/train.py")]

    # mypkg/__init__.py only re-exports: the gate reads from mesh.py what the names it
    # re-exports are (any file that imports is asked), so a change of what mesh.py binds
    # reaches it too (everyone); a line that moves does not.
    importers_too, mesh_alone = ("6 files read, 1 served from the cache, 5 analysed.",
                                 "6 files read, 5 served from the cache, 1 analysed.")
    everyone = "6 files read, 0 served from the cache, 6 analysed."
    assert run() == (crossing(16), "6 files read, 0 served from the cache, 6 analysed.")
    assert run() == (crossing(16), "6 files read, 6 served from the cache, 0 analysed.")
    # Inside a function module-level code never calls, no line moved: mesh.py alone.
    assert run(text.replace("return x + 1", "return x * 2 + 1")) == (crossing(16), mesh_alone)
    # Lines added to a function after every module-level line: mesh.py alone.
    assert run(text.replace("    return x\n", "    y = x\n    return y\n")) == (crossing(16), mesh_alone)
    # A line added above the meshes: every importer, and their messages follow it.
    assert run(text.replace("    return x + 1\n", "    y = x + 1\n    return y\n")) == (crossing(17), importers_too)
    # ROLLOUT now built by a function module-level code calls: importers again ...
    text = text.replace("np.array(jax.devices()[:2])", "np.array(rollout_devices(2))")
    assert run(text) == (crossing(16), everyone)
    # ... and an edit inside that function reaches them.
    assert run(text.replace("jax.devices()[:n]", "jax.devices()")) == ([], importers_too)


def test_check_cache_keeps_interfaces_computed_in_the_workers(tmp_path: Path) -> None:
    # Past 64 files `check` gates and analyses in worker processes: the interfaces stored
    # are the workers' (the summaries' blanked text, the gate's text tests). Importers that
    # used the summary of mesh.py follow the line a mesh moved to; those the gate turned
    # away having read only mesh.py's imports and assignments keep their results.
    root = tmp_path / "crossing"
    shutil.copytree(PROJECTS / "crossing", root)
    mesh = root / "mypkg" / "mesh.py"
    mesh.write_text(MESH_WITH_HELPERS, encoding="utf-8")
    for i in range(35):
        (root / "mypkg" / f"placed_{i:02}.py").write_text(
            "import numpy as np\nimport jax\nfrom jax.sharding import NamedSharding, PartitionSpec as P\n"
            "from mypkg.mesh import ROLLOUT, TRAIN\n\n"
            "x = jax.device_put(np.zeros(8), NamedSharding(TRAIN, P()))\n"
            "y = jax.device_put(x, NamedSharding(ROLLOUT, P()))  # RSH201\n",
            encoding="utf-8")
        (root / "mypkg" / f"helped_{i:02}.py").write_text(
            "from mypkg.mesh import unused_helper\n\n# not a device_put: a helper of the mesh module\n"
            "print(unused_helper(1))\n", encoding="utf-8")

    def run(edit: str | None = None) -> tuple[list[str], str]:
        return _cached_check(root, mesh, edit, "-j", "2", "--cache-dir", str(tmp_path / "cache"))

    crossing = sorted(f"{name}:{{}}:RSH201" for name in (
        "mypkg/sync.py", "mypkg/sync_alias.py", "mypkg/sync_star.py", "scripts/train.py",
        *(f"mypkg/placed_{i:02}.py" for i in range(35))))
    assert run() == ([c.format(16) for c in crossing], "76 files read, 0 served from the cache, 76 analysed.")
    # Inside a function module-level code never calls: mesh.py alone.
    assert run(MESH_WITH_HELPERS.replace("return x + 1", "return x * 2 + 1")) == \
        ([c.format(16) for c in crossing], "76 files read, 75 served from the cache, 1 analysed.")
    # A line added above the meshes: the 39 importers that used its summary, and mesh.py.
    moved = MESH_WITH_HELPERS.replace("    return x + 1\n", "    y = x + 1\n    return y\n")
    assert run(moved) == ([c.format(17) for c in crossing], "76 files read, 36 served from the cache, 40 analysed.")


def test_an_imported_module_that_does_not_parse_is_unknown(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("")
    pkg = tmp_path / "app"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "broken.py").write_text("import jax\nfrom jax.sharding import Mesh\nMESH = Mesh(jax.devices(, ('x',))\n")
    user = pkg / "user.py"
    user.write_text(
        "import jax\nimport numpy as np\nfrom jax.sharding import Mesh, NamedSharding, PartitionSpec as P\n"
        "from .broken import MESH\n"
        "x = jax.device_put(np.zeros(8), NamedSharding(Mesh(np.array(jax.devices()[:2]), ('x',)), P('x')))\n"
        "y = jax.device_put(x, NamedSharding(MESH, P()))\n")
    result = Engine().lint_source(user.read_text(), str(user))
    assert result.error is None and result.diagnostics == []


def test_symlinked_package_and_self_import_terminate(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("")
    real = tmp_path / "real"
    real.mkdir()
    (real / "__init__.py").write_text("from .mesh import MESH\nfrom real import MESH as AGAIN\n")
    (real / "mesh.py").write_text(
        "import jax\nimport numpy as np\nfrom jax.sharding import Mesh\nfrom real.mesh import MESH as SELF\n"
        "MESH = Mesh(np.array(jax.devices()[:2]), ('x',))\n")
    (tmp_path / "alias").symlink_to(real, target_is_directory=True)
    user = tmp_path / "user.py"
    user.write_text(
        "import jax\nimport numpy as np\nfrom jax.sharding import Mesh, NamedSharding, PartitionSpec as P\n"
        "from alias import MESH\n"
        "x = jax.device_put(np.zeros(8), NamedSharding(Mesh(np.array(jax.devices()), ('x',)), P('x')))\n"
        "y = jax.device_put(x, NamedSharding(MESH, P()))  # RSH201:5\n")
    result = Engine().lint_source(user.read_text(), str(user))
    assert [(d.line, d.code) for d in result.diagnostics] == [(6, "RSH201")]


def test_check_cache_does_not_keep_a_rejection_made_against_an_old_module(tmp_path: Path) -> None:
    # The user module names no devices, and the module it imports builds none at first:
    # nothing to analyse. Once that module builds a mesh, the file must be analysed again.
    root = tmp_path / "proj"
    (root / "app").mkdir(parents=True)
    (root / "pyproject.toml").write_text("")
    (root / "app" / "__init__.py").write_text("")
    cfg = root / "app" / "cfg.py"
    cfg.write_text("ROLLOUT = None\n")
    (root / "app" / "sync.py").write_text(
        "import jax\nimport numpy as np\nfrom jax.sharding import NamedSharding, PartitionSpec as P\n"
        "from .cfg import ROLLOUT, TRAIN\n"
        "w = jax.device_put(np.zeros(8), NamedSharding(TRAIN, P('x')))\n"
        "r = jax.device_put(w, NamedSharding(ROLLOUT, P()))\n")
    cache = ["--cache-dir", str(tmp_path / "cache")]
    assert _check(root, *cache) == (0, [])
    cfg.write_text("import jax\nimport numpy as np\nfrom jax.sharding import Mesh\n"
                   "TRAIN = Mesh(np.array(jax.devices()), ('x',))\n"
                   "ROLLOUT = Mesh(np.array(jax.devices()[:2]), ('x',))\n")
    status, found = _check(root, *cache)
    assert status == 1 and [(f["filename"], f["code"]) for f in found] == [("app/sync.py", "RSH201")]


MOVER = """\
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

TRAIN = Mesh(np.array(jax.devices()), ("x",))
ROLLOUT = Mesh(np.array(jax.devices()[::-1]), ("x",))


def place(value, mesh):
    return jax.device_put(value, NamedSharding(mesh, P("x")))
"""

# No device word, no jax import: the meshes and the move come through imports.
CALLER = """\
import numpy as np
from pkg.meshes import place, TRAIN, ROLLOUT

x = place(np.zeros(8), TRAIN)
y = place(x, ROLLOUT)
"""


def test_a_script_that_only_calls_imported_movers_is_analysed(tmp_path: Path) -> None:
    # What is analysed is decided from the program (its imports and calls), not from the
    # words in its text: main.py names no device, mesh or transfer.
    root = tmp_path / "movers"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "meshes.py").write_text(MOVER)
    (root / "main.py").write_text(CALLER)
    status, found = _check(root)
    assert status == 1 and [(f["filename"], f["location"]["row"], f["location"]["column"], f["code"])  # type: ignore[index]
                            for f in found] \
        == [("main.py", 5, 5, "RSH202"), ("pkg/meshes.py", 6, 11, "RSH102")], found
    flake8 = subprocess.run([sys.executable, "-m", "flake8", "--select=RSH", "main.py"], cwd=root,
                            capture_output=True, text=True)
    assert flake8.stdout.splitlines() == [f"main.py:5:5: RSH202 {found[0]['message']}"], flake8.stdout + flake8.stderr


STAR_USER = """\
import jax
import numpy as np
from jax.sharding import NamedSharding, PartitionSpec as P

from starpkg import ROLLOUT, TRAIN

weights = jax.device_put(np.zeros(8), NamedSharding(TRAIN, P('x')))
moved = jax.device_put(weights, NamedSharding(ROLLOUT, P()))
"""
STAR_MESHES = """\
import jax
import numpy as np
from jax.sharding import Mesh

TRAIN = Mesh(np.array(jax.devices()), ('x',))
ROLLOUT = Mesh(np.array(jax.devices()[:4]), ('x',))
"""


@pytest.mark.parametrize("init, found", [
    ("from .meshes import *\n", [(8, 9, "RSH201")]),
    # The package binds the name itself after the star: its own value, the same mesh.
    ("from .meshes import *\nROLLOUT = TRAIN\n", []),
    # Two star imports that may both bind it: which one did is not known here.
    ("from .meshes import *\nfrom .other import *\n", []),
])
def test_a_star_import_in_init_re_exports_the_names_of_its_module(
        tmp_path: Path, init: str, found: list[tuple[int, int, str]]) -> None:
    (tmp_path / "pyproject.toml").write_text("")
    pkg = tmp_path / "starpkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(init)
    (pkg / "meshes.py").write_text(STAR_MESHES)
    (pkg / "other.py").write_text(STAR_MESHES.replace("[:4]", "[::-1]"))
    user = tmp_path / "train.py"
    user.write_text(STAR_USER)
    result = Engine().lint_source(STAR_USER, str(user))
    assert [(d.line, d.col + 1, d.code) for d in result.diagnostics] == found


def test_check_cache_follows_edits_of_a_configuration_module(tmp_path: Path) -> None:
    # tests/fixtures/projects/configs: train.py sizes meshes by a constant of config.py and
    # a field default of its dataclass. An edit of either re-analyses train.py (the
    # constant is a module-level assignment the gate's part hashes, the dataclass's body
    # is in the summary part train.py read); an edit of a comment there does not change
    # what it finds.
    root = tmp_path / "configs"
    shutil.copytree(PROJECTS / "configs", root)
    cache = ["--cache-dir", str(tmp_path / "cache")]
    config = root / "cfgpkg" / "config.py"
    original = config.read_text(encoding="utf-8")

    def findings(text: str) -> list[str]:
        config.write_text(text, encoding="utf-8")
        return sorted(f"{f['filename']}:{f['location']['row']}" for f in _check(root, *cache)[1])

    layout = ["cfgpkg/layout.py:11", "cfgpkg/train.py:23"]
    every = sorted(["cfgpkg/train.py:13", "cfgpkg/train.py:16", *layout])
    assert findings(original) == every
    assert findings(original) == every  # warm
    assert findings(original.replace("NUM_DEVICES = 4", "NUM_DEVICES = 8")) == sorted(["cfgpkg/train.py:16", *layout])
    assert findings(original) == every
    assert findings(original.replace("replicas: int = 2", "replicas: int = 8")) == sorted(["cfgpkg/train.py:13", *layout])
    # a field of the frozen instance the module holds, and the flag that decides a branch
    assert findings(original.replace("stop: int = 4", "stop: int = 8")) == sorted(
        ["cfgpkg/train.py:13", "cfgpkg/train.py:16", "cfgpkg/layout.py:11"])
    assert findings(original.replace("split: bool = True", "split: bool = False")) == sorted(
        ["cfgpkg/train.py:13", "cfgpkg/train.py:16", "cfgpkg/train.py:23"])
    assert findings(original.replace("# A configuration", "# The configuration")) == every
