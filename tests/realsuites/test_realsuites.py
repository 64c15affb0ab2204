"""Public JAX projects' own tests under the oracle (tests/realsuites/realsuites.py).

``-m real_suites`` downloads each project's sdist at its pinned version from PyPI (the
cache: ``RESHARD_LINT_REALSUITES_CACHE``) and runs its selected test files; no verdict
of ``reshard-lint coverage`` may be contradicted by a run, and every file ends as
``STATUS`` says. A project whose sdist or dependencies cannot be downloaded is skipped
with pip's message; nothing else skips. The default run checks the harness's own logic
on a tiny made-up project (no download).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from . import realsuites as rs
from .projects import PROJECTS, Project

# Files that do not end "ok" in one process, with the reason read from the run
# (tests/realsuites/projects.py leaves out the files that cannot import at all).
STATUS: dict[str, str] = {
    # 530 cases pass when the file runs alone (263 s); it sets XLA_FLAGS to 4 CPU devices
    # at import, but the recording child has initialised 8 before: 8 cases build a mesh of
    # jax.local_device_count() devices and put a (4, 4) array with P('data') on it
    # (IndivisibleError). The harness's limit, not flax's (docs/oracle.md).
    "flax/tests/nnx/transforms_test.py": "error",
    # setUpModule asks chex.set_n_cpu_devices() for 1 device; 8 are up: refused
    "chex/chex/_src/fake_test.py": "error",
    # held out, neither imports with jax 0.10.2 (the project's code, not the harness):
    # distrax needs tensorflow-probability, whose 0.25.0 JAX substrate reads
    # jax.interpreters.xla.pytype_aval_mappings
    "rlax/rlax/_src/policy_gradients_test.py": "error",
    # haliax 1.3 imports jax._src.tree_util.BuiltInKeyEntry (pytest: collection error)
    "haliax/tests/test_partitioning.py": "error",
}
# Findings per project, (kind, file in the sdist, line), each one for the lead to look at
# (docs/oracle.md says what the run showed); the comparison is exact both ways.
KNOWN: dict[str, set[tuple[str, str, int]]] = {}


def _check(o: rs.Outcome) -> None:
    if o.unavailable:
        pytest.skip(f"{o.project.key} cannot be downloaded: {o.unavailable[:300]}")
    problems = []
    for pid, st in o.statuses.items():
        want = STATUS.get(pid, "ok")
        if st != want:
            problems.append(f"{pid}: ended {st} ({o.errors[pid][:200]}), expected {want}")
    base = str(o.src) + "/"
    got = {(f["kind"], f["path"].replace(base, ""), f["line"]) for f in o.findings}
    known = KNOWN.get(o.project.name, set())
    problems += [f"new finding {k}" for k in sorted(got - known)]
    problems += [f"listed finding no longer seen: {k}" for k in sorted(known - got)]
    assert not problems, "\n".join(problems) + "\n\n" + rs.report([o])


@pytest.mark.real_suites
@pytest.mark.parametrize("project", [p for p in PROJECTS if not p.held_out], ids=lambda p: p.key)
def test_development_project(project: Project) -> None:
    o = rs.run_project(project)
    print(rs.report([o]))
    _check(o)


@pytest.mark.real_suites
@pytest.mark.parametrize("project", [p for p in PROJECTS if p.held_out], ids=lambda p: p.key)
def test_held_out_project(project: Project) -> None:
    o = rs.run_project(project)
    print(rs.report([o]))
    _check(o)


# ---------------------------------------------------------------- the harness itself

def test_selection_rule(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "a_test.py").write_text("m = jax.make_mesh((8,), ('x',))\n")
    (tmp_path / "pkg" / "b_test.py").write_text("assert 1 + 1 == 2\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_c.py").write_text("y = jax.device_put(x)\n")
    (tmp_path / "tests" / "test_utils.py").write_text("y = jax.device_put(x)\n")
    (tmp_path / "tests" / "test_d.py").write_text("NamedSharding(mesh, P())\n")
    p = Project("demo", "1.0", left_out=(("tests/test_d.py", "a reason"),))
    assert p.selected(tmp_path) == ["pkg/a_test.py", "tests/test_c.py"]


def test_entry_points(tmp_path: Path) -> None:
    (tmp_path / "a_test.py").write_text("import jax\njax.device_put(1)\n"
                                        "if __name__ == '__main__':\n    pass\n")
    (tmp_path / "test_b.py").write_text("import jax\ndef test_x():\n    jax.device_put(1)\n")
    progs = rs.programs(Project("demo", "1.0", ("x==1",)), tmp_path, tmp_path / "deps")
    a, b = progs
    assert (a.file, a.module, a.job()["path"]) == ("a_test.py", None, [str(tmp_path / "deps")])
    assert b.module == "pytest" and b.argv[0] == "test_b.py" and b.job()["argv"][0] == "test_b.py"
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "src" / "pkg" / "__init__.py").write_text("")
    (c, _) = rs.programs(Project("demo", "1.0"), tmp_path, tmp_path / "deps")
    assert c.job()["path"] == [str(tmp_path / "src")]  # a src layout's packages


def test_figures_match_sites_like_compare() -> None:
    same = {"k": "array", "devices": [0, 1]}
    other = {"k": "sharding", "devices": [2, 3]}
    coverage = {"site_list": [
        {"path": "/p/a.py", "line": 3, "col": 5, "kind": "device_put", "verdict": "same_devices",
         "detail": ""},
        {"path": "/p/a.py", "line": 4, "col": 5, "kind": "device_put", "verdict": "unresolved",
         "detail": "a parameter no call site feeds"},
    ]}
    sites = [
        {"path": "/p/a.py", "line": 3, "col": 5, "api": "device_put", "pairs": [{"src": same, "dst": same}]},
        {"path": "/p/a.py", "line": 4, "col": 9, "api": "device_put", "pairs": [{"src": same, "dst": other}]},
        {"path": "/p/a.py", "line": 6, "col": 1, "api": "np.asarray",
         "pairs": [{"src": same, "dst": {"k": "host"}}]},
        {"path": "/p/a.py", "line": 7, "col": 1, "api": "binop", "pairs": [{"src": same, "dst": same}]},
    ]
    partial = {"t": {"sites": sites[:1] * 3}}  # read for process claims only: not counted
    fig = rs.figures(coverage, {"cpu": {"t": {"sites": sites}}, "proc1of2": partial})
    c = fig["counts"]
    assert (c["reached_placement"], c["reached_fetch"], c["reached_binop"]) == (2, 1, 1)
    assert (c["site_placement"], c["verdict_same_devices"], c["verdict_unresolved"]) == (2, 1, 1)
    assert c["crossing_placement"] == 1
    assert fig["unresolved_by_reason"] == {"a parameter no call site feeds": 1}
    assert fig["not_a_site_by_api"] == {"np.asarray": 1, "binop": 1}
