"""The project layer reads other modules from Python's tree, not their text
(project/module_tree.py, module_scan.py, defs.py): a line in column 0 inside a string
stays in its function or block, and a word in a comment is no code. Real subprocesses."""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import run, write

MAIN = """\
import numpy as np
import jax
from jax.sharding import NamedSharding, PartitionSpec as P
from pkg.meshes import {train}, {rollout}

x = jax.device_put(np.zeros(8), NamedSharding({train_use}, P("x")))
y = jax.device_put(x, NamedSharding({rollout_use}, P("x")))
"""
# Functions whose bodies hold a string with a line in column 0 before they build a mesh:
# the text reading ended each body at that line and did not follow them.
FUNCTIONS = '''\
import jax
import numpy as np
from jax.sharding import Mesh


def make_train():
    usage = """
train on every device
"""
    return Mesh(np.array(jax.devices()), ("x",))


def make_rollout():
    usage = """
roll out on the first four
"""
    return Mesh(np.array(jax.devices()[:4]), ("x",))
'''


def _findings(root: Path) -> list[str]:
    r = run("check", "--isolated", "--format", "concise", cwd=root)
    assert r.returncode in (0, 1), r.stderr
    return [line.split(" ", 2)[0] + " " + line.split(" ", 2)[1] for line in r.stdout.splitlines() if " RSH" in line]


def test_a_function_with_a_column_0_line_in_a_string_is_followed(project: Path) -> None:
    write(project, "pkg/__init__.py", "")
    write(project, "pkg/meshes.py", FUNCTIONS)
    write(project, "main.py", MAIN.format(train="make_train", rollout="make_rollout",
                                          train_use="make_train()", rollout_use="make_rollout()"))
    assert _findings(project) == ["main.py:7:5: RSH201"]


GUARDED = '''\
import jax
import numpy as np
from jax.sharding import Mesh

{header}
    NOTE = """
column 0 in a string
"""
    TRAIN = Mesh(np.array(jax.devices()), ("x",))
    ROLLOUT = Mesh(np.array(jax.devices()[:4]), ("x",))
{tail}
'''


@pytest.mark.parametrize("header, tail", [
    ("if jax.device_count() >= 4:", ""),
    ("try:", "except ImportError:\n    pass"),
])
def test_a_binding_in_a_module_level_block_after_a_column_0_line_counts(project: Path, header: str,
                                                                          tail: str) -> None:
    # The file names no device of its own: only the imported meshes get it analysed.
    write(project, "pkg/__init__.py", "")
    write(project, "pkg/meshes.py", GUARDED.format(header=header, tail=tail))
    write(project, "main.py", MAIN.format(train="TRAIN", rollout="ROLLOUT", train_use="TRAIN",
                                          rollout_use="ROLLOUT"))
    assert _findings(project) == ["main.py:7:5: RSH201"]


def test_a_device_word_in_a_comment_is_not_what_importers_see(project: Path) -> None:
    # util.py binds a number; its comment says "mesh". An edit of the comment changes
    # nothing an importer reads of the module (its interface): the importer's cached
    # result holds, where the text reading took the comment for the value.
    write(project, "util.py", "SCALE = 2  # the mesh is built elsewhere\n")
    write(project, "user.py", "from util import SCALE\nprint(SCALE)\n")
    first = run("check", "-v", cwd=project)
    assert first.returncode == 0, first.stderr
    write(project, "util.py", "SCALE = 2  # the Mesh and its jax.devices() are built elsewhere\n")
    again = run("check", "-v", cwd=project)
    assert again.returncode == 0, again.stderr
    assert "1 served from the cache, 1 analysed" in again.stderr
