"""A module's interface (project/interface.py): the hash that decides whether the files
importing it are analysed again. Equal only where no importer can see the difference."""

from __future__ import annotations

import pytest

from reshard_lint.project.interface import interface_of

MODULE = '''import jax
import numpy as np
from jax.sharding import Mesh


def rollout_devices(n):
    return jax.devices()[:n]


TRAIN = Mesh(np.array(jax.devices()), ("x",))
ROLLOUT = Mesh(np.array(rollout_devices(2)), ("x",))


def unused_helper(x):
    y = x + 1
    return y


class Trainer:
    def step(self, x):
        return x
'''


def interface(text: str) -> str:
    return interface_of(text, "")


@pytest.mark.parametrize("old,new", [
    ("y = x + 1", "y = x * 2 + 1"),  # a function module-level code never calls
    ("    return y\n", "    return y  # why\n"),
    ("    return x\n", "    y = x\n    return y\n"),  # more lines after every module-level one
    ("class Trainer:\n    def step(self, x):\n        return x\n",  # a class module-level code never names
     "class Trainer:\n    def step(self, x):\n        return x + 1\n"),
])
def test_edits_no_importer_can_see_keep_the_interface(old: str, new: str) -> None:
    assert old in MODULE
    assert interface(MODULE.replace(old, new)) == interface(MODULE)


@pytest.mark.parametrize("old,new", [
    ('ROLLOUT = Mesh(np.array(rollout_devices(2)), ("x",))', 'ROLLOUT = Mesh(np.array(rollout_devices(4)), ("x",))'),
    ("return jax.devices()[:n]", "return jax.devices()[n:]"),  # called by module-level code
    ("    y = x + 1\n", "    y = x + 1\n    z = 2\n"),  # moves the class: a line an importer may name
    ("import jax\n", "# a comment\nimport jax\n"),  # moves every mesh
    ("    y = x + 1\n", "    global TRAIN\n"),  # TRAIN may be rebound: not exported
    ("    y = x + 1\n", "    import mypkg.other as y\n"),  # the gate reads import lines anywhere
    ("TRAIN = Mesh(", "TRAIN = (Mesh("),  # no longer parses
])
def test_edits_an_importer_may_see_change_it(old: str, new: str) -> None:
    assert old in MODULE
    assert interface(MODULE.replace(old, new)) != interface(MODULE)


def test_a_class_module_level_code_names_counts_by_what_it_runs() -> None:
    # Its short methods count whole; a long one that builds nothing counts by the
    # attributes it assigns (module_text.py runs a stand-in for it).
    reached = MODULE + "\nT = Trainer()\n"
    assert interface(reached.replace("        return x\n", "        return x + 1\n")) != interface(reached)
    long = reached.replace("        return x\n", "        a = x\n        b = a\n        c = b\n        d = c\n        return d\n")
    assert interface(long.replace("c = b", "c = b + 1")) == interface(long)
    assert interface(long.replace("c = b", "self.mesh = b")) != interface(long)


def test_the_gate_part_alone_ignores_what_only_a_summary_reads() -> None:
    # An importer whose result read only the gate's text tests of the module (it was never
    # summarised for it) keeps its result through an edit of a function module-level code
    # calls; one that used the summary does not.
    edited = MODULE.replace("return jax.devices()[:n]", "return jax.devices()[n:]")
    assert interface_of(edited, None) == interface_of(MODULE, None)
    assert interface_of(edited, "") != interface_of(MODULE, "")


def test_the_full_summary_part_covers_the_functions_importers_call() -> None:
    # An importer that called rollout_devices() read its body: the full summary's part
    # ("F...") changes with it, and with any other function's an importer may call, as a
    # function of its own file; the module-level part ("") only with what module-level
    # code reaches.
    full = "F"
    called = MODULE.replace("return jax.devices()[:n]", "return jax.devices()[::-1][:n]")
    helper = MODULE.replace("y = x + 1", "y = x * 2 + 1")
    assert interface_of(called, full) != interface_of(MODULE, full)
    assert interface_of(helper, full) != interface_of(MODULE, full)
    assert interface_of(helper, "") == interface_of(MODULE, "")
    assert interface_of(MODULE, full) != interface_of(MODULE, "")
