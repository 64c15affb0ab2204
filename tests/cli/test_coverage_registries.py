"""A dict a module's body files its mesh builders into (``@register("train")``), read by an
importer: known where nothing but that module body can file into it, unknown wherever any
other code could (project/registries.py), as a real ``reshard-lint coverage`` and ``check``.

The values were checked under JAX on 8 CPU devices: with meshes.py alone, MESHES["train"]()
is on devices 0-3 and MESHES["rollout"]() on 4-7; with a plugin that files "train" again,
MESHES["train"]() is on 4-7."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .conftest import run, write

_REGISTRY = '''import jax
import numpy as np
from jax.sharding import Mesh

MESHES = {}


def register(name):
    def decorate(fn):
        MESHES[name] = fn
        return fn
    return decorate


@register("train")
def train_mesh():
    return Mesh(np.array(jax.devices()[:4]), ("x",))


@register("rollout")
def rollout_mesh():
    return Mesh(np.array(jax.devices()[4:]), ("x",))
'''

_MAIN = '''import jax
import numpy as np
from jax.sharding import NamedSharding, PartitionSpec as P

import pkg.plugin
from pkg.meshes import MESHES, train_mesh

a = jax.device_put(np.zeros(8), NamedSharding(train_mesh(), P("x")))
b = jax.device_put(a, NamedSharding(MESHES["train"](), P()))
c = jax.device_put(a, NamedSharding(MESHES["rollout"](), P()))
'''

_OTHER_MESH = '''import jax
import numpy as np
from jax.sharding import Mesh

'''

# Other code that files into MESHES, or could: each leaves the items unknown.
_UNSEALING = {
    # A plugin, imported first, files its own "train" over meshes.py's.
    "plugin-decorator": ("", _OTHER_MESH + 'from pkg.meshes import register\n\n\n@register("train")\n'
                         'def other_mesh():\n    return Mesh(np.array(jax.devices()[4:]), ("x",))\n'),
    "plugin-store": ("", _OTHER_MESH + 'from pkg.meshes import MESHES\n\n'
                     'MESHES["train"] = lambda: Mesh(np.array(jax.devices()[4:]), ("x",))\n'),
    "plugin-alias": ("", _OTHER_MESH + 'from pkg.meshes import MESHES as TABLE\n\n'
                     'TABLE["train"] = lambda: Mesh(np.array(jax.devices()[4:]), ("x",))\n'),
    "plugin-attribute": ("", _OTHER_MESH + 'import pkg.meshes as m\n\n'
                         'm.MESHES["train"] = lambda: Mesh(np.array(jax.devices()[4:]), ("x",))\n'),
    "plugin-update": ("", _OTHER_MESH + 'from pkg.meshes import MESHES\n\n'
                      'MESHES.update(train=lambda: Mesh(np.array(jax.devices()[4:]), ("x",)))\n'),
    # meshes.py's own function files when another module calls it.
    "function-files-later": ('\n\ndef add(name, fn):\n    register(name)(fn)\n',
                             _OTHER_MESH + 'from pkg.meshes import add\n\n'
                             'add("train", lambda: Mesh(np.array(jax.devices()[4:]), ("x",)))\n'),
    # meshes.py keeps its decorator where anything may call it later.
    "filer-kept": ('\n\nLATER = register\n', _OTHER_MESH + 'import pkg.meshes\n\n'
                   'pkg.meshes.LATER("train")(lambda: Mesh(np.array(jax.devices()[4:]), ("x",)))\n'),
}


def _sites(root: Path, path: str) -> dict[int, tuple[str, str]]:
    r = run("coverage", "--isolated", "--sites", "--format", "json", cwd=root)
    assert r.returncode == 0, r.stderr
    return {s["line"]: (s["verdict"], s["detail"]) for s in json.loads(r.stdout)["site_list"] if s["path"] == path}


def test_a_registry_only_its_module_body_files_into_is_read_by_importers(project: Path) -> None:
    write(project, "pkg/__init__.py", "")
    write(project, "pkg/meshes.py", _REGISTRY)
    write(project, "pkg/plugin.py", "")
    write(project, "main.py", _MAIN)
    sites = _sites(project, "main.py")
    assert sites[9][0] == "same_devices"
    assert sites[10][0] == "crossing" and sites[10][1].startswith("RSH201 ")
    r = run("check", "--isolated", "--no-cache", "--format", "concise", ".", cwd=project)
    assert [line.split(" ")[:2] for line in r.stdout.splitlines() if "RSH" in line] == [["main.py:10:5:", "RSH201"]]


@pytest.mark.parametrize("meshes_tail,plugin", list(_UNSEALING.values()), ids=list(_UNSEALING))
def test_a_registry_other_code_may_file_into_is_not_read(project: Path, meshes_tail: str, plugin: str) -> None:
    write(project, "pkg/__init__.py", "")
    write(project, "pkg/meshes.py", _REGISTRY + meshes_tail)
    write(project, "pkg/plugin.py", plugin)
    write(project, "main.py", _MAIN)
    sites = _sites(project, "main.py")
    assert sites[9] == ("unresolved", "a result of a call the analysis does not follow")
    assert sites[10] == ("unresolved", "a result of a call the analysis does not follow")
    r = run("check", "--isolated", "--no-cache", ".", cwd=project)
    assert "RSH" not in r.stdout, r.stdout


# Spellings of the dict's one binding and of its stores: an importer that names nothing of
# meshes.py but the dict passes the gate by the calls of its items (gate_facts: an element
# of an imported name called), once the text test (registries.may_file_into) let the
# spelling through to Python's tree, which says "registry". Until the gate counted such
# calls, `coverage` said "crossing" at line 8 and `check` said nothing.
_SPELLINGS = {
    "plain": ("MESHES = {}", "MESHES[name] = fn"),
    "annotated": ("MESHES: dict = {}", "MESHES[name] = fn"),
    "parenthesized": ("(MESHES) = {}", "MESHES [name] = fn"),
    "after-a-semicolon": ("TABLES = 1; MESHES = {}", "MESHES  \\\n            [name] = fn"),
    "comment-before-the-bracket": ("MESHES = {}", "(MESHES  # by name\n         [name]) = fn"),
}

_ONLY_THE_DICT = '''import jax
import numpy as np
from jax.sharding import NamedSharding, PartitionSpec as P

from pkg.meshes import MESHES

a = jax.device_put(np.zeros(8), NamedSharding(MESHES["train"](), P("x")))
b = jax.device_put(a, NamedSharding(MESHES["rollout"](), P()))
'''


@pytest.mark.parametrize("binding,store", list(_SPELLINGS.values()), ids=list(_SPELLINGS))
def test_an_importer_of_the_registry_alone_is_checked_whatever_its_spelling(
        project: Path, binding: str, store: str) -> None:
    write(project, "pkg/__init__.py", "")
    write(project, "pkg/meshes.py", _REGISTRY.replace("MESHES = {}", binding).replace("MESHES[name] = fn", store))
    write(project, "main.py", _ONLY_THE_DICT)
    r = run("check", "--isolated", "--no-cache", "--format", "concise", ".", cwd=project)
    assert [line.split(" ")[:2] for line in r.stdout.splitlines() if "RSH" in line] == [["main.py:8:5:", "RSH201"]]
