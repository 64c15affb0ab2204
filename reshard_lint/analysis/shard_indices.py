"""Which piece of an array each device holds: JAX's ``devices_indices_map`` on model meshes.

A ``NamedSharding(mesh, P(...))`` gives every device one block per array dimension: the
dimension is split into as many blocks as the product of the sizes of the mesh axes its
spec entry names, and the device's block is its coordinate along those axes, the first
axis major (``P(('a', 'b'))``: ``block = a * size_b + b``); axes the spec does not name
replicate. Comparing two shardings device by device says which devices must receive
bytes: a device keeps its piece when the target's block lies inside the one it holds.
That, not whether two device lists are in the same order, is what a reshard moves
(jax/_src/dispatch.py ``_different_device_order_reshard``: the shards are relabelled onto
the target's order, then one jitted copy moves whatever pieces differ).

Everything here reads literal axis names (specs: ``partition.spec_entries``); anything
else is unknown (None).
The index computation is checked against JAX's own ``devices_indices_map`` on many meshes
and specs (tests/platforms/test_shard_indices.py).
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction
from typing import Optional, Sequence

from .devarray import DevArr
from .values import ConstVal, SeqVal, Value

# Per array dimension, the mesh axes that split it (empty: the dimension is whole).
Entries = tuple[tuple[str, ...], ...]
# Per array dimension, (block, blocks): the device's piece is [block/blocks, (block+1)/blocks).
Piece = tuple[tuple[int, int], ...]


def names_of(v: Value) -> Optional[tuple[str, ...]]:
    """Axis names from an evaluated ``axis_names`` argument: a string or a sequence of them."""
    if isinstance(v, ConstVal) and isinstance(v.value, str):
        return (v.value,)
    if isinstance(v, SeqVal) and v.kind in ("tuple", "list"):
        out = []
        for item in v.items:
            if not (isinstance(item, ConstVal) and isinstance(item.value, str)):
                return None
            out.append(item.value)
        return tuple(out)
    return None


def pieces(grid: DevArr, names: Sequence[str], entries: Entries) -> Optional[dict[int, Piece]]:
    """Each device's piece under ``NamedSharding(Mesh(grid, names), P(*entries))``; None
    when the spec does not fit the mesh (an axis it lacks, an axis used twice)."""
    if grid.ndim != len(names) or len(set(names)) != len(names):
        return None
    used = [a for e in entries for a in e]
    if len(set(used)) != len(used) or not set(used) <= set(names):
        return None
    size = dict(zip(names, grid.shape))
    out: dict[int, Piece] = {}
    for position, device in zip(itertools.product(*(range(n) for n in grid.shape)), grid.flat):
        coord = dict(zip(names, position))
        piece = []
        for axes in entries:
            block = 0
            for a in axes:
                block = block * size[a] + coord[a]
            piece.append((block, math.prod(size[a] for a in axes)))
        out[device] = tuple(piece)
    return out


def inside(need: Piece, held: Piece) -> bool:
    """The needed piece lies within the held one, dimension by dimension (an array dim
    that divides evenly, as the blocks of a spec that fits require)."""
    for i in range(max(len(need), len(held))):
        b, n = need[i] if i < len(need) else (0, 1)
        c, m = held[i] if i < len(held) else (0, 1)
        if Fraction(b, n) < Fraction(c, m) or Fraction(b + 1, n) > Fraction(c + 1, m):
            return False
    return True


def receiving(held: dict[int, Piece], need: dict[int, Piece]) -> Optional[set[int]]:
    """The devices that must receive bytes to go from ``held`` to ``need``; None when the
    two are not on one set of devices."""
    if set(held) != set(need):
        return None
    return {d for d, p in need.items() if not inside(p, held[d])}
