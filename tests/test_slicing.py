"""Slicing long files changes nothing the analysis reports."""

from __future__ import annotations

import ast
import pickle

import pytest

from reshard_lint.engine.engine import Engine
from reshard_lint.stages import newer_syntax, prepared
from reshard_lint.rules import all_rules

from .conftest import FIXTURES

ENGINE = Engine()
SOURCES = [(f"{r.code}-{i}", ex.code) for r in all_rules() for i, ex in enumerate(r.examples)] + [
    (p.name, p.read_text(encoding="utf-8")) for p in sorted(FIXTURES.glob("*.py"))]


@pytest.mark.parametrize("name,source", SOURCES, ids=[n for n, _ in SOURCES])
def test_sliced_analysis_is_the_same(name: str, source: str) -> None:
    whole = ENGINE.lint_source(source, name, force=True, slice_min_lines=10**9)
    sliced = ENGINE.lint_source(source, name, force=True, slice_min_lines=0)
    # As `check` does it: the slice made where the tree is (a gate worker), sent over.
    handed = pickle.loads(pickle.dumps(prepared.prepare(source, newer_syntax.parse(source), 0)))
    elsewhere = ENGINE.lint_source(source, name, force=True, prepared=handed)

    def keys(result):  # type: ignore[no-untyped-def]
        return [(d.sort_key, d.fix) for d in result.diagnostics]

    assert keys(sliced) == keys(whole) == keys(elsewhere)


def test_generated_giant_keeps_its_findings_at_their_lines() -> None:
    head = "import jax\nfrom jax.sharding import Mesh\nm = Mesh(jax.devices()[::-1], ('x',))\n"
    body = "".join(f"v{i} = m if {i} % 3 else None\n" for i in range(20_000))
    tail = "n = Mesh(jax.devices()[::-1], ('x',))\n"
    result = ENGINE.lint_source(head + body + tail, "giant.py")
    assert [(d.line, d.col, d.code) for d in result.diagnostics] == [(3, 4, "RSH102"), (20_004, 4, "RSH102")]


def test_components_the_gate_rules_out_are_not_parsed() -> None:
    # A test file: many methods sharing only imports, one with a finding, and a helper
    # whose callers must stay together (its parameters are what all of them pass).
    head = ("import jax\nimport numpy as np\nfrom jax.sharding import Mesh, NamedSharding, PartitionSpec as P\n\n\n"
            "def helper(mesh):\n    return NamedSharding(mesh, P('x'))\n\n\n"
            "class T:\n")
    methods = "".join(f"    def test_{i}(self):\n        x = np.ones({i})\n        return x + 1\n\n"
                      for i in range(400))
    bug = ("    def test_bug(self):\n        m = Mesh(np.array(jax.devices()), ('x',))\n"
           "        a = jax.device_put(np.ones(8), helper(m))\n"
           "        h = Mesh(np.array(jax.devices()[:4]), ('x',))\n"
           "        return jax.device_put(a, NamedSharding(h, P('x')))\n")
    source = head + methods + bug
    whole = ENGINE.lint_source(source, "t.py", slice_min_lines=10**9)
    sliced = ENGINE.lint_source(source, "t.py")
    assert [(d.line, d.col, d.code) for d in sliced.diagnostics] == \
        [(d.line, d.col, d.code) for d in whole.diagnostics] == [(source.count("\n"), 15, "RSH201")]
    text, kept, _ = prepared.sliced(source, ast.parse(source), None)
    assert kept is not None and len(kept) < 30
    assert "def helper" in text and "def test_bug" in text and "def test_7(" not in text


def test_module_level_callers_do_not_keep_their_component_whole() -> None:
    # A module-level statement calls a helper that 400 tests call too: one component.
    # The gate decides it like any other (the module-level statements counted once), so
    # a component without a finding is left out even though module-level code reads it;
    # one whose finding is reached from module level is kept.
    head = ("import jax\nimport numpy as np\nfrom jax.sharding import Mesh, NamedSharding, PartitionSpec as P\n\n\n"
            "def sizes():\n    return [jax.device_count(), 2]\n\n\n"
            "SIZES = sizes()\n\n\n"
            "class T:\n")
    methods = "".join(f"    def test_{i}(self):\n        return np.ones(sizes()[0] + {i})\n\n" for i in range(400))
    clean = head + methods
    text, kept, _ = prepared.sliced(clean, ast.parse(clean), None)
    assert kept is not None and "def sizes" not in text and "def test_7(" not in text
    bug = ("\n\nMESH = Mesh(np.array(jax.devices()), ('x',))\n"
           "def put(x):\n    h = Mesh(np.array(jax.devices()[:4]), ('x',))\n"
           "    return jax.device_put(x, NamedSharding(h, P('x')))\n\n\n"
           "B = put(jax.device_put(np.ones(8), NamedSharding(MESH, P('x'))))\n")
    source = clean + bug
    whole = ENGINE.lint_source(source, "t.py", slice_min_lines=10**9)
    sliced = ENGINE.lint_source(source, "t.py")
    line = source.count("\n") - 3
    assert [(d.line, d.code) for d in sliced.diagnostics] == [(d.line, d.code) for d in whole.diagnostics] == \
        [(line, "RSH201")]
    text, kept, _ = prepared.sliced(source, ast.parse(source), None)
    assert kept is not None and "def put" in text and "def test_7(" not in text


def test_counts_taken_while_slicing_are_the_whole_files() -> None:
    # The analysis lets call sites decide a function's parameters only if it sees all of
    # them: a sliced file's counts come from the walk that groups its units, and must be
    # those of the whole text (annotations never count; decorators, bounds and defaults do).
    source = ("import jax\nfrom functools import partial\n\n\n"
              "@register(kind=k(1))\nclass A[T: bound(b)](Base, metaclass=meta(M)):\n"
              "    x: ann(1) = val(f)\n"
              "    def m[U: h(y)](self, a: Ann = d(q), *r: R) -> ret(w):\n"
              "        g = lambda v: helper(v)\n"
              "        return (jax.jit(self.m), partial(helper, 1),\n"
              "                jax.tree.map(helper, [z(i) for i in a if c(i)]))\n"
              + "".join(f"\n\ndef t{i}(mesh):\n    return helper(mesh).sharding\n" for i in range(150)))
    from reshard_lint.stages.call_counts import SyntaxCounts
    tree = newer_syntax.parse(source)
    _, kept, counts = prepared.sliced(source, tree, None)
    assert kept is not None and counts is not None
    whole = SyntaxCounts.of(source, tree)
    for field in ("calls", "refs", "attr_calls", "attr_refs", "wrapped"):
        got = {k: v for k, v in getattr(counts, field).items() if v}
        assert got == getattr(whole, field), field


PROJECTS = FIXTURES / "projects"
PROJECT_FILES = sorted(p for p in PROJECTS.rglob("*.py"))


@pytest.mark.parametrize("path", PROJECT_FILES, ids=[str(p.relative_to(PROJECTS)) for p in PROJECT_FILES])
def test_files_importing_meshes_sliced_find_the_same(path) -> None:  # type: ignore[no-untyped-def]
    # The units that read names imported from the project seed the slice (components.py).
    source, name = path.read_text(encoding="utf-8"), str(path)
    imported = ENGINE.projects.device_imports(source, name)[0]
    whole = ENGINE.lint_source(source, name, force=True, slice_min_lines=10**9, imported=imported)
    sliced = ENGINE.lint_source(source, name, force=True, slice_min_lines=0, imported=imported)
    handed = pickle.loads(pickle.dumps(prepared.prepare(source, newer_syntax.parse(source), 0, imported)))
    elsewhere = ENGINE.lint_source(source, name, force=True, prepared=handed)

    def keys(result):  # type: ignore[no-untyped-def]
        return [(d.sort_key, d.fix, d.message) for d in result.diagnostics]

    assert keys(sliced) == keys(whole) == keys(elsewhere)


def _test_module(tmp_path, head: str, uses: str):  # type: ignore[no-untyped-def]
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "meshes.py").write_text(
        "import jax\nimport numpy as np\nfrom jax.sharding import Mesh\n\n"
        "TRAIN = Mesh(np.array(jax.devices()), ('x',))\nROLLOUT = Mesh(np.array(jax.devices()[:4]), ('x',))\n")
    methods = "".join(f"    def test_{i}(self):\n        return np.ones({i}) + 1\n\n" for i in range(200))
    source = ("import jax\nimport numpy as np\nfrom jax.sharding import NamedSharding, PartitionSpec as P\n"
              + head + "\n\nclass T:\n" + methods + uses)
    path = tmp_path / "pkg" / "test_sync.py"
    path.write_text(source)
    return source, str(path)


@pytest.mark.parametrize("head,uses", [
    ("from pkg.meshes import ROLLOUT, TRAIN\n",
     "    def test_sync(self):\n        w = jax.device_put(np.ones(8), NamedSharding(TRAIN, P('x')))\n"
     "        return jax.device_put(w, NamedSharding(ROLLOUT, P()))\n"),
    ("import pkg.meshes as meshes\n",
     "    def test_sync(self):\n        w = jax.device_put(np.ones(8), NamedSharding(meshes.TRAIN, P('x')))\n"
     "        return jax.device_put(w, NamedSharding(meshes.ROLLOUT, P()))\n"),
], ids=["from-import", "module-alias"])
def test_long_file_importing_meshes_is_sliced_to_the_units_reading_them(tmp_path, head: str, uses: str) -> None:  # type: ignore[no-untyped-def]
    source, path = _test_module(tmp_path, head, uses)
    engine = Engine()
    imported = engine.projects.device_imports(source, path)[0]
    assert imported
    text, kept, _ = prepared.sliced(source, ast.parse(source), None, imported)
    assert kept is not None and "def test_sync" in text and "def test_7(" not in text
    whole = engine.lint_source(source, path, force=True, slice_min_lines=10**9, imported=imported)
    sliced = engine.lint_source(source, path)  # as flake8 and check find it: gated, then sliced
    assert [(d.line, d.col, d.code) for d in sliced.diagnostics] == \
        [(d.line, d.col, d.code) for d in whole.diagnostics] == [(source.count("\n"), 15, "RSH201")]


def test_star_import_of_the_project_is_not_sliced(tmp_path) -> None:  # type: ignore[no-untyped-def]
    source, path = _test_module(tmp_path, "from pkg.meshes import *\n",
                                "    def test_sync(self):\n"
                                "        return jax.device_put(np.ones(8), NamedSharding(TRAIN, P('x')))\n")
    imported = Engine().projects.device_imports(source, path)[0]
    assert "*" in imported
    assert prepared.sliced(source, ast.parse(source), None, imported)[1] is None
