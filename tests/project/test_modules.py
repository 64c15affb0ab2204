"""Roots, import roots and module files, as Python would find them."""

from __future__ import annotations

import os
from pathlib import Path

from reshard_lint.project import ModuleIndex, find_root, layout_for
from reshard_lint.project.roots import MARKERS


def _tree(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)


def test_the_root_is_the_nearest_marker(tmp_path: Path) -> None:
    _tree(tmp_path, {"repo/pyproject.toml": "", "repo/pkg/sub/mod.py": "", "repo/pkg/sub/setup.cfg": ""})
    assert find_root(str(tmp_path / "repo/pkg/sub/mod.py")) == str(tmp_path / "repo/pkg/sub")
    _tree(tmp_path, {"other/.git/HEAD": "", "other/a/b.py": ""})
    assert find_root(str(tmp_path / "other/a/b.py")) == str(tmp_path / "other")


def test_without_a_marker_the_files_directory_is_the_root(tmp_path: Path) -> None:
    _tree(tmp_path, {"loose/train.py": ""})
    # Unless the machine's /tmp sits in a project, the root is the file's directory;
    # otherwise it is the ancestor that holds a marker.
    root = find_root(str(tmp_path / "loose/train.py"))
    assert root == str(tmp_path / "loose") or (
        str(tmp_path).startswith(root) and any(os.path.exists(os.path.join(root, m)) for m in MARKERS))


def test_without_a_marker_a_package_resolves_from_the_directory_above_it(tmp_path: Path) -> None:
    _tree(tmp_path, {"work/pkg/__init__.py": "", "work/pkg/sub/__init__.py": "",
                     "work/pkg/sub/moves.py": "", "work/pkg/main.py": ""})
    root = find_root(str(tmp_path / "work/pkg/sub/moves.py"))
    if any(os.path.exists(os.path.join(root, m)) for m in MARKERS):
        return  # the machine's /tmp sits in a project: the marker decides (test above)
    assert root == str(tmp_path / "work")
    index = ModuleIndex(layout_for(str(tmp_path / "work/pkg/main.py")))
    assert index.module_name(str(tmp_path / "work/pkg/sub/moves.py")) == "pkg.sub.moves"
    assert index.find("pkg.sub.moves").path == str(tmp_path / "work/pkg/sub/moves.py")


def test_flat_and_src_layouts(tmp_path: Path) -> None:
    _tree(tmp_path, {"pyproject.toml": "", "src/mypkg/__init__.py": "", "src/mypkg/mesh.py": "",
                     "scripts/train.py": "", "tools.py": ""})
    layout = layout_for(str(tmp_path / "scripts/train.py"))
    assert layout.import_roots == (str(tmp_path), str(tmp_path / "src"))
    index = ModuleIndex(layout)
    assert index.find("mypkg.mesh").path == str(tmp_path / "src/mypkg/mesh.py")
    assert index.find("mypkg").is_package
    assert index.find("tools").path == str(tmp_path / "tools.py")
    assert index.find("jax") is None and index.find("numpy.linalg") is None
    assert index.module_name(str(tmp_path / "src/mypkg/mesh.py")) == "mypkg.mesh"
    assert index.module_name(str(tmp_path / "src/mypkg/__init__.py")) == "mypkg"


def test_a_src_setting_replaces_the_defaults(tmp_path: Path) -> None:
    _tree(tmp_path, {"pyproject.toml": "", "lib/one/__init__.py": "", "src/two/__init__.py": ""})
    index = ModuleIndex(layout_for(str(tmp_path), src=["lib"]))
    assert index.find("one") is not None and index.find("two") is None


def test_namespace_packages_and_python_precedence(tmp_path: Path) -> None:
    _tree(tmp_path, {"pyproject.toml": "", "ns/inner/mod.py": "", "both.py": "", "both/x.py": "",
                     "pkg/__init__.py": "", "pkg.py": ""})
    index = ModuleIndex(layout_for(str(tmp_path)))
    ns = index.find("ns")
    assert ns is not None and ns.path is None and ns.is_package
    assert index.find("ns.inner.mod").path == str(tmp_path / "ns/inner/mod.py")
    # A module file wins over a directory without __init__.py; a package over a module.
    assert index.find("both").path == str(tmp_path / "both.py") and index.find("both.x") is None
    assert index.find("pkg").path == str(tmp_path / "pkg/__init__.py")


def test_relative_imports(tmp_path: Path) -> None:
    _tree(tmp_path, {"pyproject.toml": "", "a/__init__.py": "", "a/b/__init__.py": "", "a/b/c.py": ""})
    index = ModuleIndex(layout_for(str(tmp_path)))
    c, b = index.find("a.b.c"), index.find("a.b")
    assert index.resolve_relative(c, 1, None) == "a.b"
    assert index.resolve_relative(c, 1, "d") == "a.b.d"
    assert index.resolve_relative(c, 2, "x") == "a.x"
    assert index.resolve_relative(b, 1, "c") == "a.b.c"  # a package's own level
    assert index.resolve_relative(c, 2, None) == "a"
    # Above the top-level package: Python raises "attempted relative import beyond
    # top-level package" (importlib._bootstrap._resolve_name).
    assert index.resolve_relative(c, 3, "top") is None
    assert index.resolve_relative(c, 3, None) is None
    assert index.resolve_relative(c, 4, "x") is None


def test_a_symlinked_package_is_one_file(tmp_path: Path) -> None:
    _tree(tmp_path, {"pyproject.toml": "", "real/__init__.py": "", "real/mesh.py": ""})
    os.symlink(tmp_path / "real", tmp_path / "alias")
    index = ModuleIndex(layout_for(str(tmp_path)))
    assert index.find("alias.mesh").key == index.find("real.mesh").key
