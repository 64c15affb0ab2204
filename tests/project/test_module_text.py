"""What a summary runs of a module (project/module_text.py): every line where it was,
the bodies no importer reaches blanked, and in a class an importer constructs, the long
methods that build nothing replaced by a stand-in that still assigns their attributes."""

from __future__ import annotations

import ast

from reshard_lint.project.module_text import UNKNOWN_NAME, module_level

MODULE = '''import jax
from jax.sharding import Mesh


def unreached(f):
    @staticmethod
    def inner():
        return 1
    return inner


class Pool:
    def __init__(self, n):
        self.mesh = Mesh(jax.devices()[:n], ("x",))

    def resize(self, loads):
        busiest = max(loads)
        if busiest > 2:
            self.mesh, self.size = None, busiest
        self.count += 1
        return busiest

    def build(self, n):
        return Mesh(jax.devices()[:n], ("x",))

    @property
    def size_(self):
        return self.size
'''


def test_lines_stay_where_they_were_and_the_text_parses() -> None:
    body = module_level(MODULE, full=True).body
    assert body.count("\n") == MODULE.count("\n")
    ast.parse(body)  # a blanked body starting with a decorated def leaves no decorator behind
    kept, lines = body.splitlines(), MODULE.splitlines()
    for i in range(lines.index("class Pool:"), len(lines)):
        if lines[i].startswith(("class", "    def", "    @")) or "Mesh(" in lines[i]:
            assert kept[i] == lines[i]


def test_a_long_method_that_builds_nothing_keeps_its_stores_and_returns_an_unknown() -> None:
    body = module_level(MODULE, full=True).body
    line = MODULE.splitlines().index("        busiest = max(loads)")
    # Assigned once there (a tuple), twice by += (the count classes.py keeps): the
    # constructor's mesh is no longer the only assignment.
    assert body.splitlines()[line] == (f"        self.count = self.count = self.mesh = self.size = {UNKNOWN_NAME}; "
                                       f"return {UNKNOWN_NAME}")
    assert "return Mesh(jax.devices()[:n]" in body  # builds devices: runs as written
    assert "        return self.size" in body  # a short method: runs as written
    assert "return inner" in body  # a function an importer may call, as one of its own file's
    assert "return inner" not in module_level(MODULE, full=False).body  # module-level code does not reach it
