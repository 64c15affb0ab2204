"""The text test says yes wherever the ast gate does: RSH104's path, the one that needs
no mesh, sharding or transfer word, spelled every way the gate accepts it."""

from __future__ import annotations

import ast

import pytest

from reshard_lint.stages.gate import decide, gate_facts
from reshard_lint.stages.prefilter import prefilter

_HEAD = "import jax\nname = 'tpu:3'\n"
_ID = "i = int(name.split(':')[1])\n"

# Each is a list fresh from devices()/local_devices() indexed by a device id: the gate
# says yes to all of them, so the text test must.
FRESH_INDEXED = {
    "direct": _ID + "d = jax.devices()[i]\n",
    "local": _ID + "d = jax.local_devices()[i]\n",
    "negative literal": "d = jax.devices()[-1]\nk = d.id\n",
    "backend argument": _ID + "d = jax.devices('cpu')[i]\n",
    "nested call argument": _ID + "d = jax.devices(jax.default_backend())[i]\n",
    "parenthesized call": _ID + "d = (jax.devices())[i]\n",
    "spaced": _ID + "d = jax .devices ( ) [ i ]\n",
    "across lines": _ID + "d = (jax.devices(\n    )  # all of them\n    [i])\n",
    "bound": _ID + "devs = jax.devices()\nd = devs[i]\n",
    "bound annotated": _ID + "devs: list = jax.devices()\nd = devs[i]\n",
    "bound in parentheses": _ID + "devs = (\n    jax.devices()\n)\nd = devs [i]\n",
    "bound after a semicolon": _ID + "x = 1; devs = jax.local_devices()\nd = devs[i]\n",
    "bound in a function": _ID + "def f():\n    devs = jax.devices()\n    return devs[i]\n",
    "imported bare": "from jax import devices\n" + _ID + "d = devices()[i]\n",
    "imported as": "from jax import devices as all_devices\n" + _ID + "d = all_devices()[i]\n",
    "assigned alias": _ID + "get = jax.devices\nd = get()[i]\n",
    "assigned alias commented": _ID + "get = jax.local_devices  # the host's\nd = get()[i]\n",
    "string with a parenthesis": _ID + "d = jax.devices(')')[i]\n",
    "id attribute": "for x in jax.devices():\n    d = jax.devices()[x.id]\n",
}

# Look-alikes the text test drops without parsing: literal positions, helpers whose name
# ends in "devices", device ids read but no fresh list indexed by one.
DROPPED = {
    "literal position": _ID + "d = jax.devices()[0]\n",
    "bound, literal position": _ID + "devs = jax.devices()\nd = devs[0]\n",
    "skip_on_devices": _ID + "@jtu.skip_on_devices('tpu')\ndef test(x):\n    return x[i]\n",
    "ids listed": "ids = [d.id for d in jax.devices()]\nprint(ids[1:])\n",
    "a comparison, not a binding": _ID + "same = devs == jax.devices()\nprint(same)\n",
}


@pytest.mark.parametrize("source", FRESH_INDEXED.values(), ids=FRESH_INDEXED.keys())
def test_text_test_admits_every_fresh_list_indexed(source: str) -> None:
    source = _HEAD + source
    assert decide(gate_facts(ast.parse(source)))
    assert prefilter(source)


@pytest.mark.parametrize("source", DROPPED.values(), ids=DROPPED.keys())
def test_text_test_drops_literal_positions(source: str) -> None:
    source = _HEAD + source
    assert not decide(gate_facts(ast.parse(source)))
    assert not prefilter(source)


def test_mesh_words_pass_without_an_index() -> None:
    # Any other path of the gate is left to the gate: the text only needs its word.
    assert prefilter(_HEAD + "m = jax.make_mesh((8,), ('x',))\n")
    assert prefilter(_HEAD + "y = jax.device_put(x, jax.devices()[0])\n")
    assert not prefilter("import numpy as np\nx = np.arange(8)[::-1]\nname.split(':')\n")
