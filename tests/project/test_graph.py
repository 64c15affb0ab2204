"""Imports between a project's modules, and walks over them that always end."""

from __future__ import annotations

import ast
from pathlib import Path

from reshard_lint.project import Import, ImportGraph, ModuleIndex, imports_of, layout_for


def _project(root: Path, files: dict[str, str]) -> ModuleIndex:
    (root / "pyproject.toml").write_text("")
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return ModuleIndex(layout_for(str(root)))


def test_every_spelling_of_a_project_import(tmp_path: Path) -> None:
    index = _project(tmp_path, {
        "mypkg/__init__.py": "from .mesh import MESH\n",
        "mypkg/mesh.py": "MESH = None\n",
        "mypkg/sub/__init__.py": "",
        "mypkg/sub/util.py": "",
        "train.py": "",
    })
    source = (
        "import jax\n"
        "import numpy as np\n"
        "import mypkg.sub.util\n"
        "import mypkg.mesh as m\n"
        "from mypkg import MESH\n"
        "from mypkg import mesh\n"
        "from mypkg.mesh import MESH as M2\n"
        "from mypkg.sub import *\n"
        "from jax.sharding import Mesh\n"
        "def f():\n"
        "    from mypkg.sub import util\n"
    )
    got = imports_of(ast.parse(source), index.find("train"), index)
    assert got == [
        Import("mypkg", "mypkg", None, 3),
        Import("m", "mypkg.mesh", None, 4),
        Import("MESH", "mypkg", "MESH", 5),
        Import("mesh", "mypkg.mesh", None, 6),
        Import("M2", "mypkg.mesh", "MESH", 7),
        Import("*", "mypkg.sub", "*", 8),
        Import("util", "mypkg.sub.util", None, 11),
    ]


def test_relative_imports_resolve_against_the_importer(tmp_path: Path) -> None:
    index = _project(tmp_path, {
        "pkg/__init__.py": "from . import mesh\nfrom .mesh import MESH\n",
        "pkg/mesh.py": "from ..outside import x\nfrom . import missing\n",
    })
    init = index.find("pkg")
    assert imports_of(ast.parse(Path(init.path).read_text()), init, index) == [
        Import("mesh", "pkg.mesh", None, 1), Import("MESH", "pkg.mesh", "MESH", 2)]
    mesh = index.find("pkg.mesh")
    # Above the top-level package, and a name the package does not have: not the project's.
    assert imports_of(ast.parse(Path(mesh.path).read_text()), mesh, index) == [Import("missing", "pkg", "missing", 2)]


def test_a_script_outside_the_roots_has_no_relative_imports(tmp_path: Path) -> None:
    index = _project(tmp_path, {"pkg/__init__.py": ""})
    assert imports_of(ast.parse("from . import pkg\nimport pkg\n"), None, index) == [Import("pkg", "pkg", None, 2)]


def test_cycles_self_imports_and_broken_modules_end(tmp_path: Path) -> None:
    index = _project(tmp_path, {
        "a.py": "import b\nimport a\n",
        "b.py": "from c import X\n",
        "c.py": "import a\nX = 1\n",
        "bad.py": "def broken(:\n",
        "uses_bad.py": "import bad\n",
    })
    graph = ImportGraph(index)
    assert graph.dependencies("a") == {"a", "b", "c"}
    assert graph.dependencies("uses_bad") == {"bad"}
    assert graph.imports("bad") == [] and graph.broken == {"bad"}
    assert graph.importers({"c"}, ["a", "b", "c", "bad", "uses_bad"]) == {"a", "b", "c"}


def test_importing_a_submodule_runs_its_packages(tmp_path: Path) -> None:
    index = _project(tmp_path, {
        "p/__init__.py": "from p.q.mesh import MESH\n",
        "p/q/__init__.py": "",
        "p/q/mesh.py": "MESH = 0\n",
        "main.py": "from p.q import mesh\n",
    })
    assert ImportGraph(index).dependencies("main") == {"p", "p.q", "p.q.mesh"}


def test_a_thousand_modules(tmp_path: Path) -> None:
    files = {"big/__init__.py": "".join(f"from .m{i} import f{i}\n" for i in range(1000))}
    files.update({f"big/m{i}.py": f"from . import m{(i + 1) % 1000}\ndef f{i}():\n    pass\n" for i in range(1000)})
    files["main.py"] = "import big\n"
    graph = ImportGraph(_project(tmp_path, files))
    deps = graph.dependencies("main")
    assert len(deps) == 1001 and "big.m999" in deps


def test_the_unsaved_text_of_an_open_document_is_read(tmp_path: Path) -> None:
    index = _project(tmp_path, {"mod.py": "", "main.py": "import mod\n"})
    unsaved = {str(tmp_path / "mod.py"): "import main\n"}
    graph = ImportGraph(index, read=lambda p: unsaved.get(p) or Path(p).read_text())
    assert graph.dependencies("mod") == {"main", "mod"}
