"""The linter's shard-index model against JAX's own ``devices_indices_map``.

RSH202 decides what a reshard moves from each device's piece of the array
(reshard_lint/analysis/shard_indices.py). Here JAX itself, in a child process with 16
CPU devices, computes ``NamedSharding(Mesh(grid, names), P(...)).devices_indices_map``
for a few hundred random meshes (shapes, axis names, device permutations) and specs
(split, tuple, replicated and trailing entries), and the model must give every device
the same piece, and the same set of devices receiving bytes between two of them.
"""

from __future__ import annotations

import itertools
import json
import random
import subprocess
import sys
from fractions import Fraction

import pytest

from reshard_lint.analysis.devarray import DevArr
from reshard_lint.analysis.shard_indices import pieces, receiving

pytest.importorskip("jax")

N = 16
SHAPES = [(16,), (2, 8), (4, 4), (8, 2), (2, 2, 4), (4, 2, 2), (2, 2, 2, 2), (1, 16), (2, 1, 8)]
NAMES = "abcd"


def _cases(seed: int = 0, count: int = 300) -> list[dict]:
    rnd = random.Random(seed)
    out = []
    for _ in range(count):
        shape = rnd.choice(SHAPES)
        names = list(NAMES[:len(shape)])
        ids = list(range(N))
        if rnd.random() < 0.8:
            rnd.shuffle(ids)
        axes = names[:]
        rnd.shuffle(axes)
        entries: list[list[str]] = []
        for _dim in range(rnd.randint(0, 3)):
            take = rnd.randint(0, min(2, len(axes)))
            entries.append([axes.pop() for _ in range(take)])
        out.append({"shape": list(shape), "names": names, "ids": ids, "entries": entries,
                    "array": [32] * max(len(entries), 1)})
    return out


_CHILD = r"""
import json, sys
import jax
jax.config.update("jax_num_cpu_devices", %d)
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
devs = {d.id: d for d in jax.devices()}
out = []
for c in json.load(sys.stdin):
    grid = np.array([devs[i] for i in c["ids"]]).reshape(c["shape"])
    spec = P(*[tuple(e) if len(e) > 1 else (e[0] if e else None) for e in c["entries"]])
    m = NamedSharding(Mesh(grid, tuple(c["names"])), spec).devices_indices_map(tuple(c["array"]))
    out.append({str(d.id): [list(s.indices(n)[:2]) for s, n in zip(idx, c["array"])] for d, idx in m.items()})
json.dump(out, sys.stdout)
""" % N


@pytest.fixture(scope="module")
def observed() -> tuple[list[dict], list[dict]]:
    cases = _cases()
    run = subprocess.run([sys.executable, "-c", _CHILD], input=json.dumps(cases), capture_output=True,
                         text=True, timeout=300, check=True)
    return cases, json.loads(run.stdout)


def _model(c: dict) -> dict:
    grid = DevArr(tuple(c["ids"]), tuple(c["shape"]))
    got = pieces(grid, c["names"], tuple(tuple(e) for e in c["entries"]))
    assert got is not None
    return got


def _as_fractions(c: dict, index: dict) -> dict:
    return {int(d): tuple((Fraction(a, n), Fraction(b, n)) for (a, b), n in zip(sl, c["array"]))
            for d, sl in index.items()}


def _model_fractions(c: dict, got: dict) -> dict:
    dims = len(c["array"])
    out = {}
    for d, piece in got.items():
        padded = list(piece) + [(0, 1)] * (dims - len(piece))
        out[d] = tuple((Fraction(b, n), Fraction(b + 1, n)) for b, n in padded)
    return out


def test_every_device_holds_the_piece_jax_gives_it(observed) -> None:
    cases, maps = observed
    for c, index in zip(cases, maps):
        assert _model_fractions(c, _model(c)) == _as_fractions(c, index), c


def test_the_devices_that_receive_bytes_agree_with_jax(observed) -> None:
    """Between any two of the cases (same array shape): the devices whose target piece is
    not inside the piece they hold, by JAX's maps and by the model's."""
    cases, maps = observed
    checked = 0
    for (i, a), (j, b) in itertools.islice(itertools.permutations(enumerate(cases), 2), 4000):
        if a["array"] != b["array"]:
            continue
        held, need = _as_fractions(a, maps[i]), _as_fractions(b, maps[j])
        by_jax = {d for d in need if not all(h0 <= n0 and n1 <= h1
                                              for (n0, n1), (h0, h1) in zip(need[d], held[d]))}
        assert receiving(_model(a), _model(b)) == by_jax, (a, b)
        checked += 1
    assert checked > 500


def test_a_spec_that_does_not_fit_the_mesh_is_unknown() -> None:
    grid = DevArr(tuple(range(8)), (2, 4))
    assert pieces(grid, ("a", "b"), (("c",),)) is None
    assert pieces(grid, ("a", "b"), (("a",), ("a",))) is None
    assert pieces(grid, ("a",), ()) is None
