"""A 100-module project for the language server's latency: the generated 2,250-line
training module (lsp_latency.document) as ``proj/train.py``, 96 small modules, a module
of meshes that train.py imports, and dependents that import train.py and move an array
onto its serving mesh. An edit of train.py is timed to its own diagnostics, and a second
edit, which makes the serving mesh the full one, must make the server re-publish a
dependent without its finding (the dependents are open documents, as in an editor).
"""

from __future__ import annotations

from pathlib import Path

MODULES = 100
SMALL = MODULES - 4  # train.py, meshes.py, two dependents

_SMALL = '''\
"""Helper module {i} of the generated project."""
import jax
import jax.numpy as jnp

from proj import meshes

SCALE_{i} = {i}


def helper_{i}(x):
    y = jnp.tanh(x) * SCALE_{i}
    return jax.lax.stop_gradient(y) + x


def mesh_size_{i}():
    return meshes.DATA.size
'''

_MESHES = '''\
"""The project's meshes."""
import jax
import numpy as np
from jax.sharding import Mesh

DATA = Mesh(np.array(jax.devices()), ("data",))
'''

SERVE_LINE = "SERVE = Mesh(np.array(jax.devices()[:4]), ('x',))\n"
SERVE_FIXED = "SERVE = Mesh(np.array(jax.devices()), ('x',))\n"

_DEPENDENT = '''\
"""Serves the model trained in proj.train."""
import jax
import numpy as np
from jax.sharding import NamedSharding, PartitionSpec as P

from proj import meshes, train


def serve_{i}(batch):
    acts = jax.device_put(batch, NamedSharding(meshes.DATA, P("data")))
    return jax.device_put(acts, NamedSharding(train.SERVE, P("x")))
'''


def write(root: Path, document: str) -> tuple[Path, list[Path]]:
    """Write the project under ``root``; (train.py, the dependents)."""
    pkg = root / "proj"
    pkg.mkdir(parents=True, exist_ok=True)
    (root / "pyproject.toml").write_text('[project]\nname = "proj"\nversion = "0"\n')
    (pkg / "__init__.py").write_text("")
    (pkg / "meshes.py").write_text(_MESHES)
    for i in range(SMALL):
        (pkg / f"mod_{i}.py").write_text(_SMALL.format(i=i))
    imports = "".join(f"from proj.mod_{i} import helper_{i}\n" for i in range(0, SMALL, 8))
    train = pkg / "train.py"
    train.write_text(with_imports(document, imports + "from proj import meshes\n\n" + SERVE_LINE))
    dependents = []
    for i in range(2):
        dep = pkg / f"serve_{i}.py"
        dep.write_text(_DEPENDENT.format(i=i))
        dependents.append(dep)
    return train, dependents


def with_imports(document: str, block: str) -> str:
    """``document`` with ``block`` after its import lines."""
    marker = "from jax.sharding import Mesh, NamedSharding, PartitionSpec as P\n"
    assert marker in document
    return document.replace(marker, marker + block, 1)
