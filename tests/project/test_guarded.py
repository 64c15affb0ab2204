"""Names bound inside module-level if/try/with blocks (project/guarded.py): the gate's
text scan and the summary's tree read the same statements, so `check` and the engine
find the same things."""

from __future__ import annotations

import ast

from reshard_lint.project.guarded import guarded_names, guarded_text
from reshard_lint.project.imported import any_value, bindings
from reshard_lint.project.interface import interface_of

MODULE = '''import jax
if a:
    X = 1
    if b:
        NESTED = 2
    for i in r:
        LOOPED = 3
elif c:
    Y = (1,
         2)
else:
    Z: int = 3
try:
    T = 1
except E:
    H = 2
finally:
    F = 3
with m as w:
    W = 1
if q: ONE_LINE = 1
def f():
    LOCAL = 1
if (a and
    b == 1):
    MULTI_LINE_HEADER = 1
    a = 1; AFTER_SEMICOLON = 2
'''

READ = ["F", "H", "MULTI_LINE_HEADER", "T", "W", "X", "Y", "Z", "a"]


def test_the_text_and_the_tree_read_the_same_statements() -> None:
    assert sorted(guarded_names(ast.parse(MODULE), MODULE.split("\n"))) == READ
    assert sorted(bindings(MODULE)) == READ  # the gate's: column 0 (none here) and guarded
    assert "NESTED" in guarded_text(MODULE)  # indented under its own header: not read


def test_a_guarded_mesh_is_a_device_value_to_the_gate_and_to_the_interface() -> None:
    plain = "import jax\nif jax.device_count() >= 4:\n    n = 2\n"
    guarded = "import jax\nif jax.device_count() >= 4:\n    ROLLOUT = jax.make_mesh((2,), ('x',))\n"
    assert not any_value(plain) and any_value(guarded)
    assert bindings(guarded)["ROLLOUT"] == [" jax.make_mesh((2,), ('x',))"]
    edited = guarded.replace("(2,)", "(4,)")
    assert interface_of(edited, None) != interface_of(guarded, None)
