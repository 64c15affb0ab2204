"""The text test of what a project module may export as a device value (imported.py)."""

from __future__ import annotations

from pathlib import Path

from reshard_lint.engine.engine import Engine

TYPES = ("import jax\nimport numpy as np\nfrom jax.sharding import Mesh\n\n"
         "TRAIN = Mesh(np.array(jax.devices()), ('x',))\n\n\n"
         "class RestoreArgs:\n    sharding = None\n")
SYNC = ("import jax\nimport numpy as np\nfrom jax.sharding import Mesh, NamedSharding, PartitionSpec as P\n"
        "from pkg.handlers import {name}\n\n"
        "w = jax.device_put(np.ones(8), NamedSharding({name}, P('x')))\n"
        "h = Mesh(np.array(jax.devices()[:4]), ('x',))\n"
        "r = jax.device_put(w, NamedSharding(h, P()))\n")


def _project(tmp_path: Path, name: str) -> tuple[str, str]:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "types.py").write_text(TYPES)
    # Aliases of a module's attributes, as orbax's pytree_checkpoint_handler.py has them.
    (pkg / "handlers.py").write_text("from pkg import types\n\nRestoreArgs = types.RestoreArgs\nTRAIN = types.TRAIN\n")
    sync = pkg / "sync.py"
    sync.write_text(SYNC.format(name=name))
    return sync.read_text(), str(sync)


def test_an_alias_of_a_class_of_a_module_that_binds_a_mesh_is_not_a_device_value(tmp_path: Path) -> None:
    source, path = _project(tmp_path, "RestoreArgs")
    engine = Engine()
    assert engine.projects.device_imports(source, path)[0] == frozenset()
    assert engine.lint_source(source, path).diagnostics == []


def test_an_alias_of_a_mesh_of_a_module_is_followed(tmp_path: Path) -> None:
    source, path = _project(tmp_path, "TRAIN")
    engine = Engine()
    assert engine.projects.device_imports(source, path)[0] == frozenset({"TRAIN"})
    assert [(d.line, d.code) for d in engine.lint_source(source, path).diagnostics] == [(8, "RSH201")]
